// reduce: the sum or the maximum of an f32 array, and of every row of an f32 matrix, tuned over
// a local-memory tree, multi-element vector loads, and sub-group (warp) reductions.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

#include "tunekit/anchor.hpp"
#include "tunekit/detail/local_tuner_fwd.hpp"
#include "tunekit/key.hpp"
#include "tunekit/ops/matrix.hpp"
#include "tunekit/throughput.hpp"

namespace tunekit::ops {

enum class ReduceOp : std::uint8_t { sum, max };

constexpr std::string_view to_string(ReduceOp op) { return op == ReduceOp::sum ? "sum" : "max"; }
inline std::ostream& operator<<(std::ostream& os, ReduceOp op) { return os << to_string(op); }

/// The tuning key of reduce: the length anchored to a power of two, and the operation.
struct ReduceKey {
  BOOST_HANA_DEFINE_STRUCT(ReduceKey, (Anchored<std::uint64_t>, n), (ReduceOp, op));
  /// The benchmark problem's work: n f32 values read once, one operation each.
  Work work() const {
    const double n_ = static_cast<double>(n.value());
    return {n_, 4 * n_};
  }
};

/// The tuning key of reduce_rows.
struct RowReduceKey {
  BOOST_HANA_DEFINE_STRUCT(RowReduceKey, (Anchored<std::uint64_t>, rows),
                           (Anchored<std::uint64_t>, cols), (ReduceOp, op));
  /// The benchmark problem's work: the f32 matrix read once, one value per row written.
  Work work() const {
    const double rows_ = static_cast<double>(rows.value()),
                 cols_ = static_cast<double>(cols.value());
    return {rows_ * cols_, 4 * (rows_ * cols_ + rows_)};
  }
};

/// The sum or the maximum of `input`'s values. Throws std::invalid_argument if it is empty, or
/// if its buffer belongs to another OpenCL context than the client's (so do reduce_into and
/// reduce_rows, and when the output is the input's buffer).
/// Waits for the result; reduce_into() leaves it on the device instead.
float reduce(cl::Client& client, const DeviceVector& input, ReduceOp op);

/// Writes the sum or the maximum of `input`'s values to out.buffer[0], without waiting.
void reduce_into(cl::Client& client, const DeviceVector& input, ReduceOp op, DeviceVector& out);

/// out[r] = sum or maximum of row r of `matrix` (f32); `out` holds at least matrix.rows values.
void reduce_rows(cl::Client& client, const DeviceMatrix& matrix, ReduceOp op, DeviceVector& out);

LocalTuner<ReduceKey>& reduce_tuner();
LocalTuner<RowReduceKey>& reduce_rows_tuner();

}  // namespace tunekit::ops
