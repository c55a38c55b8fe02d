// DType: the element type of an op's data, a common field of tuning keys.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

namespace tunekit {

/// Element type of an op's data.
/// bf16: bfloat16 (the upper half of an f32; a `std::uint16_t` on the host), last so that the
/// others keep their values in stored keys.
enum class DType : std::uint8_t { f16, f32, f64, i32, u32, bf16 };

/// "f16", "f32", ...
constexpr std::string_view to_string(DType t) {
  switch (t) {
    case DType::f16:
      return "f16";
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
    case DType::i32:
      return "i32";
    case DType::u32:
      return "u32";
    case DType::bf16:
      return "bf16";
  }
  return "?";
}

/// Size in bytes of one element.
constexpr std::size_t size_of(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::f64:
      return 8;
    default:
      return 4;
  }
}

inline std::ostream& operator<<(std::ostream& os, DType t) { return os << to_string(t); }

}  // namespace tunekit
