// libFuzzer target for the OpenCL device selector (tunekit::cl::select_device, what TUNEKIT_DEVICE
// goes through), on the devices of this machine (PoCL in CI). Any selector either names a device
// by the documented rule (empty: the default; digits: an index; else a case-insensitive part of
// "<platform> <device>", first match) or throws AutotuneError(device) listing the devices;
// nothing else (no other exception, no crash, no sanitizer report in tunekit's code).
// Build and run: fuzz/run.sh device_selector [seconds]   (or cmake -DTUNEKIT_FUZZ=ON)
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <tunekit/cl/device.hpp>
#include <tunekit/error.hpp>
#include <vector>

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace cl = tunekit::cl;
  using tunekit::AutotuneError;
  using tunekit::ErrorKind;
  static const std::vector<cl::DeviceInfo> devices = cl::list_devices();
  if (devices.empty()) std::abort();  // the target needs a device to be meaningful
  const std::string_view selector(reinterpret_cast<const char*>(data), size);
  const bool digits =
      !selector.empty() && std::all_of(selector.begin(), selector.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
      });
  try {
    const cl::DeviceInfo device = cl::select_device(selector);
    require(device.index < devices.size());
    require(device.identity() == devices[device.index].identity());
    if (digits) {
      // The index, in decimal, with any leading zeros.
      const auto first = selector.find_first_not_of('0');
      const std::string_view number =
          first == std::string_view::npos ? "0" : selector.substr(first);
      require(number == std::to_string(device.index));
    } else if (!selector.empty()) {
      const std::string wanted = lowercase(selector);
      require(lowercase(device.platform_name + " " + device.device_name).find(wanted) !=
              std::string::npos);
      for (std::size_t i = 0; i < device.index; ++i) {  // the first match
        require(lowercase(devices[i].platform_name + " " + devices[i].device_name).find(wanted) ==
                std::string::npos);
      }
    }
  } catch (const AutotuneError& e) {
    require(e.kind() == ErrorKind::device);
    require(!selector.empty());  // an empty selector always finds a device when there is one
    require(e.message().find(devices.front().device_name) != std::string::npos);  // lists them
  }
  return 0;
}
