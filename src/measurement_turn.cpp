// MeasurementTurn: a first-come, first-served turn per device id; see measurement_turn.hpp.
#include "tunekit/engine/measurement_turn.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace tunekit {

struct MeasurementTurn::Gate {
  std::mutex mutex;
  std::condition_variable changed;
  std::thread::id holder;             // none: free
  std::size_t depth = 0;              // the holder's nested turns
  std::deque<std::thread::id> queue;  // the threads waiting, in the order they asked
};

namespace {

MeasurementTurn::Gate& gate_of(const std::string& device) {
  // Never destroyed: a background tuning may take or give back a turn while the process's
  // static objects are destroyed at its exit (background.hpp). A process sees a few devices.
  static auto* mutex = new std::mutex;
  static auto* gates = new std::map<std::string, std::unique_ptr<MeasurementTurn::Gate>>;
  std::lock_guard lock(*mutex);
  auto& gate = (*gates)[device];
  if (!gate) gate = std::make_unique<MeasurementTurn::Gate>();
  return *gate;
}

}  // namespace

MeasurementTurn::MeasurementTurn(const std::string& device, std::chrono::milliseconds patience) {
  Gate& gate = gate_of(device);
  const auto me = std::this_thread::get_id();
  std::unique_lock lock(gate.mutex);
  if (gate.holder == me) {
    ++gate.depth;
    gate_ = &gate;
    return;
  }
  gate.queue.push_back(me);
  const bool turn = gate.changed.wait_for(
      lock, patience, [&] { return gate.holder == std::thread::id() && gate.queue.front() == me; });
  if (!turn) {
    gate.queue.erase(std::find(gate.queue.begin(), gate.queue.end(), me));
    gate.changed.notify_all();  // the next in line may be free to go now
    return;
  }
  gate.queue.pop_front();
  gate.holder = me;
  gate.depth = 1;
  gate_ = &gate;
}

std::size_t MeasurementTurn::waiting(const std::string& device) {
  Gate& gate = gate_of(device);
  std::lock_guard lock(gate.mutex);
  return gate.queue.size();
}

MeasurementTurn::~MeasurementTurn() {
  if (gate_ == nullptr) return;
  {
    std::lock_guard lock(gate_->mutex);
    if (--gate_->depth > 0) return;
    gate_->holder = std::thread::id();
  }
  gate_->changed.notify_all();
}

}  // namespace tunekit
