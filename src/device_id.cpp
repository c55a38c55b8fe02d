// The name part of a device identity (device_id.hpp).
#include "tunekit/device_id.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

std::string device_name(std::string_view identity) {
  std::vector<std::string_view> fields;
  for (std::size_t start = 0;;) {
    const auto bar = identity.find(" | ", start);
    fields.push_back(identity.substr(start, bar == std::string_view::npos ? bar : bar - start));
    if (bar == std::string_view::npos) break;
    start = bar + 3;
  }
  // The layouts that cl::DeviceInfo::identity() and HostClient write; a field found empty (a
  // hostile or hand-made identity) names nothing, so the whole identity is shown instead.
  std::string_view name = identity;
  if (fields.size() >= 7 && fields[0] == "OpenCL" && !fields[3].empty()) name = fields[3];
  if (fields.size() == 3 && fields[0] == "host" && !fields[1].empty()) name = fields[1];
  return std::string(name);
}

}  // namespace tunekit
