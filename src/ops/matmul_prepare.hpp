// What a tuning builds for one named matmul candidate before measuring it (GemmKernel::prepare,
// on the build pool's threads), called alone: the tests pin which programs that is for a shape.
#pragma once

#include <string_view>

#include "tunekit/cl/client.hpp"
#include "tunekit/ops/matmul.hpp"

namespace tunekit::ops::detail {

/// Builds what `candidate` runs for a call on these matrices, without running it (the tuner's
/// prepare). Throws std::invalid_argument for an unknown name, AutotuneError where the device
/// cannot run it.
void prepare_matmul_with(std::string_view candidate, cl::Client& client, const DeviceMatrix& a,
                         const DeviceMatrix& b, const DeviceMatrix& c);

}  // namespace tunekit::ops::detail
