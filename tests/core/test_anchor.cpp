#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <tunekit/anchor.hpp>
#include <type_traits>

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
  // The order shows where min is above max: capped at 16, then floored at 64.
  CHECK(anchor(100, 16, 64) == 64);
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

TEST_CASE("anchor saturates upward past the largest power that fits in 64 bits", "[anchor]") {
  constexpr std::uint64_t p63 = std::uint64_t{1} << 63;
  constexpr std::uint64_t top = ~std::uint64_t{0};
  CHECK(anchor(p63) == p63);
  CHECK(anchor(p63 + 1) == top);  // 2^64 does not fit: the maximum, never 2^63 below the input
  CHECK(anchor(top) == top);
  CHECK(anchor(top - 1, {}, {}, 10) == top);
  CHECK(anchor(top, {}, {}, 10) == top);
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

namespace {

template <class T>
bool anchors_like_uint64() {
  // Every value near T's maximum anchors to a value at least as large as itself, in range.
  constexpr std::uint64_t top = std::numeric_limits<T>::max();
  bool ok = true;
  for (std::uint64_t v = top > 300 ? top - 300 : 0;; ++v) {
    const std::uint64_t got = tunekit::Anchored<T>(static_cast<T>(v)).value();
    ok = ok && got >= v && got <= top;
    if (v == top) break;
  }
  return ok;
}

}  // namespace

TEST_CASE("Anchored of narrow types saturates at the type's maximum instead of wrapping to 0",
          "[anchor]") {
  // Seen on main: all three gave 0 (2^32, 2^16, 2^8 cast down).
  CHECK(tunekit::Anchored<std::uint32_t>(3000000000u).value() == 4294967295u);
  CHECK(tunekit::Anchored<std::uint32_t>(4000000000u).value() == 4294967295u);
  CHECK(tunekit::Anchored<std::uint16_t>(40000).value() == 65535);
  CHECK(tunekit::Anchored<std::uint8_t>(200).value() == 255);
  CHECK(tunekit::Anchored<std::uint8_t>(100).value() == 128);
  CHECK(tunekit::Anchored<std::uint8_t>(128).value() == 128);
  CHECK(tunekit::Anchored<std::uint16_t>(1).value() == 1);
  CHECK(tunekit::Anchored<std::uint32_t>(0u).value() == 0);
  // 2^64 - 1 and 2^63 + 1 stay at or above their input.
  CHECK(tunekit::Anchored<std::uint64_t>(~std::uint64_t{0}).value() == ~std::uint64_t{0});
  CHECK(tunekit::Anchored<std::uint64_t>((std::uint64_t{1} << 63) + 1).value() ==
        ~std::uint64_t{0});
  CHECK(anchors_like_uint64<std::uint8_t>());
  CHECK(anchors_like_uint64<std::uint16_t>());
  CHECK(anchors_like_uint64<std::uint32_t>());
  CHECK(anchors_like_uint64<std::uint64_t>());
  // Other bases near the maximum too.
  CHECK(tunekit::Anchored<std::uint8_t, 0, 0, 10>(101).value() == 255);
  CHECK(tunekit::Anchored<std::uint8_t, 0, 0, 10>(99).value() == 100);
  static_assert(tunekit::Anchored<std::uint8_t>(200).value() == 255);
}

TEST_CASE("Anchored refuses values its type cannot hold instead of wrapping them", "[anchor]") {
  using tunekit::AutotuneError;
  using tunekit::ErrorKind;
  auto kind_of = [](auto&& make) {
    try {
      make();
    } catch (const AutotuneError& e) {
      return e.kind();
    }
    return ErrorKind::skipped;
  };
  CHECK(kind_of([] { return tunekit::Anchored<std::uint8_t>(300); }) == ErrorKind::invalid_key);
  CHECK(kind_of([] { return tunekit::Anchored<std::uint16_t>(-1); }) == ErrorKind::invalid_key);
  CHECK(kind_of([] { return tunekit::Anchored<std::uint64_t>(-5LL); }) == ErrorKind::invalid_key);
  CHECK(kind_of([] { return tunekit::Anchored<std::uint32_t>(std::uint64_t{1} << 32); }) ==
        ErrorKind::invalid_key);
  CHECK_THROWS_WITH(tunekit::Anchored<std::uint8_t>(300),
                    Catch::Contains("300") && Catch::Contains("255"));
  CHECK(tunekit::Anchored<std::uint8_t>(255).value() == 255);
}

TEST_CASE("Anchored is refused at compile time for types it cannot hold exactly", "[anchor]") {
  // The class itself static_asserts; these check the constructor is not even viable for them.
  static_assert(!std::is_constructible_v<tunekit::Anchored<std::uint8_t>, double>);
  static_assert(!std::is_constructible_v<tunekit::Anchored<std::uint64_t>, float>);
  static_assert(!std::is_constructible_v<tunekit::Anchored<std::uint64_t>, bool>);
  static_assert(std::is_constructible_v<tunekit::Anchored<std::uint8_t>, int>);
  SUCCEED();
}
