// Background tunings: each Tuner's queue and worker, and the process-wide list that stops them
// at exit (see background.hpp for the lifetime rules).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <system_error>
#include <utility>
#include <vector>

#include "tunekit/engine/background_queue.hpp"

namespace tunekit {
namespace detail {
namespace {

/// Every queue of the process (weakly: a Tuner owns its queue).
struct Registry {
  std::mutex mutex;
  std::vector<std::weak_ptr<BackgroundQueue>> queues;
  bool stopped_all = false;  // stop_background_tunings() ran: new queues start stopped
};

Registry& registry() {
  static Registry* const instance = new Registry;  // never destroyed: the exit handler uses it
  return *instance;
}

/// The live queues, each kept alive by the returned pointers while it is stopped.
std::vector<std::shared_ptr<BackgroundQueue>> live_queues(bool stop_all) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (stop_all) r.stopped_all = true;
  std::vector<std::shared_ptr<BackgroundQueue>> live;
  for (const auto& weak : r.queues) {
    if (auto queue = weak.lock()) live.push_back(std::move(queue));
  }
  return live;
}

// At exit: the tunings get background_grace to finish, together, then stop.
void stop_at_exit() {
  const auto deadline = std::chrono::steady_clock::now() + background_grace;
  for (const auto& queue : live_queues(/*stop_all=*/false)) queue->finish_until(deadline);
  stop_background_tunings();
}

}  // namespace

BackgroundQueue::~BackgroundQueue() { stop(); }

bool BackgroundQueue::push(std::function<bool()> job, const void* client) {
  std::thread ended;  // the previous worker, which has left its loop
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return false;
    jobs_.push_back(Job{std::move(job), client, false});
    if (busy_) {  // the running worker takes it, at once if it waits between retries
      wake_.notify_all();
      return true;
    }
    ended = std::move(worker_);
    try {
      worker_ = std::thread([this] { work(); });
    } catch (const std::system_error&) {  // no thread to be had: the caller tunes itself
      jobs_.pop_back();
      return false;
    }
    busy_ = true;
  }
  if (ended.joinable()) ended.join();
  // Registered now, after every object this job may use was constructed (its client): the
  // handler runs before their destructors at exit.
  (void)std::atexit(stop_at_exit);
  return true;
}

bool BackgroundQueue::all_waiting() const {
  return std::all_of(jobs_.begin(), jobs_.end(), [](const Job& job) { return job.waiting; });
}

void BackgroundQueue::work() {
  std::unique_lock lock(mutex_);
  worker_id_ = std::this_thread::get_id();
  while (!jobs_.empty() && !stopped_) {
    if (all_waiting()) {   // every queued job waits for another process: pause, then try again
      idle_.notify_all();  // finish_until() need not wait for them
      wake_.wait_for(lock, retry_interval,
                     [&] { return stopped_ || jobs_.empty() || !all_waiting(); });
      for (Job& job : jobs_) job.waiting = false;
      continue;
    }
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    running_client_ = job.client;
    stop_.store(false);
    lock.unlock();
    if (job.run()) {
      lock.lock();
      if (!stopped_ && !stop_.load()) {  // a stop meant for this job (stop_using) drops it
        job.waiting = true;
        try {
          jobs_.push_back(std::move(job));
        } catch (...) {  // no memory: dropped, its key unfinished (queued again by its next call)
        }
      }
      lock.unlock();
    }
    job.run = nullptr;  // a job that ran for good: its copies of the inputs go outside the lock
    lock.lock();
    running_client_ = nullptr;
    idle_.notify_all();
  }
  busy_ = false;
  worker_id_ = {};
  idle_.notify_all();
}

void BackgroundQueue::wait_for_running(std::unique_lock<std::mutex>& lock) {
  idle_.wait(lock, [this] { return !busy_; });
}

void BackgroundQueue::wait_idle() {
  std::unique_lock lock(mutex_);
  if (worker_id_ == std::this_thread::get_id()) return;
  wait_for_running(lock);
}

void BackgroundQueue::stop() noexcept {
  std::deque<Job> dropped;  // destroyed outside the lock
  std::thread worker;
  {
    std::unique_lock lock(mutex_);
    stopped_ = true;
    stop_.store(true);
    wake_.notify_all();
    dropped.swap(jobs_);
    if (worker_id_ == std::this_thread::get_id()) {  // a job ends the process: cannot wait
      if (worker_.joinable()) worker_.detach();
      return;
    }
    worker = std::move(worker_);
    wait_for_running(lock);
  }
  if (worker.joinable()) worker.join();
}

void BackgroundQueue::stop_using(const void* client) noexcept {
  std::deque<Job> dropped;  // destroyed outside the lock
  std::unique_lock lock(mutex_);
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (it->client == client) {
      dropped.push_back(std::move(*it));
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
  wake_.notify_all();  // a worker pausing for waiting jobs looks at what is left
  if (running_client_ == client && worker_id_ != std::this_thread::get_id()) {
    stop_.store(true);
    idle_.wait(lock, [&] { return running_client_ != client; });
  }
}

void BackgroundQueue::finish_until(std::chrono::steady_clock::time_point deadline,
                                   const void* client) noexcept {
  std::unique_lock lock(mutex_);
  if (worker_id_ == std::this_thread::get_id()) return;  // a job ends the process
  // Jobs waiting for another process (Job::waiting) would only wait out the deadline: done.
  const auto done = [&] {
    if (client == nullptr) return !busy_ || (running_client_ == nullptr && all_waiting());
    return running_client_ != client && std::none_of(jobs_.begin(), jobs_.end(), [&](const Job& j) {
             return j.client == client && !j.waiting;
           });
  };
  idle_.wait_until(lock, deadline, done);
}

void finish_background_tunings_using(const void* client) noexcept {
  const auto deadline = std::chrono::steady_clock::now() + background_grace;
  for (const auto& queue : live_queues(/*stop_all=*/false)) queue->finish_until(deadline, client);
  stop_background_tunings_using(client);
}

std::shared_ptr<BackgroundQueue> make_background_queue() {
  auto queue = std::make_shared<BackgroundQueue>();
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (r.stopped_all) queue->stop();  // nothing runs yet: returns at once
  std::erase_if(r.queues, [](const auto& weak) { return weak.expired(); });
  r.queues.push_back(queue);
  return queue;
}

}  // namespace detail

void stop_background_tunings() noexcept {
  for (const auto& queue : detail::live_queues(/*stop_all=*/true)) queue->stop();
}

void stop_background_tunings_using(const void* client) noexcept {
  for (const auto& queue : detail::live_queues(/*stop_all=*/false)) queue->stop_using(client);
}

}  // namespace tunekit
