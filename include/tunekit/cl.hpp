// tunekit's OpenCL runtime: device selection, the Client (a TimingClient in device time), the
// program cache, embedded kernel sources, error mapping and profiling.
// Note: inside `namespace tunekit` (or after `using namespace tunekit;`) `cl::` means tunekit::cl;
// write `::cl::` for OpenCL-CLHPP's classes.
#pragma once

#include "tunekit/cl/buffers.hpp"
#include "tunekit/cl/client.hpp"
#include "tunekit/cl/device.hpp"
#include "tunekit/cl/embedded.hpp"
#include "tunekit/cl/errors.hpp"
#include "tunekit/cl/kernel_spec.hpp"
#include "tunekit/cl/opencl.hpp"
#include "tunekit/cl/profiling.hpp"
#include "tunekit/cl/program_cache.hpp"
