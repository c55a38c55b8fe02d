// stable_hash: the one hash whose values are written down (set checksums, cache file names,
// search seeds): stable across processes, builds and machines, unlike std::hash.
#pragma once

#include <cstdint>
#include <string_view>

namespace tunekit {

/// 64-bit XXH3 of `text`: stable across processes, builds and machines.
std::uint64_t stable_hash(std::string_view text);

}  // namespace tunekit
