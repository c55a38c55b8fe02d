// Compile-time parameter spaces: the points are the filtered cartesian product, only valid
// points are instantiated, and a static space in a tunable set tunes, dispatches and persists
// like a runtime one.
//
// Misuse cannot be tested here, since it must not compile. Each gives one static_assert:
//   .where([](auto tm, auto tn) { return decltype(tm)::value * decltype(tn)::value <= 16; })
//     -> "tunekit::static_space: a where() predicate must return a compile-time boolean
//         (hana::bool_c, or a comparison of hana::int_c values)"
//   .where([](auto tm) { ... }) on two parameters
//     -> "tunekit::static_space: a where() predicate must be callable (as const) with one
//         integral constant per parameter, ..."
//   .with(tiles, [](auto tm, auto tn) { return [](int&) { ... }; })  (one lambda type per point)
//     -> "tunekit::static_space: the factory must return one type for every point (or types
//         convertible to the first point's): ..."
//   .with(space, factory) where the constraints leave nothing
//     -> "tunekit::static_space: the where() constraints leave no valid point"
//   .with(tiles, [](auto tm) { ... })  (not one integral constant per parameter)
//     -> "tunekit::static_space: the factory must be callable (as const) with one integral
//         constant per parameter, ..."
//   tunekit::param("TM", hana::make_tuple(1, 2))  (runtime values)
//     -> "tunekit::param: the values must be compile-time integers, e.g. hana::tuple_c<int, 1,
//         2, 4>"
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>
#include <tunekit/tunekit.hpp>
#include <type_traits>
#include <vector>

#include "../support.hpp"

namespace hana = boost::hana;
using namespace tunekit;
using test::SizeKey;
using test::VirtualClient;

namespace {

using Values = std::vector<std::int64_t>;

auto tile_space() {
  return static_space("tiles", param("TM", hana::tuple_c<int, 1, 2, 4, 8>),
                      param("TN", hana::tuple_c<int, 1, 2, 4, 8>))
      .where([](auto tm, auto tn) { return tm * tn <= hana::int_c<16>; });
}

std::vector<Values> brute_force_tiles() {
  std::vector<Values> points;
  for (std::int64_t tm : {1, 2, 4, 8})
    for (std::int64_t tn : {1, 2, 4, 8})
      if (tm * tn <= 16) points.push_back({tm, tn});
  return points;
}

template <class Space>
std::vector<Values> points_of(const Space& space) {
  std::vector<Values> points;
  hana::for_each(space.points(), [&](auto point) {
    points.push_back(hana::unpack(
        point, [](auto... v) { return Values{static_cast<std::int64_t>(decltype(v)::value)...}; }));
  });
  return points;
}

std::vector<Values> configs_of(const ExpandedSpace& expanded) {
  std::vector<Values> configs;
  for (const Config& c : expanded.configs()) configs.push_back(c.values());
  return configs;
}

// Sums with `Unroll` elements per step into `Accumulators` independent sums. Only meaningful when
// the accumulators divide the unroll factor: instantiating any other combination fails to compile.
template <int Unroll, int Accumulators>
float blocked_sum(const std::vector<float>& values) {
  static_assert(Accumulators <= Unroll && Unroll % Accumulators == 0,
                "blocked_sum: invalid combination instantiated");
  std::array<float, Accumulators> sums{};
  std::size_t i = 0;
  for (; i + Unroll <= values.size(); i += Unroll) {
    for (int u = 0; u < Unroll; ++u)
      sums[u % Accumulators] += values[i + static_cast<std::size_t>(u)];
  }
  for (; i < values.size(); ++i) sums[0] += values[i];
  return std::accumulate(sums.begin(), sums.end(), 0.0f);
}

constexpr int log2_of(int x) { return x <= 1 ? 0 : 1 + log2_of(x / 2); }

// Deterministic synthetic cost with a unique optimum at TM=2, TN=4.
constexpr double tile_seconds(int tm, int tn) {
  const int dm = log2_of(tm) - 1, dn = log2_of(tn) - 2;
  return 1e-3 * (1 + 0.1 * dm * dm + 0.1 * dn * dn);
}

template <int TM, int TN>
int tiled(VirtualClient& client, int&) {
  static_assert(TM * TN <= 16, "tiled: invalid combination instantiated");
  client.spend(tile_seconds(TM, TN));
  return TM * 100 + TN;
}

auto key_of_size = [](const int& n) { return SizeKey{static_cast<std::uint64_t>(n)}; };

template <class Factory>
auto tiled_set(const Factory& factory) {
  return TunableSet{key_of_size, CloneInputs{}}
      .with(Tunable{"baseline", [](VirtualClient& client, int&) { return client.spend(5e-3), -1; }})
      .with(tile_space(), factory);
}

auto make_tiled = [](auto tm, auto tn) { return &tiled<decltype(tm)::value, decltype(tn)::value>; };

}  // namespace

TEST_CASE("a static space's points are the cartesian product its constraints keep",
          "[static_space]") {
  const auto tiles = tile_space();
  STATIC_REQUIRE(decltype(tiles)::size() == 13);  // a constant expression
  STATIC_REQUIRE(decltype(tiles)::unconstrained_size() == 16);
  std::array<int, tiles.size()> one_slot_per_point{};
  CHECK(one_slot_per_point.size() == brute_force_tiles().size());

  CHECK(points_of(tiles) == brute_force_tiles());
  const Space runtime = tiles.to_space();
  CHECK(runtime.name() == "tiles");
  CHECK(runtime.parameter_count() == 2);
  const ExpandedSpace expanded = runtime.expand();
  CHECK(configs_of(expanded) == brute_force_tiles());
  CHECK(expanded.unconstrained_size() == 16);
  CHECK(expanded[0].names() == std::vector<std::string>{"TM", "TN"});
}

