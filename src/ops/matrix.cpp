// Moving matrices between host and device, half conversion, and reproducible random data.
#include "tunekit/ops/matrix.hpp"

#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "../cl/command_queue.hpp"
#include "host_memory.hpp"
#include "tunekit/cl/errors.hpp"
#include "tunekit/error.hpp"
#include "tunekit/stable_hash.hpp"

namespace tunekit::ops {

namespace {
// IEEE's round to nearest, ties to even: whether `kept` (the bits kept) goes up, given the bits
// dropped and the value of half a step of what is kept (as the device's vstore_half rounds).
bool rounds_up(std::uint32_t dropped, std::uint32_t halfway, std::uint32_t kept) {
  return dropped > halfway || (dropped == halfway && (kept & 1u) != 0);
}
}  // namespace

std::uint16_t float_to_half(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::int32_t exponent = static_cast<std::int32_t>((bits >> 23) & 0xff) - 127 + 15;
  std::uint32_t mantissa = bits & 0x7fffffu;
  if (((bits >> 23) & 0xff) == 0xff)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0));
  if (exponent >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow: infinity
  if (exponent <= 0) {                                                    // subnormal or zero
    if (exponent < -10) return static_cast<std::uint16_t>(sign);
    mantissa |= 0x800000u;
    const int shift = 14 - exponent;
    std::uint32_t half = mantissa >> shift;
    if (rounds_up(mantissa & ((1u << shift) - 1), 1u << (shift - 1), half)) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = sign | (static_cast<std::uint32_t>(exponent) << 10) | (mantissa >> 13);
  // A carry into the exponent is correct (the largest mantissa rounds to the next power of 2).
  if (rounds_up(mantissa & 0x1fffu, 0x1000u, half)) ++half;
  return static_cast<std::uint16_t>(half);
}

float half_to_float(std::uint16_t value) {
  const std::uint32_t sign = (value & 0x8000u) << 16;
  const std::uint32_t exponent = (value >> 10) & 0x1f;
  const std::uint32_t mantissa = value & 0x3ffu;
  float result;
  if (exponent == 0) {
    result = std::ldexp(static_cast<float>(mantissa), -24);
    if (sign) result = -result;
    return result;
  }
  std::uint32_t bits = exponent == 31 ? sign | 0x7f800000u | (mantissa << 13)
                                      : sign | ((exponent + 112) << 23) | (mantissa << 13);
  std::memcpy(&result, &bits, 4);
  return result;
}

std::vector<float> random_values(std::size_t count, std::uint64_t seed) {
  // One splitmix64 step per value (the sign from one bit, the magnitude from 24 others): a
  // tuning generates its benchmark inputs (three 2048 x 2048 matrices, twice) on the host, and
  // std::mt19937_64 with a distribution took three times as long.
  std::vector<float> values(count);
  std::uint64_t state = seed;
  for (auto& v : values) {
    const std::uint64_t z = splitmix64(state);
    const float magnitude = 0.1f + 0.9f * static_cast<float>(z >> 40) * 0x1p-24f;  // [0.1, 1)
    v = (z & 1) ? magnitude : -magnitude;
  }
  return values;
}

std::uint16_t float_to_bfloat16(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  return static_cast<std::uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

float bfloat16_to_float(std::uint16_t value) {
  const std::uint32_t bits = static_cast<std::uint32_t>(value) << 16;
  float result;
  std::memcpy(&result, &bits, sizeof result);
  return result;
}

namespace {
// f16 or bf16 storage of `values`.
std::vector<std::uint16_t> to_half(const std::vector<float>& values, DType dtype = DType::f16) {
  std::vector<std::uint16_t> halves(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    halves[i] = dtype == DType::bf16 ? float_to_bfloat16(values[i]) : float_to_half(values[i]);
  }
  return halves;
}

void check_dtype(DType dtype) {
  if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16) {
    throw std::invalid_argument("tunekit: matrices hold f32, f16 or bf16, not " +
                                std::string(to_string(dtype)));
  }
}

std::vector<float> to_floats(const std::vector<std::uint16_t>& halves, DType dtype) {
  std::vector<float> values(halves.size());
  for (std::size_t i = 0; i < halves.size(); ++i) {
    values[i] = dtype == DType::bf16 ? bfloat16_to_float(halves[i]) : half_to_float(halves[i]);
  }
  return values;
}
}  // namespace

std::size_t checked_matrix_bytes(std::size_t rows, std::size_t cols, DType dtype,
                                 const std::string& what) {
  // Each dimension reaches a kernel as a 32-bit cl_int; the element count may exceed 2^31 (the
  // kernels that index with 32-bit offsets refuse such shapes at their launch, the others serve
  // them), but the byte count must not wrap around.
  const auto too_large = [&](const std::string& why) {
    return AutotuneError(ErrorKind::allocation, what + " of " + std::to_string(rows) + " x " +
                                                    std::to_string(cols) + " " +
                                                    std::string(to_string(dtype)) + " " + why);
  };
  if (rows > max_kernel_elements || cols > max_kernel_elements) {
    throw too_large(
        "has a dimension that is too large: sizes reach the kernels as 32-bit ints "
        "(at most " +
        std::to_string(max_kernel_elements) + ")");
  }
  if (cols != 0 && rows > SIZE_MAX / size_of(dtype) / cols) {
    throw too_large("has more bytes than a size can count");
  }
  return rows * cols * size_of(dtype);
}

namespace {
std::string bytes_text(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}
}  // namespace

namespace detail {
std::size_t host_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return SIZE_MAX;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
}

std::size_t host_memory_available() {
  std::FILE* file = std::fopen("/proc/meminfo", "re");
  if (file == nullptr) return host_memory();
  char line[256];
  std::size_t available = host_memory();
  while (std::fgets(line, sizeof line, file) != nullptr) {
    unsigned long long kib = 0;
    if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
      if (kib <= SIZE_MAX / 1024) available = static_cast<std::size_t>(kib) * 1024;
      break;
    }
  }
  std::fclose(file);
  return available;
}

