// The sample statistics of the measurement (benchmark.hpp).
#include <catch2/catch.hpp>
#include <tunekit/tunekit.hpp>

using namespace tunekit;

TEST_CASE("summaries use the median and the median absolute deviation", "[benchmark]") {
  const auto s = summarize({1, 2, 3, 4, 100});
  CHECK(s.median == 3);
  CHECK(s.spread == 1);
  CHECK(s.min == 1);
  CHECK(s.max == 100);
  CHECK(summarize({1, 2, 3, 4}).median == 2.5);
}
