// OpenCL error codes as tunekit::AutotuneErrors: the code's name, the right kind, and what was
// asked.
#pragma once

#include <concepts>
#include <string>
#include <string_view>

#include "tunekit/cl/opencl.hpp"
#include "tunekit/error.hpp"

namespace tunekit::cl {

/// "CL_OUT_OF_RESOURCES", ... ; "OpenCL error <code>" for codes it does not know.
std::string error_name(cl_int code);

/// The AutotuneError kind of an OpenCL error code: build failures are `build`, lack of device
/// resources `out_of_resources`, failed allocations `allocation`, rejected launches and
/// arguments `launch`, missing platforms or devices `device`, anything else `runtime`.
ErrorKind error_kind(cl_int code);

/// An AutotuneError for `code`, returned by the call described in `what`
/// (e.g. "enqueueing kernel 'saxpy' with global 1024, local 64 on <device>").
AutotuneError make_error(cl_int code, std::string_view what);

/// Throws make_error(code, what()) unless code is CL_SUCCESS. `what` is only called on failure,
/// so building the description costs nothing on the normal path.
template <std::invocable Describe>
void check(cl_int code, Describe&& what) {
  if (code != CL_SUCCESS) [[unlikely]] {
    throw make_error(code, std::string_view(std::string(what())));
  }
}

/// Throws make_error(code, what) unless code is CL_SUCCESS.
inline void check(cl_int code, const char* what) {
  if (code != CL_SUCCESS) [[unlikely]]
    throw make_error(code, what);
}

}  // namespace tunekit::cl
