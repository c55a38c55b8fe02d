// DeviceLimits: what a device allows a candidate (work-group size, local memory), for clients
// that know it; configurations of a space beyond it fail before anything runs.
#pragma once

#include <concepts>
#include <cstddef>

namespace tunekit {

/// What a device allows; configurations beyond it are rejected before anything runs.
struct DeviceLimits {
  std::size_t max_work_group_size = 0;  ///< 0: unknown, not checked
  std::size_t local_memory_bytes = 0;   ///< 0: unknown, not checked
};

/// A client that knows its device's limits (cl::Client does; HostClient does not).
template <class C>
concept HasDeviceLimits = requires(const C& client) {
  { client.limits() } -> std::convertible_to<DeviceLimits>;
};

}  // namespace tunekit
