// BuildPool: a queue and a few threads; see build_pool.hpp.
#include "tunekit/engine/build_pool.hpp"

#include <algorithm>

namespace tunekit {

BuildPool::BuildPool(std::size_t threads) {
  workers_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
}

BuildPool::~BuildPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void BuildPool::submit(std::function<void()> job, std::size_t tag) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back({std::move(job), tag});
  }
  wake_.notify_one();
}

void BuildPool::finish(std::size_t tag) {
  std::unique_lock lock(mutex_);
  const auto queued =
      std::find_if(queue_.begin(), queue_.end(), [&](const Job& job) { return job.tag == tag; });
  if (queued != queue_.end()) {
    auto job = std::move(queued->run);
    queue_.erase(queued);
    if (queue_.empty() && running_ == 0) idle_.notify_all();
    lock.unlock();
    try {
      job();
    } catch (...) {
      // As on a pool thread: the candidate's own call reports it.
    }
    return;
  }
  finished_.wait(lock, [&] {
    return std::find(running_tags_.begin(), running_tags_.end(), tag) == running_tags_.end();
  });
}

std::vector<std::size_t> BuildPool::cancel_queued() {
  std::vector<std::size_t> tags;
  {
    std::lock_guard lock(mutex_);
    for (const auto& job : queue_) tags.push_back(job.tag);
    queue_.clear();
    if (running_ == 0) idle_.notify_all();
  }
  return tags;
}

void BuildPool::wait_idle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return queue_.empty() && running_ == 0; });
}

void BuildPool::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    auto job = std::move(queue_.front().run);
    const std::size_t tag = queue_.front().tag;
    queue_.pop_front();
    ++running_;
    running_tags_.push_back(tag);
    lock.unlock();
    try {
      job();
    } catch (...) {
      // The candidate's own call reports it (see the class comment).
    }
    job = nullptr;  // its captures go before the pool can be called idle
    lock.lock();
    --running_;
    running_tags_.erase(std::find(running_tags_.begin(), running_tags_.end(), tag));
    finished_.notify_all();
    if (queue_.empty() && running_ == 0) idle_.notify_all();
  }
}

BuildAhead::BuildAhead(std::size_t threads, bool quiet, std::function<void(std::size_t)> prepare)
    : threads_(threads), quiet_(quiet), prepare_(std::move(prepare)) {}

void BuildAhead::plan(const std::vector<std::size_t>& next, bool likely) {
  // A guess is never built: on NVIDIA builds serialise within a process, so each one delays the
  // build of a candidate that is measured (a cold matmul tuning on the H100 built 148 programs
  // for 47 measured, 55 s; without guesses it builds what it measures).
  if (threads_ == 0 || !likely) return;
  if (pool_) {
    for (std::size_t dropped : pool_->cancel_queued()) {
      submitted_.erase(std::lower_bound(submitted_.begin(), submitted_.end(), dropped));
    }
  }
  ahead_ = 0;  // what still runs finishes; the window counts from the new plan
  upcoming_.assign(next.begin(), next.end());
  top_up();
}

void BuildAhead::before_measuring(std::size_t i) {
  if (threads_ == 0) return;
  if (!upcoming_.empty() && upcoming_.front() == i) upcoming_.pop_front();
  const bool submitted = std::binary_search(submitted_.begin(), submitted_.end(), i);
  if (submitted && ahead_ > 0) --ahead_;
  top_up();  // the pool works on the next ones meanwhile
  if (submitted) pool_->finish(i);
  if (quiet_ && pool_) pool_->wait_idle();
}

void BuildAhead::settle() {
  upcoming_.clear();
  ahead_ = 0;
  if (!pool_) return;
  for (std::size_t dropped : pool_->cancel_queued()) {
    submitted_.erase(std::lower_bound(submitted_.begin(), submitted_.end(), dropped));
  }
  pool_->wait_idle();
}

void BuildAhead::top_up() {
  // One per thread: a search that stops early leaves at most that many built for nothing.
  while (ahead_ < threads_ && !upcoming_.empty()) {
    const std::size_t i = upcoming_.front();
    upcoming_.pop_front();
    const auto at = std::lower_bound(submitted_.begin(), submitted_.end(), i);
    if (at != submitted_.end() && *at == i) continue;
    submitted_.insert(at, i);
    ++ahead_;
    if (!pool_) pool_ = std::make_unique<BuildPool>(threads_);
    pool_->submit([this, i] { prepare_(i); }, i);
  }
}

}  // namespace tunekit
