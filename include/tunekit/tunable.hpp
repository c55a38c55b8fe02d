// Tunable: one named candidate implementation of an op. TuneGroup: candidates that share a
// priority, so that a key can order or skip whole families of them.
#pragma once

#include <concepts>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace tunekit {

/// A named group of tunables with a priority function of the key. Groups are tried in order of
/// priority; a negative priority skips the group for that key (unless nothing else works).
template <class Key>
class TuneGroup {
 public:
  TuneGroup(std::string name, std::function<int(const Key&)> priority)
      : name_(std::move(name)), priority_(std::move(priority)) {}

  const std::string& name() const noexcept { return name_; }
  int priority(const Key& key) const { return priority_ ? priority_(key) : 0; }

 private:
  std::string name_;
  std::function<int(const Key&)> priority_;
};

/// Priority of one candidate for one key: its group's, then its own inside the group.
struct CandidatePriority {
  int group = 0;
  int own = 0;
  bool skipped() const noexcept { return group < 0 || own < 0; }
  /// Whether this priority is tried before `other`: a higher group priority, then a higher own
  /// priority. The one order of priority levels (TuningPlan).
  bool before(const CandidatePriority& other) const noexcept {
    return std::tie(other.group, other.own) < std::tie(group, own);
  }
};

/// The priority of a tunable that is in several groups (one CandidatePriority per membership,
/// in the order they were given): its best membership's, the first of those tried (before())
/// among the memberships not skipped. It is skipped (tried last, as a last resort) only when
/// every membership is; then it has the first membership's priority. As in CubeCL, a tunable in
/// several groups is tuned with the first of its groups that the key prioritises.
inline CandidatePriority best_priority(const std::vector<CandidatePriority>& memberships) {
  const CandidatePriority* best = nullptr;
  for (const auto& membership : memberships) {
    if (!membership.skipped() && (best == nullptr || membership.before(*best))) best = &membership;
  }
  if (best != nullptr) return *best;
  return memberships.empty() ? CandidatePriority{} : memberships.front();
}

/// Text a candidate adds to its set's checksum: an OpenCL kernel's source and build options, so
/// that editing the kernel invalidates cached results. Callables may provide it themselves with
/// a `fingerprint()` member.
template <class Fn>
concept Fingerprinted = requires(const Fn& fn) {
  { fn.fingerprint() } -> std::convertible_to<std::string>;
};

/// A candidate that can build what it runs (e.g. its OpenCL programs) without running:
/// `fn.prepare(client, inputs...)`. The tuner calls it on other threads, ahead of measuring the
/// candidate, so it must be thread-safe; a failure it throws is dropped (the call reports it).
template <class Fn, class Client, class... Inputs>
concept Preparable = requires(const Fn& fn, Client& client, const Inputs&... inputs) {
  fn.prepare(client, inputs...);
};

/// A candidate whose build is worth keeping once it won: `fn.keep(client, inputs...)` (e.g. its
/// OpenCL programs stored as binaries for later processes). The tuner calls it for the winner.
template <class Fn, class Client, class... Inputs>
concept Keepable = requires(const Fn& fn, Client& client, const Inputs&... inputs) {
  fn.keep(client, inputs...);
};

template <class Fn, class Key>
class GroupedTunable;

/// A named candidate: any callable over the op's (benchmark or real) inputs, optionally taking
/// the client first. It may return a value, a tunekit::Result, or throw.
template <class Fn>
class Tunable {
 public:
  Tunable(std::string name, Fn fn) : name_(std::move(name)), fn_(std::move(fn)) {}

  /// Adds `text` (e.g. kernel source + build options) to the set's checksum.
  Tunable fingerprint(std::string text) && {
    extra_fingerprint_ += std::move(text);
    return std::move(*this);
  }

  /// Keeps this tunable out of its set when `condition` is false (decided at run time, e.g. by
  /// a device capability): the set then has one candidate fewer, as if the `.with()` were not
  /// there (its index, names and checksum). Call it before group().
  Tunable only_if(bool condition) && {
    enabled_ = enabled_ && condition;
    return std::move(*this);
  }
  bool enabled() const noexcept { return enabled_; }

  /// Puts this tunable in `group`, with a priority inside it (negative: skip for that key).
  /// `.group(a).group(b, p)` puts it in several groups: see best_priority().
  template <class Key, class Priority = int (*)(const Key&)>
  requires std::is_invocable_r_v<int, const Priority&, const Key&> GroupedTunable<Fn, Key> group(
      TuneGroup<Key> group, Priority priority = nullptr) && {
    return GroupedTunable<Fn, Key>(std::move(*this), std::move(group), std::move(priority));
  }

  const std::string& name() const noexcept { return name_; }
  const Fn& function() const noexcept { return fn_; }
  std::string fingerprint() const {
    if constexpr (Fingerprinted<Fn>) {
      return std::string(fn_.fingerprint()) + extra_fingerprint_;
    } else {
      return extra_fingerprint_;
    }
  }

 private:
  std::string name_;
  Fn fn_;
  std::string extra_fingerprint_;
  bool enabled_ = true;
};

template <class Fn>
Tunable(const char*, Fn) -> Tunable<Fn>;
template <class Fn>
Tunable(std::string, Fn) -> Tunable<Fn>;

/// A tunable placed in one or more TuneGroups, with its priority within each.
template <class Fn, class Key>
class GroupedTunable {
 public:
  /// One group the tunable is in, and its priority inside that group.
  struct Membership {
    TuneGroup<Key> group;
    std::function<int(const Key&)> priority;  ///< empty: 0
  };

  template <class Priority>
  GroupedTunable(Tunable<Fn> tunable, TuneGroup<Key> group, Priority priority)
      : tunable_(std::move(tunable)) {
    add(std::move(group), std::move(priority));
  }

  /// Puts the tunable in `group` too, with a priority inside it: its priority for a key is then
  /// the best of its groups' (best_priority()).
  template <class Priority = int (*)(const Key&)>
  requires std::is_invocable_r_v<int, const Priority&, const Key&> GroupedTunable
  group(TuneGroup<Key> group, Priority priority = nullptr) && {
    add(std::move(group), std::move(priority));
    return std::move(*this);
  }

  const Tunable<Fn>& tunable() const noexcept { return tunable_; }
  /// The groups it is in, in the order they were given.
  const std::vector<Membership>& memberships() const noexcept { return memberships_; }

  /// Its priority for `key`: that of its best group (best_priority()). A priority function that
  /// throws lets the exception through (the tuning then fails this candidate).
  CandidatePriority priority(const Key& key) const {
    std::vector<CandidatePriority> each;
    each.reserve(memberships_.size());
    for (const auto& m : memberships_) {
      each.push_back({m.group.priority(key), m.priority ? m.priority(key) : 0});
    }
    return best_priority(each);
  }

 private:
  template <class Priority>
  void add(TuneGroup<Key> group, Priority priority) {
    Membership membership{std::move(group), {}};
    if constexpr (std::is_pointer_v<Priority>) {
      if (priority) membership.priority = priority;
    } else {
      membership.priority = std::move(priority);
    }
    memberships_.push_back(std::move(membership));
  }

  Tunable<Fn> tunable_;
  std::vector<Membership> memberships_;
};

}  // namespace tunekit
