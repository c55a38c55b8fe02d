// Sizes the shipped ops' kernels can take (int_argument), and benchmark inputs that fit the
// device and the host: the shipped ops' input generators make random inputs (reduce and transpose
// of the key's anchored shape, which can be twice the caller's in each dimension, transpose's
// brought down to the key's vector width; matmul of the call's own). When the whole tuning's
// footprint (every set of inputs, the host copies made and read back) does not fit next to the
// caller's buffers (counted: they are on the device already), or the inputs cannot be allocated,
// tuning runs on the caller's own inputs instead: a call that a candidate can serve must never fail
// because its benchmark twin is too large.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "host_memory.hpp"
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

/// a + b bytes, or nothing where either is nothing or the sum passes 64 bits.
inline std::optional<std::uint64_t> sum_of(std::optional<std::uint64_t> a,
                                           std::optional<std::uint64_t> b) {
  if (!a || !b || *a > UINT64_MAX - *b) return std::nullopt;
  return *a + *b;
}

/// host_bytes_to_make() of a rows x cols random input of `dtype`, or nothing past 64 bits.
inline std::optional<std::uint64_t> bytes_to_make(std::uint64_t rows, std::uint64_t cols,
                                                  DType dtype) {
  const auto elements = bytes_of(rows, cols, 1);
  if (!elements || *elements > SIZE_MAX) return std::nullopt;
  return host_bytes_to_make(static_cast<std::size_t>(*elements), dtype);
}

/// What the size check weighs benchmark inputs against: a device's largest allocation and its
/// global memory, in bytes.
struct DeviceMemory {
  std::uint64_t max_allocation = 0;
  std::uint64_t global = 0;
};

/// What a shipped op's tuning allocates at once beside the caller's buffers, in bytes: the size
/// check weighs all of it before the first input is made (each part passing alone is not enough:
/// issue 30, F11).
struct Footprint {
  /// One set of benchmark inputs on the device, a buffer each (nothing: past 64 bits).
  std::vector<std::optional<std::uint64_t>> buffers;
  /// How many sets live at once: 2 where the op validates against a candidate (the reference's
  /// own inputs stay beside the shared ones for the whole tuning), else 1.
  std::uint64_t sets = 1;
  /// The host copy held while the largest input is made (host_bytes_to_make).
  std::optional<std::uint64_t> making = 0;
  /// What validation holds on the host at once: outputs read back, a host reference's samples.
  std::optional<std::uint64_t> validating = 0;
};

/// Why the benchmark inputs of `footprint` cannot be allocated on the device beside the
/// caller's buffers, which hold `callers` bytes of it already, or nothing when they can: each
/// buffer must be within the device's maximum allocation, and every set of them with the
/// caller's within half of its global memory (the other half is for the program's other data,
/// the ops' scratch buffers and the driver).
inline std::optional<std::string> misfit(const DeviceMemory& device, const Footprint& footprint,
                                         std::uint64_t callers) {
  std::uint64_t one_set = 0;
  for (const auto& size : footprint.buffers) {
    if (!size) return std::string("their size does not fit in 64 bits");
    if (*size > device.max_allocation) {
      return "a buffer of " + std::to_string(*size) + " bytes exceeds the device's maximum " +
             "allocation of " + std::to_string(device.max_allocation);
    }
    one_set += *size;  // each is at most max_allocation: no overflow for a handful of them
  }
  const std::uint64_t half = device.global / 2;
  if (footprint.sets == 0 || one_set > half / footprint.sets ||
      callers > half - one_set * footprint.sets) {
    const auto total = bytes_of(one_set, footprint.sets).value_or(UINT64_MAX);
    return "the benchmark inputs' " + std::to_string(total) + " bytes" +
           (footprint.sets > 1 ? " (" + std::to_string(footprint.sets) + " sets)" : "") +
           " and the caller's " + std::to_string(callers) +
           " bytes already on the device exceed half its memory (" + std::to_string(device.global) +
           " bytes)";
  }
  return std::nullopt;
}

