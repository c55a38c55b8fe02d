// TunableSet: the candidates of one op, with the key generator (inputs -> key) and the input
// generator (key, inputs -> benchmark inputs) that the tuner needs to measure them.
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tunekit/candidate_name.hpp"
#include "tunekit/detail/call.hpp"
#include "tunekit/detail/candidate_check.hpp"
#include "tunekit/detail/set_entries.hpp"
#include "tunekit/key.hpp"
#include "tunekit/metric.hpp"
#include "tunekit/result.hpp"
#include "tunekit/space.hpp"
#include "tunekit/static_space.hpp"
#include "tunekit/tunable.hpp"

namespace tunekit {

/// An input generator that benchmarks on copies of the real inputs: right for values, wrong for
/// handles to shared buffers (a copy of a handle writes into the caller's data).
struct CloneInputs {
  template <class Key, class... Inputs>
  std::tuple<std::remove_cvref_t<Inputs>...> operator()(const Key&, const Inputs&... inputs) const {
    return {inputs...};
  }
};

/// The set has no validator: candidates are not compared with a reference.
struct NoValidation {};

/// The candidates of one op. Build it once (LocalTuner::init) with `.with(tunable)` calls; index 0
/// is the safe default, and the validation reference when it runs.
template <class KeyGen, class InputGen, class Validator = NoValidation, class... Entries>
class TunableSet {
 public:
  static constexpr std::size_t entry_count = sizeof...(Entries);

  TunableSet(KeyGen key_generator, InputGen input_generator) requires(sizeof...(Entries) == 0)
      : key_generator_(std::move(key_generator)), input_generator_(std::move(input_generator)) {
    compute_offsets();
  }

  TunableSet(KeyGen key_generator, InputGen input_generator, Validator validator,
             std::tuple<Entries...> entries)
      : key_generator_(std::move(key_generator)),
        input_generator_(std::move(input_generator)),
        validator_(std::move(validator)),
        entries_(std::move(entries)) {
    compute_offsets();
  }

  /// A new set with `tunable` (a Tunable or a GroupedTunable) appended.
  template <class Fn>
  auto with(Tunable<Fn> tunable) && {
    return append(std::move(tunable));
  }
  template <class Fn, class Key>
  auto with(GroupedTunable<Fn, Key> tunable) && {
    return append(std::move(tunable));
  }

  /// A new set with one candidate per valid configuration of `space`: `factory(config)` makes
  /// each (e.g. a kernel built with config.build_options()). Searched by a strategy, not
  /// measured exhaustively, when the space is large (see SearchSettings).
  template <class Factory>
  requires std::is_invocable_v<const Factory&, const Config&>
  auto with(Space space, Factory factory) && {
    return append(space_entry(std::move(space), factory));
  }
  /// The same, every candidate of `space` in `group`: the group's priority for a key applies to
  /// each (negative: the whole space is skipped for that key, unless nothing else works).
  template <class Factory, class GroupKey>
  requires std::is_invocable_v<const Factory&, const Config&>
  auto with(Space space, Factory factory, TuneGroup<GroupKey> group) && {
    return append(
        detail::GroupedSpaceEntry(space_entry(std::move(space), factory), std::move(group)));
  }

  /// A new set with one candidate per compile-time-valid point of `space` (static_space.hpp):
  /// `factory(tm, tn, ...)` gets one integral constant per parameter and returns the callable
  /// instantiated for that point, e.g. `&blocked_sum<decltype(tm)::value, ...>`. Tuned as the
  /// runtime space space.to_space(): same strategies, names, replay and cache.
  template <class Values, class Points, class Factory>
  auto with(const StaticSpace<Values, Points>& space, const Factory& factory) && {
    return detail::with_static_space(std::move(*this), space, factory);
  }

