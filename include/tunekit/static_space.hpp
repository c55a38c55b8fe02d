// StaticSpace: a parameter space over template parameters. Its points are the Boost.Hana
// cartesian product of compile-time values, filtered by compile-time constraints, so that a
// templated kernel or host function is instantiated only for valid combinations. In a tunable
// set it becomes a runtime Space, searched, named and cached like any other.
#pragma once

#include <array>
#include <boost/hana.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tunekit/space.hpp"

namespace tunekit {

namespace detail {

template <class C>
using constant_type_t = std::remove_cvref_t<decltype(C::value)>;

template <class T>
inline constexpr bool is_bool_v = std::is_same_v<T, bool>;

// A compile-time boolean: hana::bool_c, a comparison of hana::int_c values, std::true_type.
// Integers are refused so that a forgotten comparison (`tm * tn`) is not silently "true".
template <class R>
concept CompileTimeBool = is_bool_v<constant_type_t<R>> && requires {
  typename std::bool_constant<R::value>;
};

template <class V>
concept CompileTimeInteger = std::is_integral_v<constant_type_t<V>> && requires {
  typename std::integral_constant<constant_type_t<V>, V::value>;
};

template <class Values>
inline constexpr bool all_compile_time_integers_v = false;
template <class... V>
inline constexpr bool all_compile_time_integers_v<boost::hana::tuple<V...>> =
    (CompileTimeInteger<V> && ...);

// Whether `F` can be called with the integral constants of one point (a hana::tuple).
template <class F, class Point>
inline constexpr bool invocable_at_v = false;
template <class F, class... V>
inline constexpr bool invocable_at_v<F, boost::hana::tuple<V...>> =
    std::is_invocable_v<const F&, V...>;

template <class F, class Point>
struct result_at {};
template <class F, class... V>
struct result_at<F, boost::hana::tuple<V...>> {
  using type = std::invoke_result_t<const F&, V...>;
};
template <class F, class Point>
using result_at_t = typename result_at<F, Point>::type;

template <class Predicate, class Points>
inline constexpr bool predicate_callable_v = false;
template <class Predicate, class... Point>
inline constexpr bool predicate_callable_v<Predicate, boost::hana::tuple<Point...>> =
    (invocable_at_v<Predicate, Point> && ...);

template <class Predicate, class Points>
inline constexpr bool predicate_compile_time_v = false;
template <class Predicate, class... Point>
inline constexpr bool predicate_compile_time_v<Predicate, boost::hana::tuple<Point...>> =
    (CompileTimeBool<std::remove_cvref_t<result_at_t<Predicate, Point>>> && ...);

// hana::filter's predicate for a where() constraint. It only looks at types: hana::filter never
// calls it, so the user's predicate may capture anything and is not stored.
template <class Predicate>
struct Satisfies {
  template <class... V>
  constexpr auto operator()(const boost::hana::tuple<V...>&) const {
    using R = std::remove_cvref_t<std::invoke_result_t<const Predicate&, V...>>;
    return boost::hana::bool_c<static_cast<bool>(R::value)>;
  }
};

template <class... V>
std::vector<std::int64_t> values_of(const boost::hana::tuple<V...>&) {
  return {static_cast<std::int64_t>(V::value)...};
}

template <class Points>
inline constexpr std::size_t point_count_v = 0;
template <class... Point>
inline constexpr std::size_t point_count_v<boost::hana::tuple<Point...>> = sizeof...(Point);

}  // namespace detail

/// One parameter of a static space: the name configurations print it with, and its values as a
/// hana tuple of integral constants (`hana::tuple_c<int, 1, 2, 4>`), in the order a local
/// search steps through them.
template <class Values>
struct StaticParameter {
  std::string name;
  Values values;
};

/// `tunekit::param("TM", hana::tuple_c<int, 1, 2, 4, 8>)`; any Hana Foldable of integral
/// constants works (e.g. hana::range_c<int, 1, 5>).
template <class Values>
auto param(std::string name, Values values) {
  auto as_tuple = boost::hana::to<boost::hana::tuple_tag>(values);
  using Tuple = decltype(as_tuple);
  static_assert(detail::all_compile_time_integers_v<Tuple>,
                "tunekit::param: the values must be compile-time integers, e.g. "
                "hana::tuple_c<int, 1, 2, 4>");
  static_assert(detail::point_count_v<Tuple> > 0, "tunekit::param: a parameter needs a value");
  return StaticParameter<Tuple>{std::move(name), as_tuple};
}

/// A parameter space known at compile time. `Values` is a hana tuple of the parameters' value
/// tuples; `Points` a hana tuple of the valid points, each a hana tuple of integral constants
/// (one per parameter). Only types: the object holds nothing but names.
template <class Values, class Points>
class StaticSpace {
 public:
  static constexpr std::size_t parameter_count = detail::point_count_v<Values>;

