// Command queues on every OpenCL version. The C++ bindings, built for a 2.0 minimum
// (include/tunekit/cl/opencl.hpp), create every queue with clCreateCommandQueueWithProperties,
// which a 1.x platform does not have; such a platform gets clCreateCommandQueue instead.
#pragma once

#include <optional>
#include <string_view>

#include "tunekit/cl/opencl.hpp"

namespace tunekit::cl::detail {

/// An OpenCL version, as CL_PLATFORM_VERSION and CL_DEVICE_VERSION begin: "OpenCL 1.2 <text>".
struct OpenclVersion {
  unsigned major = 0, minor = 0;
  friend bool operator<(const OpenclVersion& a, const OpenclVersion& b) {
    return a.major != b.major ? a.major < b.major : a.minor < b.minor;
  }
};

/// The version `text` begins with, or none where it does not read as one.
std::optional<OpenclVersion> opencl_version(std::string_view text);

/// The oldest OpenCL a client runs on: 1.2, for clEnqueueFillBuffer (the clears of outputs
/// before validation) and clGetKernelArgInfo.
inline constexpr OpenclVersion oldest_opencl{1, 2};

/// Whether a platform whose CL_PLATFORM_VERSION is `version` has
/// clCreateCommandQueueWithProperties: OpenCL 2.0 or later. A version that does not read as one
/// counts as 1.x, whose call every platform has.
bool has_queue_with_properties(std::string_view version);

/// An in-order queue on `device` with `properties` (CL_QUEUE_PROFILING_ENABLE or 0), made by
/// clCreateCommandQueueWithProperties where `with_properties_call`, else by clCreateCommandQueue;
/// `code` gets the driver's status.
::cl::CommandQueue command_queue(const ::cl::Context& context, const ::cl::Device& device,
                                 cl_command_queue_properties properties, bool with_properties_call,
                                 cl_int* code);

/// The same through the call that `device`'s platform has (has_queue_with_properties).
::cl::CommandQueue command_queue(const ::cl::Context& context, const ::cl::Device& device,
                                 cl_command_queue_properties properties, cl_int* code);

}  // namespace tunekit::cl::detail