  /// Validation at tuning time: `check(reference, candidate)` compares a candidate's output with
  /// the reference's (the first candidate that runs, in set order) and returns true/false or an
  /// optional error message (empty = fine); it may take the client first, `check(client, reference,
  /// candidate)`, to read device buffers. The output is the tunable's return value, or the
  /// benchmark inputs tuple when it returns void. The input generator must then be deterministic
  /// for a key (seed it from the key).
  template <class Check>
  auto validate_with(Check check) && {
    TunableSet<KeyGen, InputGen, Check, Entries...> validated(
        std::move(key_generator_), std::move(input_generator_), std::move(check),
        std::move(entries_));
    validated.share_inputs_ = share_inputs_;
    validated.metrics_ = std::move(metrics_);
    validated.version_ = std::move(version_);
    return validated;
  }

  static constexpr bool validates = !std::is_same_v<Validator, NoValidation>;

  /// The same three on a named set: `auto more = set.with(...)` returns a new set and leaves
  /// `set` as it was (a copy of it, so its candidates must be copyable).
  template <class Fn>
  auto with(Tunable<Fn> tunable) const& {
    return TunableSet(*this).with(std::move(tunable));
  }
  template <class Fn, class Key>
  auto with(GroupedTunable<Fn, Key> tunable) const& {
    return TunableSet(*this).with(std::move(tunable));
  }
  template <class Factory>
  requires std::is_invocable_v<const Factory&, const Config&>
  auto with(Space space, Factory factory) const& {
    return TunableSet(*this).with(std::move(space), std::move(factory));
  }
  template <class Factory, class GroupKey>
  requires std::is_invocable_v<const Factory&, const Config&>
  auto with(Space space, Factory factory, TuneGroup<GroupKey> group) const& {
    return TunableSet(*this).with(std::move(space), std::move(factory), std::move(group));
  }
  template <class Values, class Points, class Factory>
  auto with(const StaticSpace<Values, Points>& space, const Factory& factory) const& {
    return TunableSet(*this).with(space, factory);
  }
  template <class Check>
  auto validate_with(Check check) const& {
    return TunableSet(*this).validate_with(std::move(check));
  }
  auto share_inputs() const& { return TunableSet(*this).share_inputs(); }
  template <class Fn>
  auto metric(std::string name, Fn value) const& {
    return TunableSet(*this).metric(std::move(name), std::move(value));
  }
  auto metric(Metric declared) const& { return TunableSet(*this).metric(std::move(declared)); }

  /// Declares a derived metric shown beside each candidate's time (metric.hpp): `value(key,
  /// seconds)` from the tuning's key and the candidate's median device time per call, e.g.
  /// `.metric("GFLOP/s", [](const MyKey& key, double seconds) { return 2e-9 * key.n / seconds; })`.
  /// The first parameter's type must be the set's key type (else the value is not shown). Not
  /// part of the set's checksum: a new metric does not re-tune, it shows on the next tuning.
  /// Throws std::invalid_argument for an empty, unprintable, repeated or over-long name
  /// (max_metric_name bytes), or past max_metrics metrics.
  template <class Fn>
  auto metric(std::string name, Fn value) && {
    return std::move(*this).metric(Metric(std::move(name), std::move(value)));
  }
  /// The same with a Metric made beforehand (gflops_metric<Key>(), gbytes_metric<Key>()).
  auto metric(Metric declared) && {
    const std::string& name = declared.name();
    const bool repeated = std::any_of(metrics_.begin(), metrics_.end(),
                                      [&](const Metric& m) { return m.name() == name; });
    if (name.empty() || name.size() > max_metric_name || printable(name) != name || repeated ||
        metrics_.size() == max_metrics) {
      throw std::invalid_argument("tunekit: metric '" + printable(name, 64) +
                                  "': a set's metrics need distinct printable names of 1 to " +
                                  std::to_string(max_metric_name) + " bytes, at most " +
                                  std::to_string(max_metrics) + " of them");
    }
    metrics_.push_back(std::move(declared));
    return std::move(*this);
  }
  /// The metrics declared with metric(), in order.
  const std::vector<Metric>& metrics() const noexcept { return metrics_; }