/// Why the tuning of `footprint` does not fit the host's `available` bytes, or nothing when it
/// does: what it makes and reads back on the host, and where the device's buffers live in host
/// memory (`resident`: a CPU device), every set of its inputs too.
inline std::optional<std::string> host_misfit(const Footprint& footprint, bool resident,
                                              std::uint64_t available) {
  std::uint64_t one_set = 0;
  for (const auto& size : footprint.buffers) {
    if (!size || *size > UINT64_MAX / 4 - one_set) return "their size does not fit in 64 bits";
    one_set += *size;
  }
  if (!footprint.making || !footprint.validating) return "their size does not fit in 64 bits";
  const std::uint64_t transient = std::max(*footprint.making, *footprint.validating);
  const auto resident_bytes = resident ? bytes_of(one_set, footprint.sets) : std::uint64_t{0};
  if (!resident_bytes || transient > UINT64_MAX - *resident_bytes ||
      *resident_bytes + transient > available) {
    const auto need = resident_bytes && transient <= UINT64_MAX - *resident_bytes
                          ? std::to_string(*resident_bytes + transient)
                          : std::string("more than 2^64");
    return "the tuning needs " + need + " bytes of host memory (" +
           (resident ? "its inputs live there on this device; " : "") + "making an input " +
           std::to_string(*footprint.making) + ", validating " +
           std::to_string(*footprint.validating) + "), more than the " + std::to_string(available) +
           " available";
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

/// misfit() and host_misfit() on the device of `context`, beside the caller's `callers` buffers
/// (on the host these are in MemAvailable already).
inline std::optional<std::string> misfit(const ::cl::Context& context, const Footprint& footprint,
                                         std::initializer_list<const ::cl::Buffer*> callers) {
  const auto devices = context.getInfo<CL_CONTEXT_DEVICES>();
  if (devices.empty()) return std::nullopt;
  const DeviceMemory memory{devices.front().getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>(),
                            devices.front().getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>()};
  if (auto why = misfit(memory, footprint, device_bytes(callers))) return why;
  return host_misfit(footprint, buffers_in_host_memory(devices.front()), host_memory_available());
}

/// Where a tuning's benchmark inputs come from.
enum class InputSource : std::uint8_t { random, callers };

/// The sources chosen so far in this process, by op and key (one table: not one per caller).
struct InputSources {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, InputSource> chosen;
};
inline InputSources& input_sources() {
  static auto& sources = *new InputSources;  // never destroyed (ops/scratch.hpp)
  return sources;
}

/// The source chosen for `op` and `key` in this process, once: every input set of one tuning
/// (the shared set, the reference's) must come from the same data, or the validator would
/// compare outputs of different inputs. `choose` runs on the first call only.
template <class Choose>
InputSource input_source(const std::string& op, const std::string& key, Choose choose) {
  InputSources& sources = input_sources();
  {
    std::lock_guard lock(sources.mutex);
    const auto found = sources.chosen.find({op, key});
    if (found != sources.chosen.end()) return found->second;
  }
  const InputSource source = choose();
  std::lock_guard lock(sources.mutex);
  return sources.chosen.emplace(std::pair{op, key}, source).first->second;
}

/// `random()` when the tuning's `footprint` fits the device beside the caller's
/// `callers_buffers` and the host, and the inputs can be allocated, else `callers()` (said
/// once): both make the benchmark inputs. The choice holds for the key's later input sets;
/// an allocation that fails after random inputs were chosen is a failure of the moment (thrown,
/// retried on a later call).
template <class Random, class Callers>
auto random_or_callers(const ::cl::Context& context, const std::string& op, const std::string& key,
                       const Footprint& footprint,
                       std::initializer_list<const ::cl::Buffer*> callers_buffers, Random random,
                       Callers callers) -> decltype(callers()) {
  std::optional<decltype(callers())> made;
  const InputSource source = input_source(op, key, [&] {
    auto why = misfit(context, footprint, callers_buffers);
    if (!why) {
      try {
        made.emplace(random());
        return InputSource::random;
      } catch (const AutotuneError& e) {
        if (e.kind() != ErrorKind::allocation) throw;
        why = e.message();
      }
    }
    warn(about(op, key) + "the random benchmark inputs do not fit (" + *why +
         "); tuning on the caller's own inputs instead");
    return InputSource::callers;
  });
  if (made) return std::move(*made);
  return source == InputSource::random ? random() : callers();
}

/// `value` as a kernel's `int` argument; beyond 2^31 - 1 a refusal of the inputs
/// (unsupported_inputs, kind launch) naming the limit, before anything is launched (a wrapped
/// size would index out of the buffers).
inline constexpr std::uint64_t int_argument_limit = 2147483647;  // 2^31 - 1

inline cl_int int_argument(std::uint64_t value, const std::string& what) {
  if (value > int_argument_limit) {
    throw unsupported_inputs(what + " is " + std::to_string(value) +
                             ", over the kernels' 32-bit limit of 2^31 - 1");
  }
  return static_cast<cl_int>(value);
}

/// Tiled kernels step past their last index (k0 + TS, K + KWG - 1, r0 + TILE_M, c0 + BLK): a size
/// within a tile of 2^31 would wrap an int there. Each leaves this much room (every shipped tile
/// is smaller); the naive kernels, which step by one, serve the sizes past it.
inline constexpr std::uint64_t tile_headroom = 1024;

/// `largest` (a call's largest size) with a tile's room: a refusal (int_argument's) naming `what`
/// when it would wrap a tiled kernel's int.
inline void require_tile_headroom(std::uint64_t largest, const std::string& what) {
  (void)int_argument(largest + tile_headroom, what + " plus a tile");
}

}  // namespace tunekit::ops::detail