bool buffers_in_host_memory(const ::cl::Device& device) {
  cl_bool unified = CL_FALSE;  // deprecated in OpenCL 2.0, so the C++ binding lacks it
  const bool shared = ::clGetDeviceInfo(device(), CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified,
                                        &unified, nullptr) == CL_SUCCESS &&
                      unified == CL_TRUE;
  return shared || (device.getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_CPU) != 0;
}

std::size_t host_bytes_to_make(std::size_t elements, DType dtype) {
  const std::size_t per_element = size_of(dtype) == 2 ? 6 : 4;  // floats, then halves
  if (elements > SIZE_MAX / per_element) return SIZE_MAX;
  return elements * per_element;
}
}  // namespace detail

void check_allocation(const ::cl::Device& device, std::size_t bytes, const std::string& what) {
  const std::size_t largest = device.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
  if (bytes > largest) {
    throw AutotuneError(ErrorKind::allocation, what + " needs " + bytes_text(bytes) +
                                                   ", more than the device's largest buffer (" +
                                                   bytes_text(largest) +
                                                   ", CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
  }
  if (const std::size_t host = detail::host_memory(); bytes > host / 2) {
    throw AutotuneError(ErrorKind::allocation, what + " needs " + bytes_text(bytes) +
                                                   ", more than half of the host's memory (" +
                                                   bytes_text(host) +
                                                   "; the data is made on the host first)");
  }
}

void check_matrix(const DeviceMatrix& matrix, const std::string& what) {
  const std::size_t bytes = checked_matrix_bytes(matrix.rows, matrix.cols, matrix.dtype, what);
  if (matrix.buffer() == nullptr) {
    throw std::invalid_argument(what + " has no buffer");
  }
  const std::size_t held = matrix.buffer.getInfo<CL_MEM_SIZE>();
  if (held < bytes) {
    throw std::invalid_argument(what + " is " + std::to_string(matrix.rows) + " x " +
                                std::to_string(matrix.cols) + " (" + std::to_string(bytes) +
                                " bytes) but its buffer holds " + std::to_string(held) + " bytes");
  }
}

DeviceMatrix upload_matrix(cl::Client& client, const std::vector<float>& values, std::size_t rows,
                           std::size_t cols, DType dtype) {
  check_dtype(dtype);
  (void)checked_matrix_bytes(rows, cols, dtype, "a matrix to upload");
  if (values.size() != rows * cols) {
    throw std::invalid_argument("tunekit: " + std::to_string(values.size()) + " values for a " +
                                std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
  }
  if (size_of(dtype) == 2) return {client.upload(to_half(values, dtype)), rows, cols, dtype};
  return {client.upload(values), rows, cols, dtype};
}

namespace {
// What random_matrix and random_sign_matrix make: random_values(), or only their signs.
enum class RandomKind { values, signs };

DeviceMatrix random_device_matrix(const ::cl::Context& context, std::size_t rows, std::size_t cols,
                                  DType dtype, std::uint64_t seed, RandomKind kind) {
  check_dtype(dtype);
  const std::string what = "a random matrix";
  const auto device = context.getInfo<CL_CONTEXT_DEVICES>().at(0);
  const std::size_t bytes = checked_matrix_bytes(rows, cols, dtype, what);
  check_allocation(device, bytes, what);
  // Made on the host first (f32 values, then halves for f16), then copied into a buffer that a
  // CPU device keeps in host memory too: all of it must fit in what the host has left, or the
  // process is killed for memory instead of told (several large inputs pass one by one).
  const std::size_t elements = rows * cols;
  const std::size_t host_bytes = detail::host_bytes_to_make(elements, dtype) +
                                 (detail::buffers_in_host_memory(device) ? bytes : 0);
  if (const std::size_t available = detail::host_memory_available(); host_bytes > available) {
    throw AutotuneError(ErrorKind::allocation,
                        what + " of " + std::to_string(rows) + " x " + std::to_string(cols) +
                            " needs " + bytes_text(host_bytes) +
                            " of host memory while it is made, more than the " +
                            bytes_text(available) + " available");
  }
  auto values = random_values(elements, seed);
  if (kind == RandomKind::signs) {
    for (float& v : values) v = v < 0 ? -1.0f : 1.0f;
  }
  cl_int status = CL_SUCCESS;
  ::cl::Buffer buffer;
  if (size_of(dtype) == 2) {
    auto halves = to_half(values, dtype);
    buffer = ::cl::Buffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                          std::max<std::size_t>(halves.size() * 2, 1), halves.data(), &status);
  } else {
    buffer = ::cl::Buffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                          std::max<std::size_t>(values.size() * 4, 1),
                          const_cast<float*>(values.data()), &status);
  }
  if (status != CL_SUCCESS) {
    throw cl::make_error(status, "allocating a random " + std::to_string(rows) + " x " +
                                     std::to_string(cols) + " matrix");
  }
  return {buffer, rows, cols, dtype};
}
}  // namespace

