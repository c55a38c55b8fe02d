// Raising a program's PTX to sm_90a (Hopper's arch-specific instructions, wgmma among them):
// NVIDIA's OpenCL writes `.target sm_90` and no build option changes it (docs/opencl.md), so a
// kernel hides those instructions behind a PTX comment marker, and ProgramCache builds the PTX
// again with the markers removed and the target raised (program_cache.cpp).
#pragma once

#include <string>
#include <string_view>

namespace tunekit::cl::detail {

/// Whether `options` ask for the raise (they name cl::ptx_sm90a_option as a whole option).
bool wants_ptx_sm90a(std::string_view options);

/// `ptx` (a program binary of NVIDIA's OpenCL: PTX text) with every cl::ptx_sm90a_marker removed
/// and its `.target sm_90` raised to `sm_90a`. Throws AutotuneError(build) naming what is wrong
/// when the bytes are not such PTX: not text, no `.version`, not exactly one `.target sm_90`.
std::string raise_ptx_to_sm90a(std::string_view ptx);

}  // namespace tunekit::cl::detail
