#include <catch2/catch.hpp>
#include <cereal/archives/binary.hpp>
#include <cereal/archives/json.hpp>
#include <cereal/types/string.hpp>
#include <charconv>
#include <cmath>
#include <sstream>
#include <tunekit/key.hpp>
#include <tunekit/key_cereal.hpp>
#include <unordered_set>

namespace app {
enum class Layout { row_major, col_major };

struct MatmulKey {
  BOOST_HANA_DEFINE_STRUCT(MatmulKey, (tunekit::Anchored<std::uint64_t>, m),
                           (tunekit::Anchored<std::uint64_t>, n),
                           (tunekit::Anchored<std::uint64_t>, k), (tunekit::DType, dtype));
};

struct MixedKey {
  BOOST_HANA_DEFINE_STRUCT(MixedKey, (std::int32_t, axis), (bool, transposed), (Layout, layout),
                           (std::string, tag), (std::uint8_t, vector_width));
};

struct PlainKey {
  int size;
  bool operator==(const PlainKey&) const = default;
  friend std::ostream& operator<<(std::ostream& os, const PlainKey& k) {
    return os << "size=" << k.size;
  }
};
}  // namespace app

template <>
struct std::hash<app::PlainKey> {
  std::size_t operator()(const app::PlainKey& k) const { return std::hash<int>{}(k.size); }
};

static_assert(tunekit::AutotuneKey<app::MatmulKey>);
static_assert(tunekit::AutotuneKey<app::MixedKey>);
static_assert(tunekit::AutotuneKey<app::PlainKey>);
static_assert(!tunekit::AutotuneKey<std::vector<int>>);

TEST_CASE("a reflected key prints its fields by name", "[key]") {
  app::MatmulKey key{1000, 1024, 64, tunekit::DType::f32};
  CHECK(tunekit::key_to_string(key) == "m=1024 n=1024 k=64 dtype=f32");
  app::MixedKey mixed{-1, true, app::Layout::col_major, "x", 4};
  CHECK(tunekit::key_to_string(mixed) == "axis=-1 transposed=true layout=1 tag=x vector_width=4");
}

TEST_CASE("keys that anchor to the same sizes are equal and hash equally", "[key]") {
  app::MatmulKey a{1000, 1000, 60, tunekit::DType::f32};
  app::MatmulKey b{1024, 1023, 64, tunekit::DType::f32};
  app::MatmulKey c{1024, 1024, 64, tunekit::DType::f16};
  CHECK(tunekit::KeyEqual{}(a, b));
  CHECK(tunekit::KeyHash{}(a) == tunekit::KeyHash{}(b));
  CHECK_FALSE(tunekit::KeyEqual{}(a, c));
}

TEST_CASE("key hashes spread distinct keys", "[key]") {
  std::unordered_set<std::size_t> hashes;
  for (std::uint64_t m = 1; m <= 1024; m *= 2)
    for (std::uint64_t n = 1; n <= 1024; n *= 2)
      hashes.insert(tunekit::KeyHash{}(app::MatmulKey{m, n, 1, tunekit::DType::f32}));
  CHECK(hashes.size() == 121);
}

TEST_CASE("a non-reflected key uses its own hash, == and operator<<", "[key]") {
  app::PlainKey a{3}, b{3}, c{4};
  CHECK(tunekit::KeyEqual{}(a, b));
  CHECK_FALSE(tunekit::KeyEqual{}(a, c));
  CHECK(tunekit::KeyHash{}(a) == std::hash<int>{}(3));
  CHECK(tunekit::key_to_string(c) == "size=4");
}

TEST_CASE("a reflected key survives a cereal JSON round trip", "[key]") {
  app::MixedKey key{7, false, app::Layout::col_major, "with space", 8};
  std::stringstream stream;
  {
    cereal::JSONOutputArchive out(stream);
    out(cereal::make_nvp("key", key));
  }
  CHECK(stream.str().find("\"transposed\": false") != std::string::npos);
  app::MixedKey loaded{};
  {
    cereal::JSONInputArchive in(stream);
    in(cereal::make_nvp("key", loaded));
  }
  CHECK(tunekit::KeyEqual{}(key, loaded));
}

