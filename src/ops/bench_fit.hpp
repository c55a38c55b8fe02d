// Sizes the shipped ops' kernels can take (int_argument), and benchmark inputs that fit the
// device: the shipped ops' input generators make random inputs (reduce and transpose of the
// key's anchored shape, which can be twice the caller's in each dimension; matmul of the call's
// own). When those do not fit next to the caller's buffers (counted: they are on the device
// already) or cannot be allocated, tuning runs on the caller's own inputs instead: a call that a
// candidate can serve must never fail because its benchmark twin is too large.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "tunekit/cl/client.hpp"
#include "tunekit/error.hpp"
#include "tunekit/log.hpp"

namespace tunekit::ops::detail {

/// Bytes of `count` elements of `size` bytes each, or nothing past 64 bits.
inline std::optional<std::uint64_t> bytes_of(std::uint64_t count, std::uint64_t size) {
  if (size != 0 && count > UINT64_MAX / size) return std::nullopt;
  return count * size;
}

/// Bytes of a rows x cols matrix of `size`-byte elements, or nothing past 64 bits.
inline std::optional<std::uint64_t> bytes_of(std::uint64_t rows, std::uint64_t cols,
                                             std::uint64_t size) {
  if (cols != 0 && rows > UINT64_MAX / cols) return std::nullopt;
  return bytes_of(rows * cols, size);
}

/// What the size check weighs benchmark inputs against: a device's largest allocation and its
/// global memory, in bytes.
struct DeviceMemory {
  std::uint64_t max_allocation = 0;
  std::uint64_t global = 0;
};

/// Why benchmark inputs of `sizes` bytes cannot be allocated beside the caller's buffers, which
/// hold `callers` bytes of the device already, or nothing when they can: each must be within the
/// device's maximum allocation, and all of them with the caller's within half of its global
/// memory (the other half is for the program's other data, the ops' scratch buffers and the
/// driver).
inline std::optional<std::string> misfit(const DeviceMemory& device,
                                         std::initializer_list<std::optional<std::uint64_t>> sizes,
                                         std::uint64_t callers) {
  std::uint64_t total = 0;
  for (const auto& size : sizes) {
    if (!size) return std::string("their size does not fit in 64 bits");
    if (*size > device.max_allocation) {
      return "a buffer of " + std::to_string(*size) + " bytes exceeds the device's maximum " +
             "allocation of " + std::to_string(device.max_allocation);
    }
    total += *size;  // each is at most max_allocation: no overflow for a handful of them
  }
  if (total > device.global / 2 || callers > device.global / 2 - total) {
    return "the benchmark inputs' " + std::to_string(total) + " bytes and the caller's " +
           std::to_string(callers) + " bytes already on the device exceed half its memory (" +
           std::to_string(device.global) + " bytes)";
  }
  return std::nullopt;
}

/// The bytes the caller's `buffers` hold on the device (a buffer given twice counted once).
inline std::uint64_t device_bytes(std::initializer_list<const ::cl::Buffer*> buffers) {
  std::uint64_t total = 0;
  std::set<cl_mem> seen;
  for (const ::cl::Buffer* buffer : buffers) {
    if (buffer == nullptr || (*buffer)() == nullptr || !seen.insert((*buffer)()).second) continue;
    total += buffer->getInfo<CL_MEM_SIZE>();
  }
  return total;
}

/// misfit() on the device of `context`, beside the caller's `callers` buffers.
inline std::optional<std::string> misfit(const ::cl::Context& context,
                                         std::initializer_list<std::optional<std::uint64_t>> sizes,
                                         std::initializer_list<const ::cl::Buffer*> callers) {
  const auto devices = context.getInfo<CL_CONTEXT_DEVICES>();
  if (devices.empty()) return std::nullopt;
  const DeviceMemory memory{devices.front().getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>(),
                            devices.front().getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>()};
  return misfit(memory, sizes, device_bytes(callers));
}

/// Says, once per op and key in a process, that its tuning runs on the caller's inputs.
inline void note_callers_inputs(const std::string& op, const std::string& key,
                                const std::string& why) {
  static std::mutex mutex;
  static std::set<std::pair<std::string, std::string>> noted;
  {
    std::lock_guard lock(mutex);
    if (!noted.emplace(op, key).second) return;
  }
  warn(about(op, key) + "the random benchmark inputs do not fit (" + why +
       "); tuning on the caller's own inputs instead");
}

/// `random()` when the buffers of `random_sizes` fit beside the caller's `callers_buffers` and
/// can be allocated, else `callers()` (noted once): both make the benchmark inputs.
template <class Random, class Callers>
auto random_or_callers(const ::cl::Context& context, const std::string& op, const std::string& key,
                       std::initializer_list<std::optional<std::uint64_t>> random_sizes,
                       std::initializer_list<const ::cl::Buffer*> callers_buffers, Random random,
                       Callers callers) -> decltype(callers()) {
  auto why = misfit(context, random_sizes, callers_buffers);
  if (!why) {
    try {
      return random();
    } catch (const AutotuneError& e) {
      if (e.kind() != ErrorKind::allocation) throw;
      why = e.message();
    }
  }
  note_callers_inputs(op, key, *why);
  return callers();
}

/// `value` as a kernel's `int` argument; beyond 2^31 - 1 an AutotuneError(launch) naming the
/// limit, before anything is launched (a wrapped size would index out of the buffers).
inline cl_int int_argument(std::uint64_t value, const std::string& what) {
  constexpr std::uint64_t limit = 2147483647;  // 2^31 - 1
  if (value > limit) {
    throw AutotuneError(ErrorKind::launch, what + " is " + std::to_string(value) +
                                               ", over the kernels' 32-bit limit of 2^31 - 1");
  }
  return static_cast<cl_int>(value);
}

}  // namespace tunekit::ops::detail
