// BackgroundQueue: one Tuner's background tunings (Settings::tuning = TuningMode::background),
// run one after another on a worker thread of its own. What stops them, and when, is said in
// tunekit/background.hpp; src/background.cpp keeps every queue for stop_background_tunings.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "tunekit/background.hpp"

namespace tunekit {

namespace detail {

/// One Tuner's background tunings: jobs run one after another on a worker thread, which ends
/// when the queue is empty (the next push starts another). Thread-safe.
class BackgroundQueue {
 public:
  BackgroundQueue() = default;
  /// Stops (see stop()).
  ~BackgroundQueue();
  BackgroundQueue(const BackgroundQueue&) = delete;
  BackgroundQueue& operator=(const BackgroundQueue&) = delete;

  /// Queues `job`, which uses `client`; false when the queue was stopped (nothing queued).
  /// `job` must not throw. It returns true to run again later (its key is another process's
  /// to tune now): it goes to the back of the queue, and once every queued job waits so, the
  /// worker pauses `retry_interval` (or until a push or a stop) before it tries them again.
  bool push(std::function<bool()> job, const void* client);
  /// Waits until no job is queued or running (from a job itself: returns at once).
  void wait_idle();
  /// Drops the queued jobs, stops the running one (at its next candidate) and waits for it; later
  /// pushes are refused. From the worker itself (a job that ends the process): does not wait.
  void stop() noexcept;
  /// Drops the queued jobs of `client` and stops and waits for the running one if it is of
  /// `client`; the others go on.
  void stop_using(const void* client) noexcept;
  /// Lets the jobs (those of `client`, or all when null) run until none is left or `deadline`
  /// passes, whichever comes first: a process that ends right after its first calls still
  /// decides their keys, or records more of their tunings for the next process to resume. Jobs
  /// waiting for another process (see push) are not waited for.
  void finish_until(std::chrono::steady_clock::time_point deadline,
                    const void* client = nullptr) noexcept;
  /// Raised while the running job must stop: what its TuningRun checks (TuningRun::stop_when).
  const std::atomic<bool>& stop_flag() const noexcept { return stop_; }

  /// How long the worker waits when all its queued jobs are waiting for other processes.
  static constexpr std::chrono::milliseconds retry_interval{100};

 private:
  struct Job {
    std::function<bool()> run;
    const void* client;
    bool waiting = false;  // it asked to run again later, and has not since the last pause
  };
  void work();
  // Whether every queued job is waiting (with mutex_ held; true when none is queued).
  bool all_waiting() const;
  // Waits (with `lock` held on mutex_) until the running job, if any, has ended.
  void wait_for_running(std::unique_lock<std::mutex>& lock);

  std::mutex mutex_;
  std::condition_variable idle_;
  std::condition_variable wake_;  // a worker waiting between retries: a push or a stop
  std::deque<Job> jobs_;
  const void* running_client_ = nullptr;  // the running job's client
  bool busy_ = false;                     // a worker runs (or is about to take a job)
  bool stopped_ = false;
  std::thread::id worker_id_;
  std::thread worker_;
  std::atomic<bool> stop_{false};
};

/// A new queue, known to stop_background_tunings (and so stopped at exit).
std::shared_ptr<BackgroundQueue> make_background_queue();

/// How long the end of a process (its exit, or the destruction of the client its background
/// tunings use) lets them go on before it stops them (BackgroundQueue::finish_until).
inline constexpr std::chrono::seconds background_grace{2};

/// At exit, and from a client's destructor: finish_until(now + background_grace), then stop.
void finish_background_tunings_using(const void* client) noexcept;

}  // namespace detail
}  // namespace tunekit
