// The named lists of matmul shapes (M x N x K) that bench_ops --shapes takes and the ops tests
// check: the shapes real programs hand a GEMM (issue 16). docs/benchmarks.md says where each
// comes from; `--shapes`' reader (each size as bench/arguments.hpp reads it). Header-only,
// standard library only.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arguments.hpp"

namespace tunekit::bench {

using Shape = std::array<std::size_t, 3>;  // M, N, K

/// `real`: fp32 transformer layers (M tokens), sizes just past and below powers of two, primes,
/// tall-skinny and short-wide, small K and large K.
inline const std::vector<Shape>& real_shapes() {
  // Transformer layers (M = tokens; Llama-7B: 4096, 11008; BERT-base: 768, 3072; Mistral-7B:
  // 14336), then one past / below a power of two, primes, tall-skinny and short-wide, small and
  // large K: docs/benchmarks.md names each one's source.
  static const std::vector<Shape> shapes{
      {1, 4096, 4096},   {16, 4096, 4096},   {64, 11008, 4096},   {128, 4096, 11008},
      {512, 3072, 768},  {2048, 768, 3072},  {2048, 14336, 4096}, {128, 768, 768},
      {513, 1025, 2049}, {1023, 1023, 1023}, {1025, 1025, 1025},  {2047, 2047, 2047},
      {997, 1009, 1013}, {127, 131, 137},    {8192, 64, 1024},    {64, 8192, 1024},
      {2048, 2048, 32},  {256, 256, 65536}};
  return shapes;
}

/// `real-small`: the classes of `real` at sizes a 2-core CPU (PoCL) tunes in about a minute each:
/// the small transformer shapes as they are, the others scaled down with their class kept (one
/// past / below a power of two, primes, the aspect ratios).
inline const std::vector<Shape>& real_small_shapes() {
  static const std::vector<Shape> shapes{
      {1, 4096, 4096},  {16, 4096, 4096}, {64, 2752, 1024}, {128, 768, 768}, {257, 513, 1025},
      {511, 511, 511},  {513, 513, 513},  {251, 257, 263},  {127, 131, 137}, {2048, 64, 1024},
      {64, 2048, 1024}, {1024, 1024, 32}, {128, 128, 16384}};
  return shapes;
}

/// `held-out`: shapes no start point, space or kernel was tuned on, to judge how the tuner carries
/// to shapes it has not seen. Drawn once (2026-12-07) and never edited: sizes log-uniform, Python's
/// random.Random(20261207), 4 general (each size in [200, 5000]), 2 skinny (M in [2, 48], N and K
/// in [1000, 8000]), 2 of large K (M, N in [100, 600], K in [8000, 40000]), 2 of small K (M, N in
/// [1000, 5000], K in [16, 200]), 2 tall (M in [4000, 12000], N in [32, 200], K in [500, 3000]).
inline const std::vector<Shape>& held_out_shapes() {
  static const std::vector<Shape> shapes{{4340, 2530, 4009}, {319, 1602, 543},  {262, 260, 1347},
                                         {558, 1577, 322},   {11, 3749, 1024},  {4, 2476, 1548},
                                         {153, 471, 22475},  {421, 319, 17534}, {1907, 4894, 80},
                                         {3199, 1568, 33},   {5274, 35, 2233},  {4436, 137, 2752}};
  return shapes;
}

/// `held-out-small`: the same for a 2-core CPU (PoCL), drawn once (2026-12-07) by the same rule at
/// a quarter of the sizes, Python's random.Random(20261209): 4 general ([50, 1250]), 2 skinny (M in
/// [1, 12], N and K in [250, 2000]), 2 of large K (M, N in [25, 150], K in [2000, 10000]), 2 of
/// small K (M, N in [250, 1250], K in [4, 50]), 2 tall (M in [1000, 3000], N in [8, 50], K in
/// [125, 750]).
inline const std::vector<Shape>& held_out_small_shapes() {
  static const std::vector<Shape> shapes{{126, 593, 167}, {1155, 287, 121}, {384, 596, 145},
                                         {646, 597, 758}, {2, 373, 1572},   {1, 1643, 1153},
                                         {54, 77, 3115},  {69, 55, 2995},   {386, 367, 31},
                                         {319, 842, 17},  {1911, 41, 623},  {1514, 9, 352}};
  return shapes;
}

/// One named list: the name a `--shapes` argument gives, and the list.
struct ShapeList {
  std::string_view name;
  const std::vector<Shape>& (*shapes)();
};

/// Every named list, in the order messages name them: the one table named_shapes() and
/// shape_list_names() read.
inline constexpr std::array<ShapeList, 4> shape_lists = {
    {{"real", real_shapes},
     {"real-small", real_small_shapes},
     {"held-out", held_out_shapes},
     {"held-out-small", held_out_small_shapes}}};

/// The lists' names, for messages: "real, real-small, ...".
inline std::string shape_list_names() {
  std::string names;
  for (const auto& list : shape_lists) {
    if (!names.empty()) names += ", ";
    names += list.name;
  }
  return names;
}

/// The list named `name` (one of shape_list_names()), or nothing.
inline std::optional<std::vector<Shape>> named_shapes(std::string_view name) {
  for (const auto& list : shape_lists) {
    if (list.name == name) return list.shapes();
  }
  return std::nullopt;
}

/// A `--shapes` argument: a list's name, or MxNxK,... (each size as parse_size); nothing when it
/// is neither.
inline std::optional<std::vector<Shape>> parse_shapes(const std::string& text) {
  if (auto named = named_shapes(text)) return named;
  return parse_comma_list(text, [](std::string_view item) { return parse_dims<3>(item); });
}

}  // namespace tunekit::bench