  /// By default each candidate gets freshly generated benchmark inputs, so that in-place
  /// candidates never see each other's results. Call this when the candidates only read their
  /// inputs and write outputs that no candidate reads: one set of inputs then serves the whole
  /// tuning (worth it when making them is costly, e.g. a GiB of random data). Validation of a
  /// candidate returning void still gets fresh inputs (the shared outputs hold the previous
  /// candidate's right answer, which a candidate that skips writes would pass as its own),
  /// unless the validator is a HostReference with a clear step (host_reference.hpp).
  auto share_inputs() && {
    share_inputs_ = true;
    return std::move(*this);
  }
  bool shares_inputs() const noexcept { return share_inputs_; }

  /// A text the set's checksum covers beside its names and kernels (docs/cache.md, "What an entry
  /// is"). The checksum cannot see host code: change the version when a host candidate's body,
  /// a kernel's launch, or the key or input generator changes what a candidate does, and the
  /// results cached for the set (failures included) are tuned again. Empty, the default, adds
  /// nothing to the checksum, so results cached before a set had a version still hold.
  auto version(std::string text) && {
    version_ = std::move(text);
    return std::move(*this);
  }
  auto version(std::string text) const& { return TunableSet(*this).version(std::move(text)); }
  const std::string& version() const noexcept { return version_; }

  /// Number of candidates (a space counts one per valid configuration).
  std::size_t size() const noexcept { return offsets_.back(); }

  /// The candidate's name; for a space, "name[P=1,Q=2]".
  std::string name(std::size_t index) const {
    const auto where = locate(index);
    return visit_entry<std::string>(where.entry, [&]<class E>(const E& entry) {
      return detail::EntryTraits<E>::name(entry, where.variant);
    });
  }

  /// Every candidate's name, in set order.
  std::vector<std::string> names() const {
    std::vector<std::string> all;
    all.reserve(size());
    for (std::size_t i = 0; i < size(); ++i) all.push_back(name(i));
    return all;
  }

  /// A name that two candidates share, if any. Candidates are known by their names (the cache,
  /// the report, the validation), so LocalTuner::init refuses such a set.
  std::optional<std::string> repeated_name() const { return first_repeated_name(names()); }

  /// The index of the candidate named `candidate` (as name() gives it), or nothing.
  std::optional<std::size_t> index_of(std::string_view candidate) const {
    for (std::size_t i = 0; i < size(); ++i) {
      if (name(i) == candidate) return i;
    }
    return std::nullopt;
  }

  CandidateLocation locate(std::size_t index) const {
    if (index >= size()) throw std::out_of_range("tunekit: candidate index out of range");
    std::size_t entry = 0;
    while (offsets_[entry + 1] <= index) ++entry;
    return {static_cast<std::uint32_t>(entry), static_cast<std::uint32_t>(index - offsets_[entry])};
  }

  /// Candidates [first, last) that entry `e` (one `.with`) contributed.
  std::pair<std::size_t, std::size_t> entry_range(std::size_t e) const {
    return {offsets_.at(e), offsets_.at(e + 1)};
  }

  /// The expanded space behind entry `e`, or null when it is a single tunable.
  const ExpandedSpace* space_of_entry(std::size_t e) const {
    return visit_entry<const ExpandedSpace*>(
        e, []<class E>(const E& entry) { return detail::EntryTraits<E>::space(entry); });
  }

  /// Why candidate `index` cannot run within `limits` (a space's work-group or local-memory
  /// rule), or nothing.
  std::optional<std::string> exceeds(std::size_t index, const DeviceLimits& limits) const {
    const auto where = locate(index);
    return visit_entry<std::optional<std::string>>(where.entry, [&]<class E>(const E& entry) {
      return detail::EntryTraits<E>::exceeds(entry, where.variant, limits);
    });
  }

