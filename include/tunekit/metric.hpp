// Derived metrics: what a person reads beside a candidate's time (GFLOP/s, GB/s, or the set's
// own), computed from the tuning's key and the candidate's measured median. A set declares them
// (TunableSet::metric); the tuner adds their values to its reports, the persistent cache keeps
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
        value_([fn = std::move(fn)](const void* key, double seconds) -> double {
          using Key = typename detail::metric_key<std::decay_t<Fn>>::type;
          return static_cast<double>(fn(*static_cast<const Key*>(key), seconds));
        }) {}

  const std::string& name() const noexcept { return name_; }

  /// The metric of a candidate whose median is `seconds` on `key`; NaN when there is none (no
  /// time measured, a key of another type than the function takes, a value that is no finite
  /// number).
  template <class Key>
  double value(const Key& key, double seconds) const {
    if (!(seconds > 0) || typeid(Key) != *key_type_) return std::nan("");
    const double v = value_(&key, seconds);
    return std::isfinite(v) ? v : std::nan("");
  }

 private:
  template <class Fn>
  static constexpr void check() {
    static_assert(detail::MetricFunction<Fn>,
                  "a metric's function takes (const Key&, double seconds), its key type written "
                  "out (not auto): e.g. [](const MyKey& key, double seconds) { ... }");
  }

  std::string name_;
  const std::type_info* key_type_;
  std::function<double(const void*, double)> value_;
};

/// Metrics from a key's work (throughput.hpp, `key.work()`): its FLOPs, and the bytes it moves,
/// per second, in units of 1e9.
template <HasWork Key>
Metric gflops_metric() {
  return Metric("GFLOP/s", [](const Key& key, double seconds) {
    return Work(key.work()).flops / seconds * 1e-9;
  });
}
template <HasWork Key>
Metric gbytes_metric() {
  return Metric("GB/s", [](const Key& key, double seconds) {
    return Work(key.work()).bytes / seconds * 1e-9;
  });
}

/// Sets `report`'s metric names to those of `metrics`, and every working outcome's values (NaN
/// where one cannot be computed); the others get none. An exception a metric's function throws
/// leaves that value NaN: a metric never fails a tuning.
template <class Key>
void add_metrics(const std::vector<Metric>& metrics, const Key& key, TuningReport& report) {
  if (metrics.empty()) return;
  report.metric_names.clear();
  for (const Metric& metric : metrics) report.metric_names.push_back(metric.name());
  for (AutotuneOutcome& outcome : report.outcomes) {
    outcome.metrics.clear();
    if (!outcome.ok()) continue;
    for (const Metric& metric : metrics) {
      double value = std::nan("");
      try {
        value = metric.value(key, outcome.median);
      } catch (...) {
      }
      outcome.metrics.push_back(value);
    }
  }
}

/// "1234", "56.7", "0.891", "-" (NaN): a metric's value in a table.
std::string format_metric(double value);

}  // namespace tunekit
