// The tuning plan on its own: which candidates, in which order, under which budget; no device,
// no client, no timing.
#include <catch2/catch.hpp>
#include <optional>
#include <stdexcept>
#include <tunekit/engine/tuning_plan.hpp>
#include <tunekit/tunekit.hpp>
#include <vector>

using namespace tunekit;

namespace {

using Priorities = std::vector<std::optional<CandidatePriority>>;
using Indices = std::vector<std::size_t>;

// 6 configurations; searches start at A=2,B=1 (configuration 2).
ExpandedSpace six() {
  return space("six").parameter("A", {1, 2, 3}).parameter("B", {1, 2}).start_at("A=2,B=1").expand();
}
ExpandedSpace three() { return space("three").parameter("C", {1, 2, 3}).expand(); }

SearchSettings small_budget() {
  SearchSettings search;
  search.fraction = 0;
  search.min_evaluations = 4;
  search.patience = 9;
  search.warm_patience = 2;
  return search;
}

}  // namespace

TEST_CASE(
    "a plan orders levels by group then own priority, keeps set order inside a level, and "
    "puts negatively prioritised candidates last",
    "[plan]") {
  const std::vector<PlanEntry> singles{{0, 1, nullptr}, {1, 1, nullptr}, {2, 1, nullptr},
                                       {3, 1, nullptr}, {4, 1, nullptr}, {5, 1, nullptr}};
  const Priorities priorities{CandidatePriority{0, 0},  CandidatePriority{1, 0},
                              CandidatePriority{-1, 5}, CandidatePriority{1, 2},
                              CandidatePriority{0, 0},  CandidatePriority{1, -1}};
  const TuningPlan plan(singles, priorities, SearchSettings{});
  REQUIRE(plan.levels().size() == 4);
  CHECK(plan.levels()[0].singles == Indices{3});     // group 1, own 2
  CHECK(plan.levels()[1].singles == Indices{1});     // group 1, own 0
  CHECK(plan.levels()[2].singles == Indices{0, 4});  // group 0: set order
  CHECK(plan.levels()[3].singles == Indices{2, 5});  // skipped ones, set order
  for (const auto& level : plan.levels()) {
    CHECK(level.spaces.empty());
    CHECK(level.planned_measurements == level.singles.size());
  }
}

TEST_CASE(
    "a tunable in several groups takes its best group's priority, and is skipped only when "
    "every group skips it",
    "[plan]") {
  using P = CandidatePriority;
  const auto same = [](P a, P b) { return a.group == b.group && a.own == b.own; };
  CHECK(same(best_priority({P{0, 0}, P{2, 1}}), P{2, 1}));
  CHECK(same(best_priority({P{2, 1}, P{2, 3}, P{1, 9}}), P{2, 3}));  // group first, then own
  CHECK(same(best_priority({P{5, -1}, P{1, 0}}), P{1, 0}));    // a skipping membership is no best
  CHECK(same(best_priority({P{-1, 4}, P{3, -2}}), P{-1, 4}));  // all skip: the first's, skipped
  CHECK(best_priority({P{-1, 4}, P{3, -2}}).skipped());
  CHECK(same(best_priority({}), P{}));
  // In a plan: candidate 1 is in a group of priority 0 and one of priority 2 (its best).
  const std::vector<PlanEntry> singles{{0, 1, nullptr}, {1, 1, nullptr}, {2, 1, nullptr}};
  const TuningPlan plan(
      singles, {P{2, 0}, best_priority({P{0, 0}, P{2, 0}}), best_priority({P{-1, 0}, P{0, 0}})},
      SearchSettings{});
  REQUIRE(plan.levels().size() == 2);
  CHECK(plan.levels()[0].singles == Indices{0, 1});
  CHECK(plan.levels()[1].singles == Indices{2});  // priority 0, not a last resort
}

TEST_CASE("a plan leaves out candidates whose priority could not be computed", "[plan]") {
  const std::vector<PlanEntry> entries{{0, 1, nullptr}, {1, 1, nullptr}, {2, 1, nullptr}};
  const TuningPlan plan(entries, {CandidatePriority{}, std::nullopt, CandidatePriority{}},
                        SearchSettings{});
  REQUIRE(plan.levels().size() == 1);
  CHECK(plan.levels()[0].singles == Indices{0, 2});
}

