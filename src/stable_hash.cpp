// stable_hash: XXH3-64, stable across processes and builds (unlike std::hash), for checksums.
#include "tunekit/stable_hash.hpp"

#include <xxhash.h>

namespace tunekit {

std::uint64_t stable_hash(std::string_view text) { return XXH3_64bits(text.data(), text.size()); }

}  // namespace tunekit
