// BuildPool: a few threads that prepare candidates (build their OpenCL programs) ahead of the
// tuning thread, which measures them one at a time as before.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tunekit {

/// Runs jobs on `threads` threads in the order they were submitted. A job's exception is
/// dropped: a preparation that fails (a build error) fails again, with its error, when the
/// candidate is called. The destructor drops the jobs not started and waits for running ones,
/// so that jobs may refer to the state of the scope that owns the pool.
class BuildPool {
 public:
  explicit BuildPool(std::size_t threads);
  ~BuildPool();
  BuildPool(const BuildPool&) = delete;
  BuildPool& operator=(const BuildPool&) = delete;

  /// Queues `job`; `tag` names it for cancel_queued().
  void submit(std::function<void()> job, std::size_t tag = 0);
  /// Makes sure the jobs tagged `tag` have run: runs a queued one on this thread, waits for one
  /// that is running.
  void finish(std::size_t tag);
  /// Drops the jobs not started yet; returns their tags.
  std::vector<std::size_t> cancel_queued();
  /// Waits until no job is queued or running.
  void wait_idle();
  std::size_t threads() const noexcept { return workers_.size(); }

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable wake_;  // a job arrived, or stopping
  std::condition_variable idle_;  // the queue emptied and nothing runs
  struct Job {
    std::function<void()> run;
    std::size_t tag;
  };
  std::deque<Job> queue_;
  std::size_t running_ = 0;
  std::vector<std::size_t> running_tags_;
  std::condition_variable finished_;  // a job ended
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

/// What a tuning builds ahead: the candidates it will measure next, in order, prepared on a
/// BuildPool (started at the first submission), at most one per thread ahead of the one measured.
class BuildAhead {
 public:
  /// `prepare(i)` builds candidate i (called on the pool's threads). `quiet`: the device
  /// measures on the host's cores (a CPU device), so no build may run during a measurement.
  BuildAhead(std::size_t threads, bool quiet, std::function<void(std::size_t)> prepare);
  /// The candidates measured next, in order. Replaces the previous plan: its builds not started
  /// are dropped. `likely` false: they only may be measured (annealing's neighbours): ignored,
  /// nothing is built on a guess.
  void plan(const std::vector<std::size_t>& next, bool likely = true);
  /// Called before candidate i is measured: keeps the window full, makes sure i's preparation
  /// (if it was submitted) has run, and when quiet waits until no build runs.
  void before_measuring(std::size_t i);
  /// Drops the builds not started and waits for the running ones: nothing builds during what
  /// follows (the interleaved re-measurement of the best candidates).
  void settle();
  /// How many candidates were submitted to the pool.
  std::size_t submitted() const noexcept { return submitted_.size(); }

 private:
  void top_up();

  std::size_t threads_;
  bool quiet_;
  std::function<void(std::size_t)> prepare_;
  std::deque<std::size_t> upcoming_;
  std::vector<std::size_t> submitted_;  // sorted
  std::size_t ahead_ = 0;               // submitted, not measured yet
  std::unique_ptr<BuildPool> pool_;     // last: its jobs use prepare_
};

}  // namespace tunekit
