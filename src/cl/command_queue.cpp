#include "command_queue.hpp"

#include <cctype>
#include <string>

namespace tunekit::cl::detail {

std::optional<OpenclVersion> opencl_version(std::string_view text) {
  constexpr std::string_view prefix = "OpenCL ";
  if (text.substr(0, prefix.size()) != prefix) return std::nullopt;
  text.remove_prefix(prefix.size());
  // Up to four digits a part: a version, not a number that could overflow.
  const auto part = [&text](unsigned& value) {
    std::size_t digits = 0;
    for (; digits < text.size() && digits < 4 &&
           std::isdigit(static_cast<unsigned char>(text[digits])) != 0;
         ++digits) {
      value = value * 10 + static_cast<unsigned>(text[digits] - '0');
    }
    const bool whole = digits > 0 && (digits == text.size() ||
                                      std::isdigit(static_cast<unsigned char>(text[digits])) == 0);
    text.remove_prefix(digits);
    return whole;
  };
  OpenclVersion version;
  if (!part(version.major) || text.empty() || text.front() != '.') return std::nullopt;
  text.remove_prefix(1);
  if (!part(version.minor)) return std::nullopt;
  return version;
}

bool has_queue_with_properties(std::string_view version) {
  const auto read = opencl_version(version);
  return read && !(*read < OpenclVersion{2, 0});
}

::cl::CommandQueue command_queue(const ::cl::Context& context, const ::cl::Device& device,
                                 cl_command_queue_properties properties, bool with_properties_call,
                                 cl_int* code) {
  cl_command_queue queue = nullptr;
  if (with_properties_call) {
    const cl_queue_properties list[] = {CL_QUEUE_PROPERTIES, properties, 0};
    queue = ::clCreateCommandQueueWithProperties(context(), device(), list, code);
  } else {
    // Deprecated from 2.0 on, and the only call a 1.x platform has.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    queue = ::clCreateCommandQueue(context(), device(), properties, code);
#pragma GCC diagnostic pop
  }
  return queue == nullptr ? ::cl::CommandQueue() : ::cl::CommandQueue(queue);
}

::cl::CommandQueue command_queue(const ::cl::Context& context, const ::cl::Device& device,
                                 cl_command_queue_properties properties, cl_int* code) {
  std::string version;
  cl_platform_id platform = nullptr;
  if (::clGetDeviceInfo(device(), CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr) ==
      CL_SUCCESS) {
    ::cl::Platform(platform, true).getInfo(CL_PLATFORM_VERSION, &version);
  }
  return command_queue(context, device, properties, has_queue_with_properties(version), code);
}

}  // namespace tunekit::cl::detail