DeviceMatrix random_matrix(const ::cl::Context& context, std::size_t rows, std::size_t cols,
                           DType dtype, std::uint64_t seed) {
  return random_device_matrix(context, rows, cols, dtype, seed, RandomKind::values);
}

DeviceMatrix random_sign_matrix(const ::cl::Context& context, std::size_t rows, std::size_t cols,
                                DType dtype, std::uint64_t seed) {
  return random_device_matrix(context, rows, cols, dtype, seed, RandomKind::signs);
}

std::vector<float> download_matrix(cl::Client& client, const DeviceMatrix& matrix) {
  if (size_of(matrix.dtype) == 2) {
    return to_floats(client.download<std::uint16_t>(matrix.buffer, matrix.elements()),
                     matrix.dtype);
  }
  return client.download<float>(matrix.buffer, matrix.elements());
}

std::vector<float> download_block(cl::Client& client, const DeviceMatrix& matrix, std::size_t row,
                                  std::size_t col, std::size_t rows, std::size_t cols) {
  if (row + rows > matrix.rows || col + cols > matrix.cols) {
    throw std::invalid_argument(
        "tunekit: a block of " + std::to_string(rows) + " x " + std::to_string(cols) + " at (" +
        std::to_string(row) + ", " + std::to_string(col) + ") is outside a " +
        std::to_string(matrix.rows) + " x " + std::to_string(matrix.cols) + " matrix");
  }
  const std::size_t element = size_of(matrix.dtype);
  // One rectangular read straight into the values (floats, or halves to convert).
  const auto read_into = [&](void* values) {
    if (rows * cols == 0) return;
    const std::array<std::size_t, 3> origin{col * element, row, 0}, host{0, 0, 0},
        region{cols * element, rows, 1};
    const cl_int status =
        client.queue().enqueueReadBufferRect(matrix.buffer, CL_TRUE, origin, host, region,
                                             matrix.cols * element, 0, cols * element, 0, values);
    if (status != CL_SUCCESS) throw cl::make_error(status, "reading a block of a matrix");
  };
  if (element == 4) {
    std::vector<float> values(rows * cols);
    read_into(values.data());
    return values;
  }
  std::vector<std::uint16_t> halves(rows * cols);
  read_into(halves.data());
  return to_floats(halves, matrix.dtype);
}

std::vector<float> read_matrix(const DeviceMatrix& matrix) {
  const auto context = matrix.buffer.getInfo<CL_MEM_CONTEXT>();
  const auto device = context.getInfo<CL_CONTEXT_DEVICES>().at(0);
  cl_int code = CL_SUCCESS;
  ::cl::CommandQueue queue = cl::detail::command_queue(context, device, 0, &code);
  cl::check(code, "creating a queue to read a matrix back");
  if (size_of(matrix.dtype) == 2) {
    std::vector<std::uint16_t> halves(matrix.elements());
    if (!halves.empty()) {
      cl::check(queue.enqueueReadBuffer(matrix.buffer, CL_TRUE, 0, matrix.bytes(), halves.data()),
                "reading a matrix back");
    }
    return to_floats(halves, matrix.dtype);
  }
  std::vector<float> values(matrix.elements());
  if (!values.empty()) {
    cl::check(queue.enqueueReadBuffer(matrix.buffer, CL_TRUE, 0, matrix.bytes(), values.data()),
              "reading a matrix back");
  }
  return values;
}

DeviceVector upload_vector(cl::Client& client, const std::vector<float>& values) {
  return {client.upload(values), values.size()};
}

DeviceVector random_vector(const ::cl::Context& context, std::size_t size, std::uint64_t seed) {
  return {random_matrix(context, size, 1, DType::f32, seed).buffer, size};
}

std::vector<float> download_vector(cl::Client& client, const DeviceVector& vector) {
  return download_matrix(client, DeviceMatrix{vector.buffer, vector.size, 1, DType::f32});
}

std::vector<float> read_vector(const DeviceVector& vector) {
  return read_matrix(DeviceMatrix{vector.buffer, vector.size, 1, DType::f32});
}

}  // namespace tunekit::ops
