// The strict readers of the benches' arguments (bench/arguments.hpp, and shape_lists.hpp's): a
// command line is hostile input, so a size is decimal digits from 1 to 2^31 - 1, and anything else
// is refused rather than read as far as it goes or wrapped to a huge allocation.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>

#include "../../bench/arguments.hpp"
#include "../../bench/shape_lists.hpp"

using tunekit::bench::parse_dims;
using tunekit::bench::parse_number;
using tunekit::bench::parse_shapes;
using tunekit::bench::parse_size;
using tunekit::bench::parse_unsigned;

TEST_CASE("a bench's size argument is plain decimal digits from 1 to 2^31 - 1", "[bench]") {
  CHECK(parse_size("1") == 1u);
  CHECK(parse_size("8192") == 8192u);
  CHECK(parse_size("2147483647") == 2147483647u);
  for (const char* refused : {"", "0", "2147483648", "99999999999", "-1", "+5", " 5", "5 ", "5k",
                              "0x10", "1e3", "18446744073709551617"}) {
    INFO("'" << refused << "'");
    CHECK_FALSE(parse_size(refused).has_value());
  }
}

TEST_CASE("a bench's ROWSxCOLS and MxNxK arguments take exactly their sizes", "[bench]") {
  CHECK(parse_dims<2>("65536x67") == std::array<std::size_t, 2>{65536, 67});
  CHECK(parse_dims<3>("997x1009x1013") == std::array<std::size_t, 3>{997, 1009, 1013});
  for (const char* refused :
       {"64", "64x", "x64", "64x0", "0x64", "64x64x64", "64xx64", "64X64", "64x-1", "64x64 "}) {
    INFO("'" << refused << "'");
    CHECK_FALSE(parse_dims<2>(refused).has_value());
  }
  CHECK_FALSE(parse_dims<3>("64x64").has_value());
  CHECK_FALSE(parse_dims<3>("64x64x64x64").has_value());

  const auto shapes = parse_shapes("1x2x3,4x5x6");
  REQUIRE(shapes.has_value());
  CHECK(shapes->size() == 2);
  CHECK((*shapes)[1] == tunekit::bench::Shape{4, 5, 6});
  CHECK(parse_shapes("real").has_value());
  // The names the messages give are the lists a --shapes argument reaches.
  CHECK(tunekit::bench::shape_list_names() == "real, real-small, held-out, held-out-small");
  for (const auto& list : tunekit::bench::shape_lists) {
    INFO(list.name);
    const auto named = parse_shapes(std::string(list.name));
    REQUIRE(named.has_value());
    CHECK(*named == list.shapes());
  }
  // The held-out list judges shapes nothing was tuned on: none of it may be in the real lists.
  auto held_out = parse_shapes("held-out");
  const auto held_out_small = parse_shapes("held-out-small");
  REQUIRE(held_out.has_value());
  REQUIRE(held_out_small.has_value());
  CHECK(held_out->size() == 12);
  CHECK(held_out_small->size() == 12);
  held_out->insert(held_out->end(), held_out_small->begin(), held_out_small->end());
  for (const auto& shape : *held_out) {
    CHECK(std::find(tunekit::bench::real_shapes().begin(), tunekit::bench::real_shapes().end(),
                    shape) == tunekit::bench::real_shapes().end());
    CHECK(std::find(tunekit::bench::real_small_shapes().begin(),
                    tunekit::bench::real_small_shapes().end(),
                    shape) == tunekit::bench::real_small_shapes().end());
  }
  for (const char* refused :
       {"", "1x2x3,", ",1x2x3", "1x2x3,,4x5x6", "1x2x3;4x5x6", "real,1x2x3"}) {
    INFO("'" << refused << "'");
    CHECK_FALSE(parse_shapes(refused).has_value());
  }
}

TEST_CASE("a bench's count and number arguments are read whole and bounded", "[bench]") {
  CHECK(parse_unsigned("0", 0, 10) == 0u);
  CHECK(parse_unsigned("18446744073709551615", 0, UINT64_MAX) == UINT64_MAX);
  CHECK_FALSE(parse_unsigned("18446744073709551616", 0, UINT64_MAX).has_value());  // no wrap
  CHECK_FALSE(parse_unsigned("11", 0, 10).has_value());
  CHECK_FALSE(parse_unsigned("0", 1, 10).has_value());
  CHECK(parse_number("0.01", 0, 1) == 0.01);
  CHECK(parse_number("2e-3", 0, 1) == 2e-3);
  CHECK(parse_number("0", 0, 1) == 0.0);
  for (const char* refused :
       {"", "-0.5", "+1", ".5", "1.5", "nan", "inf", "1e999", "0.5s", " 0.5", "0x1p-3"}) {
    INFO("'" << refused << "'");
    CHECK_FALSE(parse_number(refused, 0, 1).has_value());
  }
}