  StaticSpace(std::string name, std::array<std::string, parameter_count> parameter_names)
      : name_(std::move(name)), parameter_names_(std::move(parameter_names)) {}

  /// A space keeping only the points where `predicate(tm, tn, ...)` (one integral constant per
  /// parameter, of the points still valid) returns a compile-time true. Decided by the compiler:
  /// nothing is instantiated for the points it removes, and the predicate is not kept.
  template <class Predicate>
  auto where(const Predicate&) const {
    constexpr bool callable = detail::predicate_callable_v<Predicate, Points>;
    static_assert(callable,
                  "tunekit::static_space: a where() predicate must be callable (as const) with "
                  "one integral constant per parameter, e.g. [](auto tm, auto tn) { ... }");
    if constexpr (!callable) {
      return *this;  // one error, not a cascade
    } else {
      constexpr bool compile_time = detail::predicate_compile_time_v<Predicate, Points>;
      static_assert(compile_time,
                    "tunekit::static_space: a where() predicate must return a compile-time "
                    "boolean (hana::bool_c, or a comparison of hana::int_c values)");
      if constexpr (!compile_time) {
        return *this;
      } else {
        using Kept = decltype(boost::hana::filter(Points{}, detail::Satisfies<Predicate>{}));
        return StaticSpace<Values, Kept>(name_, parameter_names_);
      }
    }
  }

  /// Number of valid points, a constant expression: what the constraints leave is known before
  /// anything runs (static_assert on it, size arrays with it).
  static constexpr std::size_t size() noexcept { return detail::point_count_v<Points>; }
  /// Number of points before constraints (the size of the cartesian product).
  static constexpr std::size_t unconstrained_size() noexcept {
    return detail::point_count_v<decltype(boost::hana::cartesian_product(Values{}))>;
  }

  /// The valid points, for hana::for_each over exactly the combinations that are instantiated.
  static constexpr Points points() noexcept { return {}; }

  /// The same space at run time: the same parameter names and values, and a constraint that
  /// accepts exactly the compile-time-valid points. It is what search strategies, replay tables,
  /// candidate names ("tiles[TM=2,TN=4]") and the persistent cache work on.
  Space to_space() const {
    Space space(name_);
    std::size_t parameter = 0;
    boost::hana::for_each(Values{}, [&](auto values) {
      space.parameter(parameter_names_[parameter++], detail::values_of(values));
    });
    if constexpr (size() < unconstrained_size()) {
      space.where("compile-time constraints", [valid = valid_values()](const Config& config) {
        return valid->contains(config.values());
      });
    }
    return space;
  }

  const std::string& name() const noexcept { return name_; }
  const std::array<std::string, parameter_count>& parameter_names() const noexcept {
    return parameter_names_;
  }

 private:
  // The valid points' values, built once per space type and shared by every to_space().
  static const std::shared_ptr<const std::set<std::vector<std::int64_t>>>& valid_values() {
    static const auto valid = [] {
      auto values = std::make_shared<std::set<std::vector<std::int64_t>>>();
      boost::hana::for_each(points(),
                            [&](auto point) { values->insert(detail::values_of(point)); });
      return std::shared_ptr<const std::set<std::vector<std::int64_t>>>(std::move(values));
    }();
    return valid;
  }