  /// Builds what candidate `index` runs for a call on `inputs`, without running it, when its
  /// callable is Preparable (cl::with_kernels and the shipped ops are); else does nothing.
  template <class Client, class... Inputs>
  void prepare(std::size_t index, Client& client, const Inputs&... inputs) const {
    with_callable(index, [&](const auto& fn) {
      if constexpr (Preparable<std::remove_cvref_t<decltype(fn)>, Client, Inputs...>) {
        fn.prepare(client, inputs...);
      }
    });
  }
  /// Keeps what candidate `index` built (its tuning won) when its callable is Keepable; else
  /// does nothing.
  template <class Client, class... Inputs>
  void keep(std::size_t index, Client& client, const Inputs&... inputs) const {
    with_callable(index, [&](const auto& fn) {
      if constexpr (Keepable<std::remove_cvref_t<decltype(fn)>, Client, Inputs...>) {
        fn.keep(client, inputs...);
      }
    });
  }
  /// Whether some candidate is Preparable with this client and these inputs.
  template <class Client, class... Inputs>
  static constexpr bool preparable =
      (Preparable<detail::entry_function_t<Entries>, Client, std::remove_cvref_t<Inputs>...> ||
       ...);

  template <class Key>
  CandidatePriority priority(std::size_t index, const Key& key) const {
    return visit_entry<CandidatePriority>(locate(index).entry, [&]<class E>(const E& entry) {
      return detail::EntryTraits<E>::priority(entry, key);
    });
  }

  /// Names of the candidate's groups, ", " between them ("" when it has none).
  std::string group_name(std::size_t index) const {
    return visit_entry<std::string>(locate(index).entry, []<class E>(const E& entry) {
      return detail::EntryTraits<E>::group_name(entry);
    });
  }

  /// Everything that decides whether a cached result still applies: the version (if any), names
  /// in order and every candidate's fingerprint (kernel sources, build options). Hashed by the
  /// tuner.
  std::string checksum_text() const {
    std::string text = "tunekit-set-v1\n";
    if (!version_.empty()) text += "version " + version_ + "\n";
    for (std::size_t i = 0; i < size(); ++i) {
      text += name(i);
      text += '\n';
      const auto where = locate(i);
      text += visit_entry<std::string>(where.entry, [&]<class E>(const E& entry) {
        return detail::EntryTraits<E>::fingerprint(entry, where.variant);
      });
      text += '\n';
    }
    return text;
  }

  template <class... Inputs>
  std::invoke_result_t<const KeyGen&, const Inputs&...> make_key(const Inputs&... inputs) const {
    return std::invoke(key_generator_, inputs...);
  }

  /// The benchmark inputs, always as a tuple: input_generator(key, inputs...), or
  /// input_generator(client, key, inputs...) when it takes the client first.
  template <class Client, class Key, class... Inputs>
  requires detail::InvocableMaybeClient<InputGen, Client, const Key&, const Inputs&...>
  auto make_inputs(Client& client, const Key& key, const Inputs&... inputs) const {
    using Made = detail::maybe_client_result_t<InputGen, Client, const Key&, const Inputs&...>;
    if constexpr (detail::is_tuple_v<Made>) {
      return detail::invoke_maybe_client(input_generator_, client, key, inputs...);
    } else {
      return std::tuple<Made>(
          detail::invoke_maybe_client(input_generator_, client, key, inputs...));
    }
  }

  const Validator& validator() const noexcept { return validator_; }

  /// Calls candidate `where` through a table of function pointers: no allocation, one jump.
  template <class Client, class... Args>
  decltype(auto) call(CandidateLocation where, Client& client, Args&... args) const {
    static_assert(sizeof...(Entries) > 0, "the tunable set is empty: add candidates with .with()");
    if constexpr (!(detail::fits_call<detail::entry_function_t<Entries>, Client, Args...> && ...)) {
      // A compile error per misfit candidate, naming it (detail/candidate_check.hpp); nothing
      // more is instantiated, so that those errors are the first and nearly the only ones.
      (void)[]<std::size_t... I>(std::index_sequence<I...>) {
        return (detail::check_candidate<I, detail::entry_function_t<Entries>, Client, Args...>() &
                ...);
      }
      (std::index_sequence_for<Entries...>{});
    } else {
      using R = detail::common_call_result_t<detail::entry_result_t<Entries, Client, Args...>...>;
      static_assert(!std::is_same_v<R, detail::mismatched_results>,
                    "every tunable in a set must return the same type for the same inputs (a "
                    "tunekit::Result<T> and a plain T count as the same)");
      using Caller = R (*)(const TunableSet&, std::uint32_t, Client&, Args&...);
      static constexpr auto table = []<std::size_t... I>(std::index_sequence<I...>) {
        return std::array<Caller, sizeof...(Entries)>{&call_entry<I, R, Client, Args...>...};
      }
      (std::index_sequence_for<Entries...>{});
      return table[where.entry](*this, where.variant, client, args...);
    }
  }

