// A winner that is not noise: the contenders for the win are re-measured interleaved, so that
// moments of the machine (a slow second) fall on all of them alike.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <tunekit/tunekit.hpp>
#include <vector>

#include "support.hpp"

using namespace tunekit;
using test::VirtualClient;

TEST_CASE("interleaved rounds time every contender once per round, in a shuffled order",
          "[benchmark][confirm]") {
  VirtualClient client;
  std::vector<std::string> calls;
  const auto run_a = [&] { calls.push_back("a"), client.spend(1e-3); };
  const auto run_b = [&] { calls.push_back("b"), client.spend(2e-3); };
  const auto run_c = [&] { calls.push_back("c"), client.spend(3e-3); };
  const std::vector<Contender> contenders{{FunctionRef<void()>(run_a), 1},
                                          {FunctionRef<void()>(run_b), 2},
                                          {FunctionRef<void()>(run_c), 1}};
  const auto times = measure_interleaved(client, contenders, {"a", "b", "c"}, 8, 42);
  REQUIRE(times.size() == 3);
  for (std::size_t c = 0; c < 3; ++c) {
    CHECK_FALSE(times[c].error);
    REQUIRE(times[c].samples.size() == 8);
    for (double t : times[c].samples) CHECK(t == Approx(1e-3 * static_cast<double>(c + 1)));
  }
  REQUIRE(calls.size() == 8 * 4);  // b's batch is 2 calls
  // Every round holds each contender once; not every round in the same order.
  std::vector<std::string> firsts;
  for (std::size_t at = 0, round = 0; round < 8; ++round) {
    std::string order;
    for (int k = 0; k < 4; ++k) order += calls[at++];
    CHECK(std::count(order.begin(), order.end(), 'a') == 1);
    CHECK(std::count(order.begin(), order.end(), 'b') == 2);
    CHECK(std::count(order.begin(), order.end(), 'c') == 1);
    firsts.push_back(order.substr(0, 1));
  }
  CHECK(std::count(firsts.begin(), firsts.end(), firsts.front()) < 8);
}

TEST_CASE("a contender that fails in the rounds gets its error and no further rounds",
          "[benchmark][confirm]") {
  VirtualClient client;
  int failing_calls = 0;
  const auto works = [&] { client.spend(1e-3); };
  const auto fails = [&] {
    ++failing_calls;
    throw std::runtime_error("lost the device");
  };
  const auto times = measure_interleaved(
      client, {{FunctionRef<void()>(works), 1}, {FunctionRef<void()>(fails), 1}}, {"w", "f"}, 5, 1);
  CHECK(times[0].samples.size() == 5);
  CHECK_FALSE(times[0].error);
  REQUIRE(times[1].error);
  CHECK(times[1].error->tunable() == "f");
  CHECK(failing_calls == 1);
}
