// OpTuningLock: one tuning of an op at a time on a device (a Tuner's lock), with the process's
// record of which thread holds which lock and which lock each thread waits for. A candidate of
// op A may call op B, whose tuning another thread holds; if that thread's candidate in turn calls
// A, the two threads would wait for each other forever. The second to wait is refused instead,
// naming the cycle: its candidate fails, its tuning goes on, and the other thread then gets its
// lock. (One thread's own cycle is refused before it locks:
// Tuner::refuse_tuning_within_own_tuning.)
#pragma once

#include <mutex>
#include <string>

namespace tunekit::detail {

class OpTuningLock {
 public:
  /// Locks `mutex` (op `op`'s tuning lock on one device), or throws AutotuneError (runtime)
  /// where the wait would close a cycle of threads waiting for each other's tuning locks.
  OpTuningLock(std::mutex& mutex, const std::string& op);
  ~OpTuningLock();
  OpTuningLock(const OpTuningLock&) = delete;
  OpTuningLock& operator=(const OpTuningLock&) = delete;

 private:
  std::mutex& mutex_;
};

}  // namespace tunekit::detail
