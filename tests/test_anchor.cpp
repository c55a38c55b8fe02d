#include <catch2/catch.hpp>
#include <tunekit/anchor.hpp>

using tunekit::anchor;

TEST_CASE("anchor rounds up to the next power of two", "[anchor]") {
  CHECK(anchor(0) == 0);
  CHECK(anchor(1) == 1);
  CHECK(anchor(2) == 2);
  CHECK(anchor(3) == 4);
  CHECK(anchor(1000) == 1024);
  CHECK(anchor(1024) == 1024);
  CHECK(anchor(1025) == 2048);
}

TEST_CASE("anchor caps at max and then floors at min", "[anchor]") {
  CHECK(anchor(5000, 4096) == 4096);
  CHECK(anchor(3, {}, 16) == 16);
  CHECK(anchor(100, 64, 16) == 64);
  CHECK(anchor(2, 64, 16) == 16);
}

TEST_CASE("anchor supports other bases", "[anchor]") {
  CHECK(anchor(100, {}, {}, 4) == 256);
  CHECK(anchor(64, {}, {}, 4) == 64);
  CHECK(anchor(10, {}, {}, 10) == 10);
  CHECK(anchor(11, {}, {}, 10) == 100);
  CHECK_THROWS_AS(anchor(10, {}, {}, 1), std::invalid_argument);
}

TEST_CASE("anchor is exact where a float version rounds away", "[anchor]") {
  constexpr std::uint64_t p29 = std::uint64_t{1} << 29;
  constexpr std::uint64_t p31 = std::uint64_t{1} << 31;
  CHECK(anchor(p29) == p29);
  CHECK(anchor(p31) == p31);
  CHECK(anchor(p29 + 1) == p29 * 2);
  CHECK(anchor((std::uint64_t{1} << 40) + 1) == std::uint64_t{1} << 41);
  CHECK(anchor((std::uint64_t{1} << 53) + 1) == std::uint64_t{1} << 54);
}

TEST_CASE("anchor saturates at the largest power that fits in 64 bits", "[anchor]") {
  constexpr std::uint64_t p63 = std::uint64_t{1} << 63;
  CHECK(anchor(p63) == p63);
  CHECK(anchor(p63 + 1) == p63);
  CHECK(anchor(~std::uint64_t{0}) == p63);
}

TEST_CASE("anchor is usable at compile time", "[anchor]") {
  static_assert(anchor(1000) == 1024);
  static_assert(anchor(5000, 4096) == 4096);
  SUCCEED();
}

TEST_CASE("Anchored fields round on construction with their declared bounds", "[anchor]") {
  tunekit::Anchored<std::uint64_t> plain = 1000;
  tunekit::Anchored<std::uint64_t, 4096, 16> bounded = 5000;
  tunekit::Anchored<std::uint32_t, 0, 16> floored = 3u;
  CHECK(plain == 1024u);
  CHECK(bounded == 4096u);
  CHECK(floored == 16u);
  CHECK(tunekit::Anchored<std::uint64_t>(1000) == tunekit::Anchored<std::uint64_t>(1024));
}
