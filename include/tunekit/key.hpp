// AutotuneKey: what identifies one tuning problem, and the hash, ==, printing and serialization
// that tunekit derives for any Boost.Hana-reflected struct.
#pragma once

#include <boost/hana.hpp>
#include <cereal/cereal.hpp>
#include <concepts>
#include <cstddef>
#include <functional>
#include <sstream>
#include <string>
#include <type_traits>

#include "tunekit/anchor.hpp"
#include "tunekit/dtype.hpp"

namespace tunekit {

/// A struct declared with BOOST_HANA_DEFINE_STRUCT (or adapted with BOOST_HANA_ADAPT_STRUCT).
template <class K>
concept ReflectedStruct = boost::hana::Struct<K>::value;

namespace detail {

template <class T>
concept Streamable = requires(std::ostream& os, const T& v) { os << v; };

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
  } else if constexpr (requires { typename T::value_type; v.value(); } && !StdHashable<T>) {
    return std::hash<typename T::value_type>{}(v.value());  // Anchored<T>
  } else {
    static_assert(StdHashable<T>, "a key field has no std::hash: use integers, enums, bools, "
                                  "strings or tunekit::Anchored");
    return std::hash<T>{}(v);
  }
}

template <class T>
void print_field(std::ostream& os, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    os << (v ? "true" : "false");
  } else if constexpr (std::is_enum_v<T> && !Streamable<T>) {
    os << static_cast<long long>(v);
  } else if constexpr (std::is_integral_v<T> && sizeof(T) == 1) {
    os << static_cast<int>(v);  // not as a character
  } else {
    static_assert(Streamable<T>, "a key field cannot be printed: give it an operator<<");
    os << v;
  }
}

}  // namespace detail

/// Concept: a tuning key is a regular value that can be hashed and printed. Any Hana-reflected
/// struct of integers, enums, strings, bools and Anchored fields satisfies it with no extra code.
template <class K>
concept AutotuneKey =
    std::copyable<K> && (ReflectedStruct<K> || (std::equality_comparable<K> &&
                                                 detail::StdHashable<K> && detail::Streamable<K>));

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

/// The printed form of a key; also its identity in the persistent cache.
template <AutotuneKey K>
std::string key_to_string(const K& key) {
  std::ostringstream os;
  print_key(os, key);
  return os.str();
}

}  // namespace tunekit

namespace cereal {

/// cereal serialization for every Hana-reflected struct: one named value per field.
/// (Found through the archive's namespace, so user structs need no code of their own.)
template <class Archive, tunekit::ReflectedStruct K>
void serialize(Archive& archive, K& key) {
  boost::hana::for_each(boost::hana::accessors<K>(), [&](auto accessor) {
    archive(cereal::make_nvp(boost::hana::to<const char*>(boost::hana::first(accessor)),
                             boost::hana::second(accessor)(key)));
  });
}

}  // namespace cereal