  std::string name_;
  std::array<std::string, parameter_count> parameter_names_;
};

/// Starts a static space: `tunekit::static_space("tiles", tunekit::param("TM", hana::tuple_c<int,
/// 1, 2, 4>), ...).where([](auto tm, auto tn) { return tm * tn <= hana::int_c<16>; })`.
template <class... V>
auto static_space(std::string name, StaticParameter<V>... parameters) {
  static_assert(sizeof...(V) > 0, "tunekit::static_space: a space needs a parameter");
  using Values = boost::hana::tuple<V...>;
  using Points = decltype(boost::hana::cartesian_product(Values{}));
  return StaticSpace<Values, Points>(std::move(name), {std::move(parameters.name)...});
}

namespace detail {

/// The runtime factory behind TunableSet::with(StaticSpace, factory): maps a configuration's
/// values to the callable instantiated for that point. Copies share one table.
template <class Fn>
class StaticSpaceFactory {
 public:
  using Table = std::map<std::vector<std::int64_t>, Fn>;
  explicit StaticSpaceFactory(std::shared_ptr<const Table> table) : table_(std::move(table)) {}

  Fn operator()(const Config& config) const {
    const auto found = table_->find(config.values());
    if (found == table_->end()) {
      throw std::logic_error("tunekit: configuration " + config.to_string() +
                             " is not a point of its static space");
    }
    return found->second;
  }

 private:
  std::shared_ptr<const Table> table_;
};

template <class Factory, class Points>
inline constexpr bool factory_callable_v = false;
template <class Factory, class... Point>
inline constexpr bool factory_callable_v<Factory, boost::hana::tuple<Point...>> =
    (invocable_at_v<Factory, Point> && ...);

template <class Factory, class Fn, class Points>
inline constexpr bool factory_results_convert_v = false;
template <class Factory, class Fn, class... Point>
inline constexpr bool factory_results_convert_v<Factory, Fn, boost::hana::tuple<Point...>> =
    (std::is_convertible_v<result_at_t<Factory, Point>, Fn> && ...);

/// TunableSet::with(StaticSpace, factory): `set` with one candidate per valid point, added as
/// the runtime space of `space`. `factory(point...)` is called here, once per valid point, and
/// only those are instantiated. On misuse: one static_assert, and `set` unchanged so that no
/// cascade of errors follows it.
template <class Set, class Values, class Points, class Factory>
auto with_static_space(Set&& set, const StaticSpace<Values, Points>& space,
                       const Factory& factory) {
  constexpr bool some_point = StaticSpace<Values, Points>::size() > 0;
  static_assert(some_point, "tunekit::static_space: the where() constraints leave no valid point");
  constexpr bool callable = factory_callable_v<Factory, Points>;
  static_assert(callable,
                "tunekit::static_space: the factory must be callable (as const) with one "
                "integral constant per parameter, e.g. [](auto tm, auto tn) { return "
                "&kernel<decltype(tm)::value, decltype(tn)::value>; }");
  if constexpr (!some_point || !callable) {
    return std::move(set);
  } else {
    using First = std::remove_cvref_t<decltype(boost::hana::front(Points{}))>;
    using Fn = std::decay_t<result_at_t<Factory, First>>;
    constexpr bool one_type = !std::is_void_v<Fn> && factory_results_convert_v<Factory, Fn, Points>;
    static_assert(one_type,
                  "tunekit::static_space: the factory must return one type for every point (or "
                  "types convertible to the first point's): return a function pointer "
                  "(&f<TM, TN>) or a std::function, not a different lambda per point");
    if constexpr (!one_type) {
      return std::move(set);
    } else {
      auto table = std::make_shared<typename StaticSpaceFactory<Fn>::Table>();
      boost::hana::for_each(Points{}, [&](auto point) {
        table->emplace(values_of(point), Fn(boost::hana::unpack(point, factory)));
      });
      return std::move(set).with(space.to_space(), StaticSpaceFactory<Fn>(std::move(table)));
    }
  }
}

}  // namespace detail

}  // namespace tunekit
