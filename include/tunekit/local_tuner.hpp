// LocalTuner: the one object an op keeps (usually `static`): builds its tunable set once and
// routes every call to the right device's Tuner.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "tunekit/call_report.hpp"
#include "tunekit/device_id.hpp"
#include "tunekit/engine/tuner.hpp"
#include "tunekit/error.hpp"
#include "tunekit/key.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/progress.hpp"
#include "tunekit/result_store.hpp"
#include "tunekit/settings.hpp"
#include "tunekit/timing_client.hpp"
#include "tunekit/tunable_set.hpp"

namespace tunekit {

/// A callable bound to the winner of one key on one device: for hot loops that call an op with
/// the same shapes many times. It skips the key generator and the lookup (and so the fallback):
/// an AutotuneError the winner raises reaches the caller, named after the winner.
template <class Set, class Client>
class PreparedDispatch {
 public:
  PreparedDispatch(const Set& set, CandidateLocation winner) : set_(&set), winner_(winner) {}

  template <class... Inputs>
  decltype(auto) operator()(Client& client, Inputs&&... inputs) const {
    try {
      return set_->call(winner_, client, inputs...);
    } catch (const AutotuneError& failure) {
      // No fallback and no table here: the error names the candidate that raised it.
      if (!failure.tunable().empty()) throw;
      throw failure.named(set_->name(set_->entry_range(winner_.entry).first + winner_.variant));
    }
  }
  CandidateLocation winner() const noexcept { return winner_; }

 private:
  const Set* set_;
  CandidateLocation winner_;
};

/// One per op. `init` builds the tunable set once; `execute` is the only call the op makes.
template <AutotuneKey Key>
class LocalTuner {
 public:
  /// `op` names the op in logs and in the persistent cache: keep it stable and unique.
  explicit LocalTuner(std::string op) : op_(std::move(op)) {}
  LocalTuner(std::string op, Settings settings)
      : op_(std::move(op)), settings_(std::move(settings)) {}
  LocalTuner(const LocalTuner&) = delete;
  LocalTuner& operator=(const LocalTuner&) = delete;

  ~LocalTuner() {
    for (TunerNode* node = tuners_.load(); node != nullptr;) delete std::exchange(node, node->next);
  }

  /// Builds the tunable set with `factory` the first time (thread-safe) and returns it. Throws
  /// std::invalid_argument when two of its candidates share a name (init tries again next time).
  /// Every call on one LocalTuner must pass a factory of the same type (in practice: init is
  /// called from one place): another factory type throws std::logic_error naming the op, since
  /// the set it would make is not the one kept (nor, for another set type, of its type).
  template <class Factory>
  const std::invoke_result_t<Factory&>& init(Factory&& factory) {
    using Set = std::invoke_result_t<Factory&>;
    static_assert(!std::is_reference_v<Set> && !std::is_void_v<Set>,
                  "init's factory must return the tunable set by value");
    std::call_once(init_once_, [&] {
      auto set = std::make_shared<const Set>(factory());
      if (const auto twin = set->repeated_name()) {
        throw std::invalid_argument(
            "tunekit: LocalTuner '" + op_ + "': two candidates are named '" +
            printable(*twin, 200) +
            "'; a set's candidates need distinct names (the cache, the report and the validation "
            "know them by name)");
      }
      set_ = std::move(set);
      factory_type_ = &type_tag<std::remove_cvref_t<Factory>>;
    });
    if (factory_type_ != &type_tag<std::remove_cvref_t<Factory>>) {
      throw std::logic_error("tunekit: LocalTuner '" + op_ +
                             "': init() was called with another factory than the first one; "
                             "its set would be ignored. Call init from one place per op");
    }
    return *static_cast<const Set*>(set_.get());
  }

