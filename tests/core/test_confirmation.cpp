// The confirmation race's bookkeeping on outcomes alone (engine/confirmation.hpp): who races, and
// what the race's times then say of every candidate. No device, no client, no timing.
#include <catch2/catch.hpp>
#include <cmath>
#include <optional>
#include <string>
#include <tunekit/engine/confirmation.hpp>
#include <tunekit/error.hpp>
#include <vector>

using namespace tunekit;

namespace {

AutotuneOutcome measured(std::string name, double median) {
  AutotuneOutcome o;
  o.name = std::move(name);
  o.status = OutcomeStatus::measured;
  o.median = median;
  o.low = 0.9 * median, o.high = 1.1 * median, o.min = 0.8 * median, o.max = 1.2 * median;
  o.spread = 0.01 * median;
  o.samples = 5;
  o.paired = true;
  return o;
}

AutotuneOutcome failed(std::string name) {
  AutotuneOutcome o;
  o.name = std::move(name);
  o.status = OutcomeStatus::failed;
  o.error = AutotuneError(ErrorKind::build, "no", o.name);
  return o;
}

// A race whose contender k was timed samples[k] (an empty list: it failed in the race).
RaceResult race_of(const std::vector<std::vector<double>>& samples, std::size_t best,
                   std::size_t runner_up, bool separated) {
  RaceResult race;
  for (const auto& s : samples) {
    InterleavedTimes t;
    t.samples = s;
    if (s.empty()) t.error = AutotuneError(ErrorKind::launch, "refused beside the others");
    race.times.push_back(t);
    race.left_out.push_back(false);
    race.versus_best.push_back(1);
  }
  race.best = best;
  race.runner_up = runner_up;
  race.separated = separated;
  race.rounds = 7;
  return race;
}

}  // namespace

TEST_CASE("the fastest working candidate ignores failures, and there is none when none works",
          "[confirmation]") {
  CHECK_FALSE(detail::fastest_working({}).has_value());
  CHECK_FALSE(detail::fastest_working({failed("a"), failed("b")}).has_value());
  const std::vector<AutotuneOutcome> outcomes{measured("a", 3), failed("b"), measured("c", 2),
                                              measured("d", 2)};
  CHECK(detail::fastest_working(outcomes) == std::optional<std::size_t>(2));  // the first of a tie
}

TEST_CASE(
    "a race's contenders are the fastest working ones, at most as many as asked, each within the "
    "factor of the fastest",
    "[confirmation]") {
  const std::vector<AutotuneOutcome> outcomes{measured("a", 1.5), failed("b"),
                                              measured("c", 1.0), measured("d", 1.2),
                                              measured("e", 1.0), measured("f", 3.0)};
  using Indices = std::vector<std::size_t>;
  CHECK(detail::race_contenders(outcomes, 6, 10) == Indices{2, 4, 3, 0, 5});
  CHECK(detail::race_contenders(outcomes, 3, 10) == Indices{2, 4, 3});
  CHECK(detail::race_contenders(outcomes, 6, 1.25) == Indices{2, 4, 3});
  CHECK(detail::race_contenders(outcomes, 6, 1.0) == Indices{2, 4});  // ties stay, in set order
  CHECK(detail::race_contenders({measured("a", 1), measured("b", 2)}, 6, 1.5).size() == 1);
  CHECK(detail::race_contenders({failed("a")}, 6, 10).empty());
}

TEST_CASE(
    "a race's times replace its contenders' and every other candidate is scaled to the race's "
    "kind of time",
    "[confirmation]") {
  // Searched: c 1.0, d 1.2 raced; a (1.5) did not. The race times c at 2.0 (twice its search)
  // and d at 2.2: a is scaled by 2, so it stays behind both.
  std::vector<AutotuneOutcome> outcomes{measured("a", 1.5), failed("b"), measured("c", 1.0),
                                        measured("d", 1.2)};
  const RaceResult race = race_of({{2.0, 2.0, 2.0}, {2.2, 2.2, 2.2}}, 0, 1, true);
  const double ratio = detail::record_race(outcomes, {2, 3}, race);
  CHECK(ratio == Approx(2.0));
  CHECK(outcomes[2].median == Approx(2.0));
  CHECK(outcomes[3].median == Approx(2.2));
  CHECK(outcomes[2].samples == 5 + 3);
  CHECK_FALSE(outcomes[2].paired);  // its times are the interleaved rounds' now
  CHECK(outcomes[0].median == Approx(3.0));
  CHECK(outcomes[0].min == Approx(2.4));
  CHECK(outcomes[0].paired);  // not raced: only scaled
  CHECK_FALSE(outcomes[2].tied);
  CHECK_FALSE(outcomes[3].tied);
  CHECK(outcomes[1].status == OutcomeStatus::failed);  // untouched
}

TEST_CASE(
    "a race that cannot tell the best two apart marks them tied, and clears every earlier tie",
    "[confirmation]") {
  std::vector<AutotuneOutcome> outcomes{measured("a", 1.0), measured("b", 1.01),
                                        measured("c", 1.02)};
  outcomes[2].tied = true;  // said by an earlier race
  const RaceResult race = race_of({{1.0}, {1.0}, {1.1}}, 1, 0, false);
  (void)detail::record_race(outcomes, {0, 1, 2}, race);
  CHECK(outcomes[0].tied);
  CHECK(outcomes[1].tied);
  CHECK_FALSE(outcomes[2].tied);
  // A later race without c, which a first race had tied: only the last race says who is tied.
  std::vector<AutotuneOutcome> again{measured("a", 1.0), measured("b", 1.2), measured("c", 1.01)};
  again[0].tied = again[2].tied = true;
  (void)detail::record_race(again, {0, 1}, race_of({{1.0}, {1.2}}, 0, 1, true));
  CHECK_FALSE(again[0].tied);
  CHECK_FALSE(again[2].tied);
}

TEST_CASE(
    "a contender that fails in the race fails, naming it, and one left out early is put on the "
    "best's scale",
    "[confirmation]") {
  std::vector<AutotuneOutcome> outcomes{measured("a", 1.0), measured("b", 1.1), measured("c", 1.2)};
  // b failed beside the others; c was left out after one round, timed 4.0 in it, where it ran
  // 1.5x the best: its time becomes the best's median over all rounds (2.0) times 1.5.
  RaceResult race = race_of({{2.0, 2.0, 2.0}, {}, {4.0}}, 0, 2, true);
  race.left_out[2] = true;
  race.versus_best[1] = std::nan("");
  race.versus_best[2] = 1.5;
  const double ratio = detail::record_race(outcomes, {0, 1, 2}, race);
  CHECK(ratio == Approx(2.0));
  CHECK(outcomes[1].status == OutcomeStatus::failed);
  REQUIRE(outcomes[1].error);
  CHECK(outcomes[1].error->kind() == ErrorKind::launch);
  CHECK(outcomes[1].error->message().find("failed when re-measured with the best") !=
        std::string::npos);
  CHECK(outcomes[2].median == Approx(3.0));
}

TEST_CASE("a race whose winner failed in it scales nothing", "[confirmation]") {
  std::vector<AutotuneOutcome> outcomes{measured("a", 1.0), measured("b", 1.1), measured("c", 5.0)};
  const RaceResult race = race_of({{}, {2.0}}, 0, 1, true);
  CHECK(detail::record_race(outcomes, {0, 1}, race) == 1.0);
  CHECK(outcomes[0].status == OutcomeStatus::failed);
  CHECK(outcomes[2].median == Approx(5.0));
}
