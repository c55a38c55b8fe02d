// The devices the shipped ops' start points were found on (Space::start_at's found_on), as parts
// of an OpenCL identity (cl::DeviceInfo::identity()). A start point vouches only for those: on
// another device it is measured first but the search keeps its whole patience.
#pragma once

#include <string>
#include <vector>

namespace tunekit::ops {

/// NVIDIA's Hopper GPUs, one chip: the H100 and H200 of the kernel lab, the shape oracle and the
/// recorded tables.
inline std::vector<std::string> found_on_hopper() { return {"NVIDIA H100", "NVIDIA H200"}; }

/// PoCL's CPU devices (this project's CI machines).
inline std::vector<std::string> found_on_pocl() { return {"Portable Computing Language"}; }

}  // namespace tunekit::ops
