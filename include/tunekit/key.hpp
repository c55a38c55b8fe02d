// AutotuneKey: what identifies one tuning problem, and the hash, ==, printing and serialization
// that tunekit derives for any Boost.Hana-reflected struct.
#pragma once

#include <boost/hana/accessors.hpp>
#include <boost/hana/concept/struct.hpp>
#include <boost/hana/define_struct.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/members.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>
#include <concepts>
#include <cstddef>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>

#include "tunekit/anchor.hpp"
#include "tunekit/detail/function_ref.hpp"
#include "tunekit/dtype.hpp"

namespace tunekit {

/// A struct declared with BOOST_HANA_DEFINE_STRUCT (or adapted with BOOST_HANA_ADAPT_STRUCT).
template <class K>
concept ReflectedStruct = boost::hana::Struct<K>::value;

namespace detail {

template <class T>
concept Streamable = requires(std::ostream& os, const T& v) {
  os << v;
};

template <class T>
concept StdHashable = requires(const T& v) {
  { std::hash<T>{}(v) } -> std::convertible_to<std::size_t>;
};

inline std::size_t mix_hash(std::size_t seed, std::size_t value) {
  // boost::hash_combine's mixing, widened for 64 bits.
  return seed ^ (value + 0x9e3779b97f4a7c15ull + (seed << 12) + (seed >> 4));
}

template <class T>
std::size_t hash_field(const T& v) {
  if constexpr (std::is_enum_v<T>) {
    return std::hash<std::underlying_type_t<T>>{}(static_cast<std::underlying_type_t<T>>(v));
  } else if constexpr (requires {
                         typename T::value_type;
                         v.value();
                       } &&
                       !StdHashable<T>) {
    return std::hash<typename T::value_type>{}(v.value());  // Anchored<T>
  } else {
    static_assert(StdHashable<T>,
                  "a key field has no std::hash: use integers, enums, bools, "
                  "strings or tunekit::Anchored");
    return std::hash<T>{}(v);
  }
}

// A field's text may not contain the separators of the key's text (' ' between fields, '=' after
// a name), the escape character itself, nor control bytes: those are written as \xHH, so that
// two different keys never print the same (`a="x b=y"` is `a=x\x20b\x3dy`, not `a=x b=y`).
void write_escaped(std::ostream& os, std::string_view text);

// The shortest text that reads back as the same value (std::to_chars), so that two different
// floating values never share a cache entry. -0 prints as 0: the two compare equal in memory.
// NaN prints as "nan", for logs only: a key with a NaN field is refused before any lookup.
void write_float(std::ostream& os, float v);
void write_float(std::ostream& os, double v);
void write_float(std::ostream& os, long double v);

// Whether `v` is NaN (compiled in src/key.cpp, whatever the caller's floating-point options).
bool is_nan(long double v);

// What `write` puts on a stream, as a string. These helpers live in src/key.cpp, so that this
// header costs a user's file no <sstream>, <charconv> nor <cmath> (issue 28: their compile time).
std::string streamed_text(FunctionRef<void(std::ostream&)> write);

template <class T>
void print_field(std::ostream& os, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    os << (v ? "true" : "false");
  } else if constexpr (std::is_enum_v<T> && !Streamable<T>) {
    os << static_cast<long long>(v);
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 1) {
    os << static_cast<int>(v);  // not as a character
  } else if constexpr (std::is_integral_v<T>) {
    os << v;
  } else if constexpr (std::is_floating_point_v<T>) {
    write_float(os, v);
  } else {
    static_assert(Streamable<T>, "a key field cannot be printed: give it an operator<<");
    // strings, and any type's own operator<<, escaped
    write_escaped(os, streamed_text([&](std::ostream& text) { text << v; }));
  }
}

// Why a field cannot be part of a key's identity, if it cannot.
template <class T>
std::optional<std::string> field_problem(const T& v) {
  if constexpr (std::is_floating_point_v<T>) {
    if (is_nan(v)) return std::string("is NaN, which equals nothing, not even itself");
  }
  return std::nullopt;
}

}  // namespace detail

/// Concept: a tuning key is a regular value that can be hashed and printed. Any Hana-reflected
/// struct of integers, enums, strings, bools and Anchored fields satisfies it with no extra code.
template <class K>
concept AutotuneKey = std::copyable<K> &&
    (ReflectedStruct<K> ||
     (std::equality_comparable<K> && detail::StdHashable<K> && detail::Streamable<K>));

/// Hash of a key (reflected: combined over its fields; otherwise std::hash).
struct KeyHash {
  template <AutotuneKey K>
  std::size_t operator()(const K& key) const {
    if constexpr (ReflectedStruct<K>) {
      std::size_t seed = 0;
      boost::hana::for_each(boost::hana::members(key), [&](const auto& field) {
        seed = detail::mix_hash(seed, detail::hash_field(field));
      });
      return seed;
    } else {
      return std::hash<K>{}(key);
    }
  }
};

/// Equality of keys (reflected: field by field; otherwise operator==).
struct KeyEqual {
  template <AutotuneKey K>
  bool operator()(const K& a, const K& b) const {
    if constexpr (ReflectedStruct<K>) {
      bool equal = true;
      boost::hana::for_each(boost::hana::accessors<K>(), [&](auto accessor) {
        auto get = boost::hana::second(accessor);
        equal = equal && (get(a) == get(b));
      });
      return equal;
    } else {
      return a == b;
    }
  }
};

/// Writes "m=1024 n=1024 k=64 dtype=f32" for a reflected key, operator<< otherwise.
/// Integers and bools print as numbers and words; floats in their shortest exact form; every
/// other field (strings, enums with an operator<<) with ' ', '=', '\\' and control bytes escaped.
template <AutotuneKey K>
void print_key(std::ostream& os, const K& key) {
  if constexpr (ReflectedStruct<K>) {
    bool first = true;
    boost::hana::for_each(boost::hana::accessors<K>(), [&](auto accessor) {
      if (!first) os << ' ';
      first = false;
      os << boost::hana::to<const char*>(boost::hana::first(accessor)) << '=';
      detail::print_field(os, boost::hana::second(accessor)(key));
    });
  } else {
    os << key;
  }
}

/// Why `key` cannot identify a tuning, if it cannot: it does not equal itself (a NaN field, or
/// a plain key type that is a NaN), so every call would miss and tune again. The tuner refuses
/// such a key with AutotuneError(invalid_key) before any lookup.
template <AutotuneKey K>
std::optional<std::string> key_problem(const K& key) {
  std::optional<std::string> problem;
  if constexpr (ReflectedStruct<K>) {
    boost::hana::for_each(boost::hana::accessors<K>(), [&](auto accessor) {
      if (problem) return;
      if (auto p = detail::field_problem(boost::hana::second(accessor)(key))) {
        problem = "field '" +
                  std::string(boost::hana::to<const char*>(boost::hana::first(accessor))) + "' " +
                  *p;
      }
    });
  } else {
    const K& same = key;
    if (!(key == same)) {
      problem = "does not equal itself (a NaN?): every call would miss and tune again";
    }
  }
  return problem;
}

/// The printed form of a key; also its identity in the persistent cache. Unambiguous for
/// reflected keys: floating fields are printed so that they read back exactly, and a field's
/// own text has its separators escaped (see detail::write_escaped).
template <AutotuneKey K>
std::string key_to_string(const K& key) {
  return detail::streamed_text([&](std::ostream& os) { print_key(os, key); });
}

}  // namespace tunekit
