// stable_hash: the one hash whose values are written down (set checksums, cache file names,
// search seeds): stable across processes, builds and machines, unlike std::hash. splitmix64: the
// one random stream benchmark inputs are drawn from, the same everywhere for a seed (unlike a std
// distribution, whose results differ between standard libraries).
#pragma once

#include <cstdint>
#include <string_view>

namespace tunekit {

/// 64-bit XXH3 of `text`: stable across processes, builds and machines.
std::uint64_t stable_hash(std::string_view text);

/// The next value of the splitmix64 stream whose position is `state` (advanced).
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace tunekit