 private:
  template <class Factory>
  static auto space_entry(Space space, const Factory& factory) {
    using Fn = std::invoke_result_t<const Factory&, const Config&>;
    detail::SpaceEntry<Fn> entry{std::make_shared<const Space>(std::move(space)), nullptr, {}};
    auto expanded = std::make_shared<const ExpandedSpace>(entry.space->expand());
    entry.variants.reserve(expanded->size());
    for (const Config& config : expanded->configs()) entry.variants.push_back(factory(config));
    entry.expanded = std::move(expanded);
    return entry;
  }

  template <class Entry>
  auto append(Entry entry) {
    TunableSet<KeyGen, InputGen, Validator, Entries..., Entry> bigger(
        std::move(key_generator_), std::move(input_generator_), std::move(validator_),
        std::tuple_cat(std::move(entries_), std::tuple<Entry>(std::move(entry))));
    bigger.share_inputs_ = share_inputs_;
    bigger.metrics_ = std::move(metrics_);
    bigger.version_ = std::move(version_);
    return bigger;
  }

  template <std::size_t I, class R, class Client, class... Args>
  static R call_entry(const TunableSet& set, std::uint32_t variant, Client& client, Args&... args) {
    using Entry = std::tuple_element_t<I, std::tuple<Entries...>>;
    const auto& fn = detail::EntryTraits<Entry>::function(std::get<I>(set.entries_), variant);
    using Raw = decltype(detail::invoke_tunable(fn, client, args...));
    if constexpr (std::is_same_v<Raw, R>) {
      return detail::invoke_tunable(fn, client, args...);
    } else if constexpr (std::is_void_v<Raw>) {
      detail::invoke_tunable(fn, client, args...);
      return R{};
    } else {
      return R(detail::invoke_tunable(fn, client, args...));
    }
  }

  // Calls `f` with candidate `index`'s callable.
  template <class F>
  void with_callable(std::size_t index, F&& f) const {
    const auto where = locate(index);
    (void)visit_entry<bool>(where.entry, [&]<class E>(const E& entry) {
      f(detail::EntryTraits<E>::function(entry, where.variant));
      return true;
    });
  }

  template <class R, class Visitor>
  R visit_entry(std::size_t index, Visitor&& visitor) const {
    return visit_impl<R>(index, visitor, std::index_sequence_for<Entries...>{});
  }
  template <class R, class Visitor, std::size_t... I>
  R visit_impl(std::size_t index, Visitor& visitor, std::index_sequence<I...>) const {
    std::optional<R> result;
    (void)((index == I ? (result.emplace(visitor(std::get<I>(entries_))), true) : false) || ...);
    if (!result) throw std::out_of_range("tunekit: candidate index out of range");
    return std::move(*result);
  }

  template <class, class, class, class...>
  friend class TunableSet;

  std::vector<Metric> metrics_;

  void compute_offsets() {
    offsets_[0] = 0;
    std::size_t e = 0;
    std::apply(
        [&]<class... E>(const E&... entry) {
          ((offsets_[e + 1] = offsets_[e] + detail::EntryTraits<E>::size(entry), ++e), ...);
        },
        entries_);
  }

  KeyGen key_generator_;
  InputGen input_generator_;
  Validator validator_{};
  std::tuple<Entries...> entries_;
  std::array<std::size_t, sizeof...(Entries) + 1> offsets_{};
  bool share_inputs_ = false;
  std::string version_;  // TunableSet::version
};

template <class KeyGen, class InputGen>
TunableSet(KeyGen, InputGen) -> TunableSet<KeyGen, InputGen, NoValidation>;

}  // namespace tunekit