TEST_CASE("chained where() calls on a static space each filter what the previous kept",
          "[static_space]") {
  const auto divisible =
      static_space("chained", param("A", hana::tuple_c<int, 1, 2, 3, 4, 6>),
                   param("B", hana::tuple_c<int, 12, 18>), param("C", hana::range_c<int, 0, 2>))
          .where([](auto a, auto b, auto) { return b % a == hana::int_c<0>; });
  const auto odd = divisible.where(
      [](auto a, auto, auto c) { return (a + c) % hana::int_c<2> == hana::int_c<1>; });
  STATIC_REQUIRE(!std::is_same_v<decltype(divisible), decltype(odd)>);
  STATIC_REQUIRE(decltype(divisible)::size() == 9 * 2);  // the first space is unchanged

  std::vector<Values> expected;
  for (std::int64_t a : {1, 2, 3, 4, 6})
    for (std::int64_t b : {12, 18})
      for (std::int64_t c : {0, 1})
        if (b % a == 0 && (a + c) % 2 == 1) expected.push_back({a, b, c});
  REQUIRE(expected.size() == 9);
  STATIC_REQUIRE(decltype(odd)::size() == 9);
  CHECK(points_of(odd) == expected);
  CHECK(configs_of(odd.to_space().expand()) == expected);
  CHECK(odd.to_space().expand().unconstrained_size() == 5 * 2 * 2);
}

TEST_CASE("a static space instantiates only its valid points, one candidate each",
          "[static_space]") {
  // blocked_sum static_asserts on invalid combinations: this compiles only because the
  // constraint removes them before the factory sees them.
  const auto blocking = static_space("sum", param("U", hana::tuple_c<int, 1, 2, 4, 8>),
                                     param("A", hana::tuple_c<int, 1, 2, 4, 8>))
                            .where([](auto u, auto a) { return a <= u; });
  STATIC_REQUIRE(decltype(blocking)::size() == 10);
  int factory_calls = 0;
  const auto set =
      TunableSet{[](const std::vector<float>& v) { return SizeKey{v.size()}; }, CloneInputs{}}.with(
          blocking, [&](auto u, auto a) {
            ++factory_calls;
            return &blocked_sum<decltype(u)::value, decltype(a)::value>;
          });
  CHECK(factory_calls == 10);  // once per valid point, at construction
  REQUIRE(set.size() == 10);
  CHECK(set.name(0) == "sum[U=1,A=1]");
  CHECK(set.name(9) == "sum[U=8,A=8]");

  std::vector<float> values(1003);
  std::iota(values.begin(), values.end(), 1.0f);
  HostClient host;
  for (std::size_t i = 0; i < set.size(); ++i) {
    INFO(set.name(i));
    CHECK(set.call(set.locate(i), host, values) == Approx(1003.0 * 1004.0 / 2));
  }
}

TEST_CASE("a static space in a tunable set is tuned, named and dispatched like a runtime one",
          "[static_space][tuner]") {
  LocalTuner<SizeKey> tuner("static tiles", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] { return tiled_set(make_tiled); });
  REQUIRE(set.size() == 1 + 13);
  CHECK(set.name(0) == "baseline");
  CHECK(set.name(1) == "tiles[TM=1,TN=1]");
  CHECK(set.name(7) == "tiles[TM=2,TN=4]");
  REQUIRE(set.space_of_entry(1) != nullptr);
  CHECK(configs_of(*set.space_of_entry(1)) == brute_force_tiles());

  CHECK(tuner.execute(client.id(), client, set, 64) == 204);
  const auto report = tuner.tuner(client.id()).report(SizeKey{64});
  REQUIRE(report);
  REQUIRE(report->winner());
  CHECK(report->winner()->name == "tiles[TM=2,TN=4]");
  CHECK(report->winner()->median == Approx(tile_seconds(2, 4)));

  // A known key dispatches to the winner without measuring again.
  const std::size_t measured = client.measurements();
  CHECK(tuner.execute(client.id(), client, set, 64) == 204);
  CHECK(tuner.execute(client.id(), client, set, 50) == 204);  // anchored to 64 too
  CHECK(client.measurements() == measured);

  // The recorded outcomes replay as the same space.
  const auto table = replay_table_from(*report, "tiles");
  CHECK(table.size() == 13);
  CHECK(*table.at("TM=2,TN=4").time == Approx(tile_seconds(2, 4)));
}

TEST_CASE("a static space's winner survives in the persistent cache", "[static_space][tuner]") {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "tunekit-static-space-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  const std::filesystem::path dir = pattern;
  Settings settings = test::test_settings();
  settings.persistent_cache = true;
  settings.cache_dir = dir;
  {
    LocalTuner<SizeKey> tuner("static tiles cached", settings);
    VirtualClient client;
    const auto& set = tuner.init([] { return tiled_set(make_tiled); });
    CHECK(tuner.execute(client.id(), client, set, 16) == 204);
    CHECK(client.measurements() > 0);
  }
  {
    LocalTuner<SizeKey> tuner("static tiles cached", settings);
    VirtualClient client;
    const auto& set = tuner.init([] { return tiled_set(make_tiled); });
    CHECK(tuner.execute(client.id(), client, set, 16) == 204);
    CHECK(client.measurements() == 0);  // read back, not tuned
  }
  std::filesystem::remove_all(dir);
}
