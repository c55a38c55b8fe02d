// Derived metrics: what a person reads beside a candidate's time (GFLOP/s, GB/s, or the set's
// own), computed from the tuning's key (and the work of the problem it timed, where the key
// states it: throughput.hpp's benchmark_work) and the candidate's measured median. A set declares
// them (TunableSet::metric); the tuner adds their values to its reports, the persistent cache keeps
// them with the outcomes, and the tables, `tunekit cache show` and the HTML report show them.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "tunekit/outcome.hpp"
#include "tunekit/throughput.hpp"

namespace tunekit {

namespace detail {
// The key type a metric's function takes first: (const Key&, double seconds). None for a
// function whose parameters are not written out (a generic lambda).
template <class F, class = void>
struct metric_key {};
template <class F>
struct metric_key<F, std::void_t<decltype(&F::operator())>> : metric_key<decltype(&F::operator())> {
};
template <class R, class K, class S>
struct metric_key<R (*)(K, S)> {
  using type = std::remove_cvref_t<K>;
};
template <class C, class R, class K, class S>
struct metric_key<R (C::*)(K, S) const> {
  using type = std::remove_cvref_t<K>;
};
template <class C, class R, class K, class S>
struct metric_key<R (C::*)(K, S) const noexcept> {
  using type = std::remove_cvref_t<K>;
};
template <class F>
concept MetricFunction = requires {
  typename metric_key<F>::type;
};
}  // namespace detail

/// The most metrics a set declares, and the longest name one has (also the cache reader's
/// limits: docs/cache.md).
inline constexpr std::size_t max_metrics = 8;
inline constexpr std::size_t max_metric_name = 32;

/// One declared metric: a name ("GFLOP/s") and value(key, seconds), where seconds is a
/// candidate's median device time per call. Type-erased over the key type, which is the type of
/// the function's first parameter (a lambda whose first parameter is a `const Key&`).
class Metric {
 public:
  template <class Fn>
  Metric(std::string name, Fn fn)
      : name_((check<std::decay_t<Fn>>(), std::move(name))),
        key_type_(&typeid(typename detail::metric_key<std::decay_t<Fn>>::type)),
        value_([fn = std::move(fn)](const void* key, double seconds, const Work*) -> double {
          using Key = typename detail::metric_key<std::decay_t<Fn>>::type;
          return static_cast<double>(fn(*static_cast<const Key*>(key), seconds));
        }) {}

  /// A metric of the work the tuning timed: value(work, seconds), with `timed`'s work where the
  /// tuning knows it (benchmark_work) and the key's own (`key.work()`) elsewhere.
  template <HasWork Key, class Fn>
  static Metric of_work(std::string name, Fn fn) {
    return Metric(std::move(name), static_cast<const Key*>(nullptr),
                  [fn = std::move(fn)](const void* key, double seconds, const Work* timed) {
                    const Work work = timed ? *timed : Work(static_cast<const Key*>(key)->work());
                    return static_cast<double>(fn(work, seconds));
                  });
  }

  const std::string& name() const noexcept { return name_; }

  /// The metric of a candidate whose median is `seconds` on `key` (`timed`: the work of the
  /// problem it was timed on, where known); NaN when there is none (no time measured, a key of
  /// another type than the function takes, a value that is no finite number).
  template <class Key>
  double value(const Key& key, double seconds, const Work* timed = nullptr) const {
    if (!(seconds > 0) || typeid(Key) != *key_type_) return std::nan("");
    const double v = value_(&key, seconds, timed);
    return std::isfinite(v) ? v : std::nan("");
  }

 private:
  using Value = std::function<double(const void*, double, const Work*)>;
  template <class Key>
  Metric(std::string name, const Key*, Value value)
      : name_(std::move(name)), key_type_(&typeid(Key)), value_(std::move(value)) {}

  template <class Fn>
  static constexpr void check() {
    static_assert(detail::MetricFunction<Fn>,
                  "a metric's function takes (const Key&, double seconds), its key type written "
                  "out (not auto): e.g. [](const MyKey& key, double seconds) { ... }");
  }

  std::string name_;
  const std::type_info* key_type_;
  Value value_;
};

/// Metrics from the work of the problem a tuning timed (throughput.hpp: benchmark_work where the
/// key states it, else `key.work()`): its FLOPs, and the bytes it moves, per second, in units of
/// 1e9.
template <HasWork Key>
Metric gflops_metric() {
  return Metric::of_work<Key>(
      "GFLOP/s", [](const Work& work, double seconds) { return work.flops / seconds * 1e-9; });
}
template <HasWork Key>
Metric gbytes_metric() {
  return Metric::of_work<Key>(
      "GB/s", [](const Work& work, double seconds) { return work.bytes / seconds * 1e-9; });
}

/// Sets `report`'s metric names to those of `metrics`, and every working outcome's values (NaN
/// where one cannot be computed); the others get none. `timed`: the work of the problem the
/// tuning timed, where it knows it. An exception a metric's function throws leaves that value
/// NaN: a metric never fails a tuning.
template <class Key>
void add_metrics(const std::vector<Metric>& metrics, const Key& key, TuningReport& report,
                 const Work* timed = nullptr) {
  if (metrics.empty()) return;
  report.metric_names.clear();
  for (const Metric& metric : metrics) report.metric_names.push_back(metric.name());
  for (AutotuneOutcome& outcome : report.outcomes) {
    outcome.metrics.clear();
    if (!outcome.ok()) continue;
    for (const Metric& metric : metrics) {
      double value = std::nan("");
      try {
        value = metric.value(key, outcome.median, timed);
      } catch (...) {
      }
      outcome.metrics.push_back(value);
    }
  }
}

/// "1234", "56.7", "0.891", "-" (NaN): a metric's value in a table.
std::string format_metric(double value);

}  // namespace tunekit
