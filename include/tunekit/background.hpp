// Background tunings (Settings::tuning = TuningMode::background): a Tuner queues the tunings of
// keys that execute() met untuned and runs them, one after another, on a worker thread of its
// own, while calls are served by a provisional candidate (tuner.hpp). This header owns their
// lifetime: what stops them, and when the process or a client goes away.
//
// A background tuning uses the client passed to the execute() that queued it (by reference) and
// copies of that call's inputs. It must end before the client is destroyed. tunekit makes sure of
// it where it can:
//  - At exit (std::exit, or main returning), an atexit handler registered each time a worker
//    starts stops every background tuning and waits for it before any object constructed before
//    that worker started is destroyed: a static or global client, and the static LocalTuners of
//    the ops, are still alive while the tunings end. (Handlers run in the reverse order of
//    registration, interleaved with static destructors.)
//  - cl::Client's destructor stops and waits for the tunings that use it (a client local to
//    main() goes before exit handlers run).
//  - Another client type (a TimingClient of your own) must outlive its tunings, or call
//    stop_background_tunings_using(this) in its destructor, or the program calls
//    stop_background_tunings().
// A stopped tuning ends between two candidates (the candidate being measured finishes first);
// its in-progress record stays in the cache, so the next process resumes it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace tunekit {

/// Stops every background tuning of this process and waits for the running ones; tunings that
/// execute() would queue later are done in the calling thread instead (blocking mode).
void stop_background_tunings() noexcept;

/// Stops the background tunings that use `client` (queued ones are dropped, a running one ends
/// at its next candidate) and waits for them. Other clients' tunings go on.
void stop_background_tunings_using(const void* client) noexcept;

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
  /// `job` must not throw.
  bool push(std::function<void()> job, const void* client);
  /// Waits until no job is queued or running (from a job itself: returns at once).
  void wait_idle();
  /// Drops the queued jobs, stops the running one (at its next candidate) and waits for it; later
  /// pushes are refused. From the worker itself (a job that ends the process): does not wait.
  void stop() noexcept;
  /// Drops the queued jobs of `client` and stops and waits for the running one if it is of
  /// `client`; the others go on.
  void stop_using(const void* client) noexcept;
  /// Raised while the running job must stop: what its TuningRun checks (TuningRun::stop_when).
  const std::atomic<bool>& stop_flag() const noexcept { return stop_; }

 private:
  struct Job {
    std::function<void()> run;
    const void* client;
  };
  void work();
  // Waits (with `lock` held on mutex_) until the running job, if any, has ended.
  void wait_for_running(std::unique_lock<std::mutex>& lock);

  std::mutex mutex_;
  std::condition_variable idle_;
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

}  // namespace detail
}  // namespace tunekit
