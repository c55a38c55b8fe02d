#include "tunekit/engine/op_tuning_lock.hpp"

#include <thread>
#include <unordered_map>
#include <utility>

#include "tunekit/error.hpp"

namespace tunekit::detail {
namespace {

struct Holder {
  std::thread::id thread;
  std::string op;
};

// Under registry_mutex: each held tuning lock's holder, and the tuning lock each thread waits for.
std::mutex registry_mutex;
std::unordered_map<const std::mutex*, Holder>& holders() {
  static auto& map = *new std::unordered_map<const std::mutex*, Holder>;  // never destroyed
  return map;
}
std::unordered_map<std::thread::id, const std::mutex*>& waits() {
  static auto& map = *new std::unordered_map<std::thread::id, const std::mutex*>;
  return map;
}

}  // namespace

OpTuningLock::OpTuningLock(std::mutex& mutex, const std::string& op) : mutex_(mutex) {
  const auto self = std::this_thread::get_id();
  {
    std::lock_guard lock(registry_mutex);
    // From the lock's holder, along what each holder waits for: back to this thread, a cycle.
    // Checked and recorded under one lock, so that of two threads closing a cycle the second
    // sees the first's wait.
    std::string chain = "the tuning of '" + op + "' is held by a thread";
    const std::mutex* next = &mutex;
    for (std::size_t step = 0; step <= holders().size(); ++step) {
      const auto held = holders().find(next);
      if (held == holders().end()) break;
      if (held->second.thread == self) {
        throw AutotuneError(ErrorKind::runtime,
                            chain +
                                ", which this thread holds: ops whose candidates call each "
                                "other from two threads would wait for each other forever; "
                                "refused instead");
      }
      const auto waiting = waits().find(held->second.thread);
      if (waiting == waits().end()) break;
      next = waiting->second;
      const auto next_held = holders().find(next);
      chain += " waiting for the tuning of '" +
               (next_held == holders().end() ? std::string("?") : next_held->second.op) + "'";
      if (next_held != holders().end() && next_held->second.thread != self) {
        chain += ", held by a thread";
      }
    }
    waits()[self] = &mutex;
  }
  mutex.lock();
  std::lock_guard lock(registry_mutex);
  waits().erase(self);
  holders()[&mutex] = Holder{self, op};
}

OpTuningLock::~OpTuningLock() {
  {
    std::lock_guard lock(registry_mutex);
    holders().erase(&mutex_);
  }
  mutex_.unlock();
}

}  // namespace tunekit::detail