  /// Runs the op on `inputs` with the winner for their key on device `id`, tuning on a miss.
  /// A tunable must not call execute() on its own LocalTuner for a key not tuned yet: tuning
  /// holds the op's tuning lock, so the nested call would wait for itself; it throws
  /// AutotuneError(runtime) saying so instead (the tunable fails with it). Tuned keys and other
  /// LocalTuners are fine.
  template <TimingClient Client, class Set, class... Inputs>
  decltype(auto) execute(const DeviceId& id, Client& client, const Set& set, Inputs&&... inputs) {
    static_assert(check_set<Client, Set, Inputs...>());
    const Key key = set.make_key(std::as_const(inputs)...);
    return tuner(id).execute(client, set, key, inputs...);
  }

  /// Tunes `inputs`' key if needed and returns a callable bound to its winner.
  template <TimingClient Client, class Set, class... Inputs>
  PreparedDispatch<Set, Client> prepare(const DeviceId& id, Client& client, const Set& set,
                                        Inputs&&... inputs) {
    static_assert(check_set<Client, Set, Inputs...>());
    const Key key = set.make_key(std::as_const(inputs)...);
    return PreparedDispatch<Set, Client>(set, tuner(id).winner(client, set, key, inputs...));
  }

  /// The Tuner of device `id`, created on first use.
  Tuner<Key>& tuner(const DeviceId& id) {
    for (TunerNode* node = tuners_.load(std::memory_order_acquire); node; node = node->next) {
      if (node->tuner.device() == id) return node->tuner;
    }
    std::lock_guard lock(tuners_mutex_);
    for (TunerNode* node = tuners_.load(std::memory_order_acquire); node; node = node->next) {
      if (node->tuner.device() == id) return node->tuner;
    }
    Settings settings = settings_ ? *settings_ : global_settings();
    settings.validate();
    if (!settings.on_progress) settings.on_progress = progress_line_for(settings.progress);
    auto store = make_result_store(settings);
    auto* node = new TunerNode{Tuner<Key>(op_, id, std::move(settings), std::move(store)),
                               tuners_.load(std::memory_order_relaxed)};
    tuners_.store(node, std::memory_order_release);
    return node->tuner;
  }

  const std::string& op() const noexcept { return op_; }

  /// Waits until every device's background tunings (Settings::tuning) are done.
  void wait_for_tunings() {
    for (TunerNode* node = tuners_.load(std::memory_order_acquire); node; node = node->next) {
      node->tuner.wait_for_tunings();
    }
  }

  /// What this thread's last execute() of this op did (tuned, loaded, dispatched, fell back,
  /// failed) and which candidate ran, or nothing when its last call was of another op (see
  /// tunekit::last_call() for any op).
  std::optional<CallReport> last_call() const noexcept {
    const CallReport& call = tunekit::last_call();
    for (const TunerNode* node = tuners_.load(std::memory_order_acquire); node; node = node->next) {
      if (call.tuner == &node->tuner) return call;
    }
    return std::nullopt;
  }

 private:
  // Evaluated in a static_assert before the set is used, so that its message is the first
  // error a compiler prints (called as a statement, it came after the set's own errors).
  template <class Client, class Set, class... Inputs>
  static constexpr bool check_set() {
    static_assert(
        requires(const Set& set, const std::remove_cvref_t<Inputs>&... inputs) {
          { set.make_key(inputs...) } -> std::convertible_to<Key>;
        },
        "the set's key generator must be callable with the inputs passed to execute(), as "
        "const references, and return the LocalTuner's key type");
    static_assert(
        requires(const Set& set, Client& client, const Key& key,
                 const std::remove_cvref_t<Inputs>&... inputs) {
          set.make_inputs(client, key, inputs...);
        },
        "the set's input generator must be callable as (key, inputs passed to "
        "execute()...) or (client, key, inputs...)");
    return true;
  }

  struct TunerNode {
    Tuner<Key> tuner;
    TunerNode* next;
  };

  std::string op_;
  std::optional<Settings> settings_;
  // One address per type, without RTTI: what init's factory was.
  template <class T>
  static constexpr char type_tag = 0;

  std::once_flag init_once_;
  std::shared_ptr<const void> set_;
  const void* factory_type_ = nullptr;  // written once, under init_once_
  std::atomic<TunerNode*> tuners_{nullptr};
  std::mutex tuners_mutex_;
};

}  // namespace tunekit
