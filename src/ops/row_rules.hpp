// How reduce_rows' kernels (kernels/reduce.cl) share out a matrix's rows: the one host copy of
// each kernel's rule, used by the op's launch, the kernel test and tools/kernel_lab.
#pragma once

#include <algorithm>
#include <cstddef>

namespace tunekit::ops::detail {

// How a row reduction spreads a row: over a work-group (a tree in local memory), over a sub-group
// (a warp), or within one work-item (short rows), loading from memory itself or through a tile
// of local memory that neighbouring work-items fill (short rows on a GPU).
enum class RowStrategy { group, subgroup, item, tile };

inline const char* row_kernel(RowStrategy strategy) {
  switch (strategy) {
    case RowStrategy::group:
      return "reduce_rows";
    case RowStrategy::subgroup:
      return "reduce_rows_sg";
    case RowStrategy::item:
      return "reduce_rows_item";
    case RowStrategy::tile:
      return "reduce_rows_tile";
  }
  return "reduce_rows";
}

// The rows one work-group of `wgs` work-items reduces: reduce_rows one, reduce_rows_item and
// reduce_rows_tile one per work-item, reduce_rows_sg its SG_ROWS (a row per 32 work-items,
// whatever the sub-group size).
inline std::size_t rows_per_group(RowStrategy strategy, std::size_t wgs) {
  switch (strategy) {
    case RowStrategy::group:
      return 1;
    case RowStrategy::subgroup:
      return std::max<std::size_t>(1, wgs / 32);
    case RowStrategy::item:
    case RowStrategy::tile:
      return wgs;
  }
  return 1;
}

// The work-item and sub-group row kernels index with 32-bit ints (the cheaper code on GPUs): a
// launch is right while a group's worth of ids past the last row (two for the sub-group
// kernel's loop) and a pass past the last column stay within 2^31 - 1. The group kernel counts
// rows by group and strides a row with 64-bit indices: it takes any size.
inline bool fits_32_bit_indices(RowStrategy strategy, std::size_t rows, std::size_t cols,
                                std::size_t wgs) {
  constexpr std::size_t limit = 2147483647;  // 2^31 - 1
  if (strategy == RowStrategy::group) return rows <= limit && cols <= limit;
  return wgs <= limit / 4 && rows <= limit - 2 * wgs && cols <= limit - wgs;
}

}  // namespace tunekit::ops::detail
