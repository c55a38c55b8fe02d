// Forcing one candidate of a shipped op by name (matmul_with, transpose_with): the name's index
// in the op's set, from a map built once per set, since a linear search through ~2,000 names
// costs more than a small product on a GPU and forcing a kernel must cost what calling it does.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tunekit::ops::detail {

/// The index of the candidate named `name` in `set` (the op's one set: the map is built from the
/// first set of its type), or std::invalid_argument naming `op` and the name.
template <class Set>
std::size_t candidate_index(const Set& set, std::string_view name, const char* op) {
  static const std::unordered_map<std::string, std::size_t> indices = [&] {
    std::unordered_map<std::string, std::size_t> all;
    for (std::size_t i = 0; i < set.size(); ++i) all.emplace(set.name(i), i);
    return all;
  }();
  const auto index = indices.find(std::string(name));
  if (index == indices.end()) {
    throw std::invalid_argument(std::string("tunekit::ops::") + op + ": no candidate named '" +
                                std::string(name) + "'");
  }
  return index->second;
}

}  // namespace tunekit::ops::detail