TEST_CASE("an anchored key survives a cereal binary round trip as plain numbers", "[key]") {
  app::MatmulKey key{4096, 100, 3, tunekit::DType::f16};
  std::stringstream stream;
  {
    cereal::BinaryOutputArchive out(stream);
    out(key);
  }
  CHECK(stream.str().size() == 3 * sizeof(std::uint64_t) + sizeof(tunekit::DType));
  app::MatmulKey loaded{};
  {
    cereal::BinaryInputArchive in(stream);
    in(loaded);
  }
  CHECK(tunekit::key_to_string(loaded) == "m=4096 n=128 k=4 dtype=f16");
}

namespace app {
struct FloatKey {
  BOOST_HANA_DEFINE_STRUCT(FloatKey, (double, x), (float, y));
};
struct TwoStrings {
  BOOST_HANA_DEFINE_STRUCT(TwoStrings, (std::string, a), (std::string, b));
};
}  // namespace app

TEST_CASE("floating key fields print so that different values never share a cache text", "[key]") {
  // Seen on main: both printed "x=1 y=1" and so shared one cache entry.
  const app::FloatKey a{1.0, 1.0f};
  const app::FloatKey b{1.0000001, 1.0000001f};
  CHECK_FALSE(tunekit::KeyEqual{}(a, b));
  CHECK(tunekit::key_to_string(a) != tunekit::key_to_string(b));
  CHECK(tunekit::key_to_string(a) == "x=1 y=1");
  // Every printed value reads back as the same number.
  for (const double v : {0.1, 1.0 / 3, 1e300, -2.5e-310, 123456789.123456789}) {
    const auto text = tunekit::key_to_string(app::FloatKey{v, static_cast<float>(v)});
    const auto x = text.substr(2, text.find(' ') - 2);
    const auto y = text.substr(text.find("y=") + 2);
    double read_x = 0;
    float read_y = 0;
    std::from_chars(x.data(), x.data() + x.size(), read_x);
    std::from_chars(y.data(), y.data() + y.size(), read_y);
    CHECK(read_x == v);
    CHECK(read_y == static_cast<float>(v));
  }
  // -0 equals 0 in memory, so it prints the same.
  CHECK(tunekit::key_to_string(app::FloatKey{-0.0, -0.0f}) == "x=0 y=0");
}

TEST_CASE("string key fields escape the separators: no two keys print the same", "[key]") {
  // Seen on main: both printed "a=x b=y b=z".
  const app::TwoStrings first{"x b=y", "z"};
  const app::TwoStrings second{"x", "y b=z"};
  CHECK(tunekit::key_to_string(first) != tunekit::key_to_string(second));
  CHECK(tunekit::key_to_string(first) == "a=x\\x20b\\x3dy b=z");
  CHECK(tunekit::key_to_string(app::TwoStrings{"a\\x20", "\n"}) == "a=a\\x5cx20 b=\\x0a");
  CHECK(tunekit::key_to_string(app::TwoStrings{"", ""}) == "a= b=");
  CHECK(tunekit::key_to_string(app::TwoStrings{"\x7f", "\x1b"}) == "a=\\x7f b=\\x1b");  // DEL, ESC
  CHECK(tunekit::key_to_string(app::TwoStrings{"plain-text_1.0", "ü"}) == "a=plain-text_1.0 b=ü");
}

TEST_CASE("a key with a NaN field names the field as its problem", "[key]") {
  CHECK_FALSE(tunekit::key_problem(app::FloatKey{1, 2}));
  const auto problem = tunekit::key_problem(app::FloatKey{1, std::nanf("")});
  REQUIRE(problem);
  CHECK_THAT(*problem, Catch::Contains("'y'") && Catch::Contains("NaN"));
  CHECK(tunekit::key_to_string(app::FloatKey{std::nan(""), 0}) == "x=nan y=0");
}
