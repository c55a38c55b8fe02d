// The host's memory as the shipped ops' size checks see it: what the machine has, what it can
// still give without swapping, whether a device's buffers live in it, and what making a random
// input costs on the host. One owner for these facts (defined in matrix.cpp): random_matrix's own
// check and the tuning's footprint (bench_fit.hpp) both ask here.
#pragma once

#include <cstddef>

#include "tunekit/cl/opencl.hpp"
#include "tunekit/dtype.hpp"

namespace tunekit::ops::detail {

/// The host's physical memory in bytes (SIZE_MAX when the system does not say).
std::size_t host_memory();
/// What the host can still allocate without swapping: Linux's MemAvailable, else host_memory().
std::size_t host_memory_available();
/// Whether the device's buffers live in host memory (a CPU device such as PoCL, an integrated
/// GPU): then they count against the host's memory too.
bool buffers_in_host_memory(const ::cl::Device& device);
/// Host bytes held while a random input of `elements` values of `dtype` is made: the values as
/// floats, and their 16-bit conversion for f16 and bf16 (SIZE_MAX past 64 bits).
std::size_t host_bytes_to_make(std::size_t elements, DType dtype);

}  // namespace tunekit::ops::detail
