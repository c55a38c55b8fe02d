// BackgroundTuning: what a Tuner in background mode (Settings::tuning) adds: its queue of
// tunings (background_queue.hpp), and what serves a key while the key is tuned there: a
// provisional decision, made of the candidates the plan measures first. A key whose tuning
// ended undecided (its client gone, its tuning stopped) is queued again by its next call.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tunekit/detail/insert_only_map.hpp"
#include "tunekit/engine/background_queue.hpp"
#include "tunekit/engine/decision.hpp"
#include "tunekit/engine/tuning_plan.hpp"
#include "tunekit/host_reference.hpp"
#include "tunekit/key.hpp"
#include "tunekit/settings.hpp"

namespace tunekit::detail {

/// How a queued tuning ended: its key decided; not (stopped, or failed for the moment); or to be
/// tried again later, since another process or machine tunes the key now (its lock is busy).
enum class QueuedTuning { decided, undecided, later };

/// A Tuner's background tunings. The tuner serialises the writers (queue, serve_meanwhile,
/// clear) under its decisions mutex; serving() is lock-free.
template <AutotuneKey Key>
class BackgroundTuning {
 public:
  explicit BackgroundTuning(TuningMode mode)
      : queue_(mode == TuningMode::background ? make_background_queue() : nullptr) {}

  /// Whether tunings go to the background (else execute() tunes in the calling thread).
  bool on() const noexcept { return queue_ != nullptr; }

  /// The provisional decision serving `key` while it is tuned, if any.
  const Decision* serving(const Key& key) const noexcept { return provisional_.find(key); }

  /// Whether `key`'s last tuning ended undecided; it is then forgotten as such (the caller
  /// queues it again). Cheap while no tuning ended so.
  bool take_unfinished(const Key& key) {
    return unfinished_->any.load(std::memory_order_relaxed) && unfinished_->take(key);
  }

  /// Queues the tuning of `key` on `client` with copies of `inputs`: `tune(client, copies...)`
  /// runs on the worker thread and returns how it ended (QueuedTuning: `later` runs it again
  /// after the other queued tunings). False when the queue is stopped. A job destroyed without
  /// having decided its key marks the key unfinished (see take_unfinished).
  template <class Client, class Tune, class... Inputs>
  bool queue(const Key& key, Client& client, Tune tune, Inputs&... inputs) {
    auto guard = std::make_shared<UnfinishedGuard>(UnfinishedGuard{unfinished_, key});
    auto job = [guard, &client, tune,
                copies = std::tuple<std::decay_t<Inputs>...>(inputs...)]() mutable noexcept {
      const QueuedTuning end = std::apply([&](auto&... in) { return tune(client, in...); }, copies);
      guard->decided = end == QueuedTuning::decided;
      return end == QueuedTuning::later;
    };
    return queue_->push(std::move(job), &client);
  }

  /// Keeps `provisional` serving `key` (see serving()).
  const Decision* serve_meanwhile(const Key& key, Decision provisional) {
    return provisional_.insert(key, std::move(provisional));
  }

  /// Whether candidate 0 must pass a check before it serves a key of `Set` while the key is
  /// tuned: where the set validates with a HostReference, no candidate, not even the first, is
  /// trusted before it was checked (Tuner::first_candidate_passes). A key whose candidate 0 fails
  /// the check is tuned in the calling thread, as in blocking mode.
  template <class Set>
  static constexpr bool checks_first =
      is_host_reference_v<std::remove_cvref_t<decltype(std::declval<const Set&>().validator())>>;

  /// What serves the calls of `key` while it is tuned in the background: `known` (the winners
  /// of neighbouring keys), then the candidates the plan measures first (measured_first()); the
  /// first of them runs, the others serve a call it fails.
  /// A set that validates serves candidate 0 alone (its reference; with a host reference, once
  /// it passed it: checks_first): a neighbour's winner was
  /// validated on its own key's inputs, never on this key's, and no other candidate has been
  /// checked against the reference yet; where the reference fails a call, the call fails, as it
  /// would in the tuning. `known` is then not asked.
  template <class Set, class Known>
  static Decision provisional_for(const Set& set, const Key& key, Known known,
                                  const SearchSettings& search) {
    std::vector<std::size_t> order{0};
    if constexpr (!Set::validates) {
      order = known();
      std::vector<std::optional<CandidatePriority>> priorities(set.size());
      for (std::size_t i = 0; i < set.size(); ++i) {
        try {
          priorities[i] = set.priority(i, key);
        } catch (...) {  // the tuning ends on it (the caller's error); here it is just not first
        }
      }
      const auto first = TuningPlan(plan_entries(set), priorities, search).measured_first();
      order.insert(order.end(), first.begin(), first.end());
      if (order.empty()) order.push_back(0);  // no priority could be computed: set order
    }
    Decision provisional;
    provisional.state = DecisionState::provisional;
    for (std::size_t i : order) {
      const auto index = static_cast<std::uint32_t>(i);
      if (std::find(provisional.ranking.begin(), provisional.ranking.end(), index) ==
          provisional.ranking.end()) {
        provisional.ranking.push_back(index);
      }
    }
    provisional.index = provisional.ranking.front();
    provisional.location = set.locate(provisional.index);
    provisional.source = "provisional";
    return provisional;
  }

  /// Raised while the running tuning must stop (TuningRun::stop_when).
  const std::atomic<bool>& stop_flag() const noexcept { return queue_->stop_flag(); }
  /// Waits until no tuning is queued or running; at once when off.
  void wait_idle() {
    if (queue_) queue_->wait_idle();
  }
  /// Stops the tunings (the running one at its next candidate) and waits for them.
  void stop() noexcept {
    if (queue_) queue_->stop();
  }
  /// Forgets the provisional decisions.
  void clear() { provisional_.clear(); }

 private:
  // Keys whose background tuning ended undecided. Shared with the queued jobs, which may be
  // destroyed on another thread (stop_background_tunings_using) after the tuner is gone.
  struct Unfinished {
    std::mutex mutex;
    std::vector<Key> keys;
    std::atomic<bool> any{false};
    void mark(const Key& key) noexcept {
      try {
        std::lock_guard lock(mutex);
        const auto same = [&](const Key& k) { return KeyEqual{}(k, key); };
        if (std::none_of(keys.begin(), keys.end(), same)) keys.push_back(key);
        any.store(true, std::memory_order_relaxed);
      } catch (...) {  // no memory: the key stays provisional
      }
    }
    bool take(const Key& key) {
      std::lock_guard lock(mutex);
      const auto it =
          std::find_if(keys.begin(), keys.end(), [&](const Key& k) { return KeyEqual{}(k, key); });
      if (it == keys.end()) return false;
      keys.erase(it);
      any.store(!keys.empty(), std::memory_order_relaxed);
      return true;
    }
  };
  // Marks a queued tuning's key unfinished when its job is destroyed without having decided it
  // (dropped with its client, or stopped while it ran for that client).
  struct UnfinishedGuard {
    std::shared_ptr<Unfinished> unfinished;
    Key key;
    bool decided = false;
    ~UnfinishedGuard() {
      if (!decided) unfinished->mark(key);
    }
  };

  InsertOnlyMap<Key, Decision, KeyHash, KeyEqual> provisional_;  // never failed, never stored
  std::shared_ptr<Unfinished> unfinished_ = std::make_shared<Unfinished>();
  // Null when blocking. Its jobs use the tuner: the tuner stops it first (~Tuner).
  std::shared_ptr<BackgroundQueue> queue_;
};

}  // namespace tunekit::detail
