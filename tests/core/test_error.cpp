// AutotuneError's text and summary (error.hpp).
#include <catch2/catch.hpp>
#include <tunekit/tunekit.hpp>

using namespace tunekit;

TEST_CASE("an error's summary is its first line, cut between words, never inside one", "[error]") {
  CHECK(AutotuneError(ErrorKind::build, "first line\nsecond").summary() == "first line");
  const std::string words =
      std::string(200, 'a') + " /a/long/path/to/a/file/in/a/deep/tree.cl:12:5: error";
  const std::string summary = AutotuneError(ErrorKind::build, words).summary();
  CHECK(summary == std::string(200, 'a') + " ...");  // not "/a/long/pa"
  const std::string one_word = std::string(239, 'b') + "\xc3\xa9" + std::string(50, 'c');
  CHECK(AutotuneError(ErrorKind::build, one_word).summary() == std::string(239, 'b') + " ...");
  std::vector<AutotuneError> errors{AutotuneError(ErrorKind::build, "x\n1"),
                                    AutotuneError(ErrorKind::runtime, "x"),
                                    AutotuneError(ErrorKind::build, "x\n2")};
  CHECK(group_failures({&errors[0], &errors[1], nullptr, &errors[2]}) ==
        std::vector<std::vector<std::size_t>>{{0, 3}, {1}});
}

TEST_CASE("AutotuneError messages name the tunable, the kind and the reason", "[error]") {
  AutotuneError e(ErrorKind::out_of_resources, "needs 96 KiB local memory, device has 48 KiB",
                  "tiled-64");
  CHECK(std::string(e.what()) ==
        "'tiled-64': out of resources: needs 96 KiB local memory, device has 48 KiB");
  CHECK(e.named("other").tunable() == "tiled-64");
  CHECK(AutotuneError(ErrorKind::runtime, "x").named("n").tunable() == "n");
}
