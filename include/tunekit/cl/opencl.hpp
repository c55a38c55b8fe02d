// Includes OpenCL-CLHPP configured as tunekit is built against it (OpenCL 3.0 API, 2.0 minimum,
// error codes instead of exceptions: tunekit turns codes into AutotuneErrors itself).
#pragma once

// The tunekit_cl target defines these for its users too; the fallbacks keep a header-only
// include consistent. Every translation unit must agree, or CLHPP's classes differ between them.
#ifndef CL_HPP_TARGET_OPENCL_VERSION
#define CL_HPP_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_HPP_MINIMUM_OPENCL_VERSION
#define CL_HPP_MINIMUM_OPENCL_VERSION 200
#endif

#include <CL/opencl.hpp>