TEST_CASE(
    "a plan splits each level into single tunables and spaces, and counts a whole space "
    "by its search budget",
    "[plan]") {
  const ExpandedSpace big = six();
  const ExpandedSpace small = three();
  // entries: single 0 | space "six" 1..6 | single 7 | space "three" 8..10
  const std::vector<PlanEntry> entries{
      {0, 1, nullptr}, {1, 6, &big}, {7, 1, nullptr}, {8, 3, &small}};
  Priorities priorities(11, CandidatePriority{});
  priorities[9] = CandidatePriority{0, -1};  // one configuration of "three" only as a last resort
  const TuningPlan plan(entries, priorities, small_budget());
  REQUIRE(plan.levels().size() == 2);

  const PlannedLevel& first = plan.levels()[0];
  CHECK(first.singles == Indices{0, 7});
  REQUIRE(first.spaces.size() == 2);
  CHECK(first.spaces[0].entry == 1);
  CHECK(first.spaces[0].members == Indices{1, 2, 3, 4, 5, 6});
  CHECK(first.spaces[0].whole);
  CHECK(first.spaces[1].entry == 3);
  CHECK(first.spaces[1].members == Indices{8, 10});
  CHECK_FALSE(first.spaces[1].whole);  // too few to search: measured one by one
  // 2 singles + "six" searched within 4 evaluations + the 2 members of "three"
  CHECK(first.planned_measurements == 2 + 4 + 2);

  const PlannedLevel& last = plan.levels()[1];
  CHECK(last.singles.empty());
  REQUIRE(last.spaces.size() == 1);
  CHECK(last.spaces[0].members == Indices{9});
  CHECK(last.planned_measurements == 1);

  // What a climb from a winner may step to: the configurations of a space searched whole.
  for (std::size_t i = 1; i <= 6; ++i) CHECK(plan.searched_whole(i));
  for (const std::size_t i : {0, 7, 8, 9, 10, 11}) {
    INFO(i);
    CHECK_FALSE(plan.searched_whole(i));  // singles, a space split across levels, past the end
  }
}

TEST_CASE("a whole space smaller than its budget plans every configuration", "[plan]") {
  const ExpandedSpace small = three();
  SearchSettings search = small_budget();
  search.min_evaluations = 50;
  const TuningPlan plan({{0, 3, &small}}, Priorities(3, CandidatePriority{}), search);
  REQUIRE(plan.levels().size() == 1);
  CHECK(plan.levels()[0].planned_measurements == 3);
}

TEST_CASE("a plan's start points: the space's own, then other keys' winners inside it", "[plan]") {
  const ExpandedSpace big = six();
  const std::vector<PlanEntry> entries{{0, 1, nullptr}, {1, 6, &big}, {7, 1, nullptr}};
  const TuningPlan plan(entries, Priorities(8, CandidatePriority{}), small_budget());
  const Indices known{7, 5, 0, 1};  // winners of other keys: two singles, two configurations
  CHECK(plan.starts(1, known) == Indices{1 + 2, 5, 1});
  CHECK(plan.known_configs(1, known) == Indices{4, 0});
  CHECK(plan.starts(1, {}) == Indices{3});
  CHECK(plan.known_configs(0, known) == Indices{0});
}

TEST_CASE("a plan knows which entry each candidate belongs to", "[plan]") {
  const ExpandedSpace big = six();
  const TuningPlan plan({{0, 1, nullptr}, {1, 6, &big}, {7, 1, nullptr}},
                        Priorities(8, CandidatePriority{}), SearchSettings{});
  CHECK(plan.entry_of(0) == 0);
  CHECK(plan.entry_of(1) == 1);
  CHECK(plan.entry_of(6) == 1);
  CHECK(plan.entry_of(7) == 2);
  CHECK_THROWS_AS(plan.entry_of(8), std::out_of_range);
  CHECK_FALSE(plan.in_space(0));
  CHECK(plan.in_space(4));
  CHECK_FALSE(plan.in_space(7));
  CHECK_FALSE(plan.in_space(8));  // past the end: no space
}

TEST_CASE("a plan needs one priority per candidate, an empty set plans nothing", "[plan]") {
  CHECK_THROWS_AS(TuningPlan({{0, 2, nullptr}}, Priorities(1), SearchSettings{}),
                  std::invalid_argument);
  const TuningPlan empty({}, {}, SearchSettings{});
  CHECK(empty.levels().empty());
  CHECK_FALSE(empty.in_space(0));
}

TEST_CASE("a plan takes a tunable set's shape as the set gives it", "[plan]") {
  struct Key {
    BOOST_HANA_DEFINE_STRUCT(Key, (int, n));
  };
  const auto set = TunableSet{[](int n) { return Key{n}; }, CloneInputs{}}
                       .with(Tunable{"one", [](int n) { return n; }})
                       .with(space("s").parameter("P", {1, 2, 4}),
                             [](const Config& c) {
                               return [p = c["P"]](int n) { return static_cast<int>(n * p); };
                             })
                       .with(Tunable{"two", [](int n) { return n + 1; }});
  const std::vector<PlanEntry> entries = plan_entries(set);
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].first == 0);
  CHECK(entries[0].size == 1);
  CHECK(entries[0].space == nullptr);
  CHECK(entries[1].first == 1);
  CHECK(entries[1].size == 3);
  CHECK(entries[1].space == set.space_of_entry(1));
  CHECK(entries[2].first == 4);
  CHECK(entries[2].space == nullptr);
}
