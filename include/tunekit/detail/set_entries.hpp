// The kinds of entry a TunableSet holds (one per `.with(...)`): a single Tunable, a
// GroupedTunable, or a parameter space expanded into many candidates. EntryTraits<Entry> is all
// the set knows of a kind: a new kind is one specialisation here plus the `with` that makes it.
// Calling a candidate is detail/call.hpp's.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tunekit/candidate_name.hpp"
#include "tunekit/detail/call.hpp"
#include "tunekit/device_limits.hpp"
#include "tunekit/result.hpp"
#include "tunekit/space.hpp"
#include "tunekit/tunable.hpp"

namespace tunekit::detail {

template <class T>
inline constexpr bool is_tuple_v = false;
template <class... T>
inline constexpr bool is_tuple_v<std::tuple<T...>> = true;

/// The candidates a parameter space expands into: one callable per valid configuration.
template <class Fn>
struct SpaceEntry {
  std::shared_ptr<const Space> space;
  std::shared_ptr<const ExpandedSpace> expanded;
  std::vector<Fn> variants;
};

/// A space whose candidates share a TuneGroup: the group's priority for a key applies to each
/// (e.g. a kernel family made for small matrices, skipped for large ones).
template <class Fn, class GroupKey>
struct GroupedSpaceEntry : SpaceEntry<Fn> {
  GroupedSpaceEntry(SpaceEntry<Fn> entry, TuneGroup<GroupKey> group_)
      : SpaceEntry<Fn>(std::move(entry)), group(std::move(group_)) {}
  TuneGroup<GroupKey> group;
};

/// What a set asks of an entry of kind `Entry` (variant: the candidate's index inside the entry):
///   size(e)                    candidates it contributes
///   function(e, variant)       the callable
///   name(e, variant)           the candidate's name (a space's: candidate_name())
///   fingerprint(e, variant)    text for the set's checksum
///   space(e)                   the expanded space behind it, or null
///   exceeds(e, variant, lim)   why the candidate cannot run within device limits, or nothing
///   priority(e, key)           its CandidatePriority for a key
///   group_name(e)              its groups' names (", " between them), "" without one
template <class Entry>
struct EntryTraits;

// The members common to kinds that hold one Tunable, reached by Traits::tunable(entry).
template <class Traits, class Entry>
struct OneCandidate {
  // Tunable::only_if(false): not a candidate at all.
  static std::size_t size(const Entry& e) noexcept { return Traits::tunable(e).enabled() ? 1 : 0; }
  static const auto& function(const Entry& e, std::size_t) { return Traits::tunable(e).function(); }
  static std::string name(const Entry& e, std::size_t) { return Traits::tunable(e).name(); }
  static std::string fingerprint(const Entry& e, std::size_t) {
    return Traits::tunable(e).fingerprint();
  }
  static const ExpandedSpace* space(const Entry&) noexcept { return nullptr; }
  static std::optional<std::string> exceeds(const Entry&, std::size_t, const DeviceLimits&) {
    return std::nullopt;
  }
};

template <class Fn>
struct EntryTraits<Tunable<Fn>> : OneCandidate<EntryTraits<Tunable<Fn>>, Tunable<Fn>> {
  static const Tunable<Fn>& tunable(const Tunable<Fn>& e) noexcept { return e; }
  template <class Key>
  static CandidatePriority priority(const Tunable<Fn>&, const Key&) {
    return {};
  }
  static std::string group_name(const Tunable<Fn>&) { return {}; }
};

template <class Fn, class GroupKey>
struct EntryTraits<GroupedTunable<Fn, GroupKey>>
    : OneCandidate<EntryTraits<GroupedTunable<Fn, GroupKey>>, GroupedTunable<Fn, GroupKey>> {
  using Entry = GroupedTunable<Fn, GroupKey>;
  static const Tunable<Fn>& tunable(const Entry& e) noexcept { return e.tunable(); }
  template <class Key>
  static CandidatePriority priority(const Entry& e, const Key& key) {
    return e.priority(key);
  }
  static std::string group_name(const Entry& e) {
    std::string names;
    for (const auto& m : e.memberships()) names += (names.empty() ? "" : ", ") + m.group.name();
    return names;
  }
};

template <class Fn>
struct EntryTraits<SpaceEntry<Fn>> {
  using Entry = SpaceEntry<Fn>;
  static std::size_t size(const Entry& e) noexcept { return e.variants.size(); }
  static const Fn& function(const Entry& e, std::size_t variant) { return e.variants[variant]; }
  static std::string name(const Entry& e, std::size_t variant) {
    return candidate_name(e.space->name(), (*e.expanded)[variant].to_string());
  }
  static std::string fingerprint(const Entry& e, std::size_t variant) {
    if constexpr (Fingerprinted<Fn>) {
      return std::string(e.variants[variant].fingerprint());
    } else {
      (void)e, (void)variant;
      return {};
    }
  }
  static const ExpandedSpace* space(const Entry& e) noexcept { return e.expanded.get(); }
  static std::optional<std::string> exceeds(const Entry& e, std::size_t variant,
                                            const DeviceLimits& limits) {
    return e.space->exceeds((*e.expanded)[variant], limits);
  }
  template <class Key>
  static CandidatePriority priority(const Entry&, const Key&) {
    return {};
  }
  static std::string group_name(const Entry&) { return {}; }
};

template <class Fn, class GroupKey>
struct EntryTraits<GroupedSpaceEntry<Fn, GroupKey>> : EntryTraits<SpaceEntry<Fn>> {
  template <class Key>
  static CandidatePriority priority(const GroupedSpaceEntry<Fn, GroupKey>& e, const Key& key) {
    return {e.group.priority(key), 0};
  }
  static std::string group_name(const GroupedSpaceEntry<Fn, GroupKey>& e) { return e.group.name(); }
};

/// The type of the callables of an entry.
template <class Entry>
using entry_function_t =
    std::remove_cvref_t<decltype(EntryTraits<Entry>::function(std::declval<const Entry&>(), 0))>;

template <class Entry, class Client, class... Args>
using entry_result_t =
    decltype(invoke_tunable(EntryTraits<Entry>::function(std::declval<const Entry&>(), 0),
                            std::declval<Client&>(), std::declval<Args&>()...));

}  // namespace tunekit::detail
