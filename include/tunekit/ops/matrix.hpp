// DeviceMatrix: a dense row-major matrix in device memory, the data type of the shipped ops, and
// the helpers that move it to and from the host and fill it with reproducible random values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tunekit/cl/client.hpp"
#include "tunekit/dtype.hpp"

namespace tunekit::ops {

/// A dense row-major rows x cols matrix in device memory (f32, or f16 or bf16 where an op
/// supports it).
struct DeviceMatrix {
  ::cl::Buffer buffer;
  std::size_t rows = 0;
  std::size_t cols = 0;
  DType dtype = DType::f32;

  std::size_t elements() const noexcept { return rows * cols; }
  std::size_t bytes() const noexcept { return elements() * size_of(dtype); }
};

/// The largest dimension the shipped ops' kernels take (sizes are passed as 32-bit cl_int), and
/// the most elements a kernel that indexes with 32-bit offsets reaches (matmul's direct and
/// blocked kernels check it at launch; the others use 64-bit offsets).
inline constexpr std::size_t max_kernel_elements = 2147483647;  // INT32_MAX

/// rows * cols * size_of(dtype), checked before anything is allocated or launched. Throws
/// AutotuneError(allocation) naming the limit when a dimension exceeds max_kernel_elements or
/// the byte count would overflow. `what` names the matrix.
std::size_t checked_matrix_bytes(std::size_t rows, std::size_t cols, DType dtype,
                                 const std::string& what);
/// Throws AutotuneError(allocation) when `bytes` do not fit in one buffer of the device
/// (CL_DEVICE_MAX_MEM_ALLOC_SIZE) or in the host's physical memory (the data is made on the host
/// first): a clear error before allocating, instead of std::bad_alloc or a long swap storm.
void check_allocation(const ::cl::Device& device, std::size_t bytes, const std::string& what);
/// Checks a matrix given to an op: its sizes as above, and a buffer that holds them (a matrix
/// that claims more than its buffer holds would make a kernel read out of bounds).
void check_matrix(const DeviceMatrix& matrix, const std::string& what);

/// A dense f32 vector in device memory.
struct DeviceVector {
  ::cl::Buffer buffer;
  std::size_t size = 0;
};

/// A device vector holding `values`.
DeviceVector upload_vector(cl::Client& client, const std::vector<float>& values);
/// A device vector of random_values(size, seed), made in `context` without a queue.
DeviceVector random_vector(const ::cl::Context& context, std::size_t size, std::uint64_t seed);
/// The vector's values (blocking), through `client` (see download_matrix).
std::vector<float> download_vector(cl::Client& client, const DeviceVector& vector);
/// The vector's values, read without a client (see read_matrix).
std::vector<float> read_vector(const DeviceVector& vector);

/// IEEE half <-> float, for f16 data on the host.
std::uint16_t float_to_half(float value);
float half_to_float(std::uint16_t value);
/// bfloat16 <-> float (round to nearest even; a NaN stays a NaN), for bf16 data on the host.
std::uint16_t float_to_bfloat16(float value);
float bfloat16_to_float(std::uint16_t value);

/// `count` random values in [-1, -0.1] U [0.1, 1] (never zero), the same for the same seed.
std::vector<float> random_values(std::size_t count, std::uint64_t seed);

/// A device matrix holding `values` (converted to half for f16, to bfloat16 for bf16).
DeviceMatrix upload_matrix(cl::Client& client, const std::vector<float>& values, std::size_t rows,
                           std::size_t cols, DType dtype = DType::f32);
/// A device matrix of random_values(rows * cols, seed), made in `context` without a queue:
/// what input generators use, since they see the inputs but not the client.
DeviceMatrix random_matrix(const ::cl::Context& context, std::size_t rows, std::size_t cols,
                           DType dtype, std::uint64_t seed);
/// random_matrix() of +-1 only (the signs of random_values(rows * cols, seed), never zero): terms
/// whose sum every order of additions computes exactly, while it stays within 2^24.
DeviceMatrix random_sign_matrix(const ::cl::Context& context, std::size_t rows, std::size_t cols,
                                DType dtype, std::uint64_t seed);
/// The matrix's values as floats (blocking), through `client`.
std::vector<float> download_matrix(cl::Client& client, const DeviceMatrix& matrix);
/// The values of `rows` x `cols` elements from (row, col) on, row by row, as floats (blocking):
/// one rectangular read, without the rest of the matrix on the host.
std::vector<float> download_block(cl::Client& client, const DeviceMatrix& matrix, std::size_t row,
                                  std::size_t col, std::size_t rows, std::size_t cols);
/// The same without a client: a short-lived queue on the buffer's own context and device (for
/// tests and tools; a validator can take the client as its first argument instead).
std::vector<float> read_matrix(const DeviceMatrix& matrix);

}  // namespace tunekit::ops
