// Device buffers for an op's input generator and validator: reproducible random contents,
// buffers sized in values rather than bytes, reading them back and comparing two of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "tunekit/cl/client.hpp"
#include "tunekit/error.hpp"
#include "tunekit/key.hpp"
#include "tunekit/stable_hash.hpp"

namespace tunekit::cl {

/// A seed that depends only on `key` (the same in every process and on every machine): seed
/// benchmark inputs with it, since validation needs them to be the same for a key.
template <AutotuneKey Key>
std::uint64_t seed_of(const Key& key) {
  return tunekit::stable_hash(key_to_string(key));
}

namespace detail {
/// The next `count` values of random_values' sequence, from its generator's `state`.
template <class T>
void next_random_values(T* out, std::size_t count, std::uint64_t& state, T low, T high) {
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t z = tunekit::splitmix64(state);
    const double unit = static_cast<double>(z >> 11) * 0x1.0p-53;  // [0, 1)
    out[i] = static_cast<T>(static_cast<double>(low) +
                            unit * (static_cast<double>(high) - static_cast<double>(low)));
  }
}
}  // namespace detail

/// `count` values uniformly spread over [low, high], the same for the same seed everywhere
/// (splitmix64; no std distribution, whose results differ between standard libraries).
template <class T>
requires std::is_arithmetic_v<T> std::vector<T> random_values(std::size_t count, std::uint64_t seed,
                                                              T low = T(-1), T high = T(1)) {
  std::vector<T> values(count);
  std::uint64_t state = seed;
  detail::next_random_values(values.data(), count, state, low, high);
  return values;
}

/// The bytes of `count` values of T; AutotuneError(allocation) when that overflows.
template <class T>
std::size_t bytes_of(std::size_t count) {
  if (count > std::numeric_limits<std::size_t>::max() / sizeof(T)) {
    throw AutotuneError(ErrorKind::allocation,
                        std::to_string(count) + " values do not fit in one buffer");
  }
  return count * sizeof(T);
}

/// An uninitialised device buffer of `count` values of T (at least one byte).
template <class T>
::cl::Buffer buffer_of(Client& client, std::size_t count, cl_mem_flags flags = CL_MEM_READ_WRITE) {
  static_assert(std::is_trivially_copyable_v<T>, "only trivially copyable values go to a device");
  const std::size_t bytes = bytes_of<T>(count);
  return client.allocate(bytes > 0 ? bytes : 1, flags);
}

/// A device buffer of random_values<T>(count, seed, low, high). The buffer is allocated first (a
/// size the device refuses fails before anything is made), then written a piece at a time: the
/// host holds 1 Mi values of it at most.
template <class T>
::cl::Buffer random_buffer(Client& client, std::size_t count, std::uint64_t seed, T low = T(-1),
                           T high = T(1)) {
  static_assert(std::is_arithmetic_v<T>, "random values are numbers");
  ::cl::Buffer buffer = buffer_of<T>(client, count);
  constexpr std::size_t piece = std::size_t{1} << 20;
  std::vector<T> values(count < piece ? count : piece);  // no <algorithm>: a user's file pays it
  std::uint64_t state = seed;
  for (std::size_t first = 0; first < count; first += piece) {
    const std::size_t n = count - first < piece ? count - first : piece;
    detail::next_random_values(values.data(), n, state, low, high);
    client.write(buffer, values.data(), n * sizeof(T), first * sizeof(T));
  }
  return buffer;
}

/// Every value `buffer` holds (its size divided by sizeof(T)), read back (blocking).
template <class T>
std::vector<T> read_all(Client& client, const ::cl::Buffer& buffer) {
  const std::size_t bytes = buffer.getInfo<CL_MEM_SIZE>();
  return client.download<T>(buffer, bytes / sizeof(T));
}

namespace detail {
/// compare_buffers' rule for one value: |expected - actual| <= tolerance * max(1, |expected|);
/// a NaN matches only a NaN, an infinity only the same one. In src/cl/buffers.cpp, so that this
/// header costs a user's file no <cmath>.
bool within_tolerance(double expected, double actual, double tolerance);
}  // namespace detail

/// Compares two device buffers of T value by value (their first `count` values; by default
/// all of them, and then their sizes must agree): nothing when every pair is within `tolerance`
/// (relative to the expected value's magnitude, absolute below 1), else a message naming the
/// first pair that is not and how many differ. A NaN matches only a NaN where the reference has
/// one, an infinity the same infinity. A validator returns it as it is: `return
/// cl::compare_buffers<float>(client, std::get<1>(reference), std::get<1>(output));`
template <class T>
std::optional<std::string> compare_buffers(Client& client, const ::cl::Buffer& expected,
                                           const ::cl::Buffer& actual, double tolerance = 1e-5,
                                           std::optional<std::size_t> count = std::nullopt) {
  if (!count) {
    const std::size_t want = expected.getInfo<CL_MEM_SIZE>() / sizeof(T);
    const std::size_t got = actual.getInfo<CL_MEM_SIZE>() / sizeof(T);
    if (want != got) {
      return "the output holds " + std::to_string(got) + " values, the reference " +
             std::to_string(want);
    }
    count = want;
  }
  const std::vector<T> want = client.download<T>(expected, *count);
  const std::vector<T> got = client.download<T>(actual, *count);
  std::size_t wrong = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < *count; ++i) {
    if (!detail::within_tolerance(static_cast<double>(want[i]), static_cast<double>(got[i]),
                                  tolerance)) {
      if (wrong++ == 0) first = i;
    }
  }
  if (wrong == 0) return std::nullopt;
  return std::to_string(wrong) + " of " + std::to_string(*count) + " values differ; first at " +
         std::to_string(first) + ": " + std::to_string(static_cast<double>(got[first])) +
         ", expected " + std::to_string(static_cast<double>(want[first]));
}

}  // namespace tunekit::cl
