// The named lists of matmul shapes (M x N x K) that bench_ops --shapes takes and the ops tests
// check: the shapes real programs hand a GEMM (issue 16). docs/benchmarks.md says where each
// comes from. Also the strict readers of the benches' size arguments. Header-only, standard
// library only.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

/// The list named `name` ("real", "real-small"), or nothing.
inline std::optional<std::vector<Shape>> named_shapes(std::string_view name) {
  if (name == "real") return real_shapes();
  if (name == "real-small") return real_small_shapes();
  return std::nullopt;
}

/// The largest size a command line may give: the kernels index with 32-bit ints.
inline constexpr std::size_t max_size = (std::size_t{1} << 31) - 1;

/// One size of a command line: decimal digits only (no sign, space or suffix), from 1 to
/// max_size; nothing otherwise.
inline std::optional<std::size_t> parse_size(std::string_view text) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  std::size_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::size_t>(c - '0');
  }
  if (value == 0 || value > max_size) return std::nullopt;
  return value;
}

/// `N` sizes joined by 'x' ("ROWSxCOLS", "MxNxK"), each as parse_size; nothing otherwise.
template <std::size_t N>
std::optional<std::array<std::size_t, N>> parse_dims(std::string_view text) {
  std::array<std::size_t, N> dims{};
  for (std::size_t i = 0; i < N; ++i) {
    const std::size_t end = i + 1 < N ? text.find('x') : text.size();
    if (end == std::string_view::npos) return std::nullopt;
    const auto size = parse_size(text.substr(0, end));
    if (!size) return std::nullopt;
    dims[i] = *size;
    text.remove_prefix(std::min(text.size(), end + 1));
  }
  return dims;
}

/// A comma-separated list of what `parse_item` reads, at least one; nothing if any item fails.
template <typename Parse>
auto parse_comma_list(std::string_view text, Parse parse_item)
    -> std::optional<std::vector<typename decltype(parse_item(text))::value_type>> {
  std::vector<typename decltype(parse_item(text))::value_type> items;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const auto item = parse_item(text.substr(start, end - start));
    if (!item) return std::nullopt;
    items.push_back(*item);
    start = end + 1;
  }
  return items;
}

/// A `--shapes` argument: a list's name, or MxNxK,... (each size as parse_size); nothing when it
/// is neither.
inline std::optional<std::vector<Shape>> parse_shapes(const std::string& text) {
  if (auto named = named_shapes(text)) return named;
  return parse_comma_list(text, [](std::string_view item) { return parse_dims<3>(item); });
}

}  // namespace tunekit::bench
