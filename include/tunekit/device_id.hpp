// DeviceId: names the device a tuning belongs to.
#pragma once

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace tunekit {

/// The identity of a device (for OpenCL: platform, device, driver, compute units, local memory).
/// Tunings are kept per DeviceId, in memory and on disk; the hash is computed once so that the
/// per-call lookup costs one comparison.
class DeviceId {
 public:
  explicit DeviceId(std::string identity)
      : identity_(std::move(identity)), hash_(std::hash<std::string>{}(identity_)) {}

  const std::string& identity() const noexcept { return identity_; }
  std::size_t hash() const noexcept { return hash_; }

  friend bool operator==(const DeviceId& a, const DeviceId& b) noexcept {
    return a.hash_ == b.hash_ && a.identity_ == b.identity_;
  }
  friend std::ostream& operator<<(std::ostream& os, const DeviceId& id) {
    return os << id.identity_;
  }

 private:
  std::string identity_;
  std::size_t hash_;
};

/// The device's name alone, for the lines a person reads (the whole identity is ~230 characters):
/// "NVIDIA H100 80GB HBM3" from an OpenCL identity ("OpenCL | platform | version | device | ..",
/// cl::DeviceInfo::identity()), the CPU model from a HostClient's ("host | model | n threads"),
/// and any other identity whole. The one place that reads a name out of an identity: tables,
/// logs and the HTML report call it.
std::string device_name(std::string_view identity);

}  // namespace tunekit
