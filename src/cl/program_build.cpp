// A program compiled from its source, or made again from a binary (program_build.hpp).
#include "program_build.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "compiler_chatter.hpp"
#include "kernel_file.hpp"
#include "ptx_sm90a.hpp"
#include "tunekit/cl/errors.hpp"
#include "tunekit/cl/program_binaries.hpp"
#include "tunekit/cl/program_cache.hpp"
#include "tunekit/stable_hash.hpp"

namespace tunekit::cl::detail {

namespace {

// The program built again from its PTX raised to sm_90a (ptx_sm90a_option).
::cl::Program raised_to_sm90a(const ::cl::Context& context, const ::cl::Device& device,
                              const ::cl::Program& built, std::string_view options,
                              const std::string& where) {
  const DriverBinary binary = binary_of(built);
  check(binary.code, [&] { return "reading the PTX of " + where; });
  if (binary.bytes.empty()) {
    throw AutotuneError(ErrorKind::build, "raising " + where + " to sm_90a: the driver gave a " +
                                              std::to_string(binary.size) + "-byte binary");
  }
  const std::string raised = raise_ptx_to_sm90a(
      std::string_view(reinterpret_cast<const char*>(binary.bytes.data()), binary.bytes.size()));
  cl_int code = CL_SUCCESS;
  const auto* bytes = reinterpret_cast<const unsigned char*>(raised.data());
  const std::size_t length = raised.size();
  cl_device_id id = device();
  cl_int status = CL_SUCCESS;
  cl_program raw = clCreateProgramWithBinary(context(), 1, &id, &length, &bytes, &status, &code);
  if (code == CL_SUCCESS) code = status;
  if (code != CL_SUCCESS) {
    if (raw != nullptr) clReleaseProgram(raw);
    check(code, [&] { return "loading the PTX of " + where + " raised to sm_90a"; });
  }
  ::cl::Program program(raw);  // takes ownership
  code = program.build(std::vector<::cl::Device>{device}, std::string(options).c_str());
  if (code != CL_SUCCESS) {
    std::string log;
    program.getBuildInfo(device, CL_PROGRAM_BUILD_LOG, &log);
    throw AutotuneError(error_kind(code), "building " + where + " raised to sm_90a failed: " +
                                              error_name(code) + "; build log:\n" + log);
  }
  return program;
}

/// The name of the empty kernel every program is compiled with: the hash of its source and
/// options. A binary proves it is this program's by holding it (a binary of another program,
/// well-formed and under this program's file name, does not).
std::string stamp_kernel(std::string_view source, std::string_view options) {
  char name[40];
  std::snprintf(name, sizeof name, "tunekit_program_%016" PRIx64,
                stable_hash(std::string(source) + '\0' + std::string(options)));
  return name;
}

/// Whether `names` (CL_PROGRAM_KERNEL_NAMES: "a;b;c") holds `name`.
bool holds_kernel(std::string_view names, std::string_view name) {
  while (!names.empty()) {
    const auto end = std::min(names.find(';'), names.size());
    if (names.substr(0, end) == name) return true;
    names.remove_prefix(std::min(end + 1, names.size()));
  }
  return false;
}

}  // namespace

void check_sm90a_marker(std::string_view source, std::string_view options,
                        const std::string& where) {
  // Instructions hidden behind the marker stay PTX comments unless the program is raised: the
  // kernel would build and compute something else.
  if (source.find(ptx_sm90a_marker) != std::string_view::npos && !wants_ptx_sm90a(options)) {
    throw AutotuneError(ErrorKind::build, "building " + where + ": its source hides instructions " +
                                              "behind " + std::string(ptx_sm90a_marker) +
                                              ", but its options do not name " +
                                              std::string(ptx_sm90a_option) +
                                              "; without it they would stay comments");
  }
}

std::string program_description(std::string_view origin, std::string_view options,
                                std::string_view device_name) {
  return std::string(origin) + " with options '" + std::string(options) + "' on " +
         std::string(device_name);
}

DriverBinary binary_of(const ::cl::Program& program) {
  DriverBinary binary;
  binary.code = clGetProgramInfo(program(), CL_PROGRAM_BINARY_SIZES, sizeof binary.size,
                                 &binary.size, nullptr);
  if (binary.code != CL_SUCCESS || binary.size == 0 ||
      binary.size > ProgramBinaries::max_binary_bytes) {
    return binary;
  }
  binary.bytes.resize(binary.size);
  unsigned char* data = binary.bytes.data();
  binary.code = clGetProgramInfo(program(), CL_PROGRAM_BINARIES, sizeof data, &data, nullptr);
  if (binary.code != CL_SUCCESS) binary.bytes.clear();
  return binary;
}

::cl::Program compile_program(const ::cl::Context& context, const ::cl::Device& device,
                              std::string_view device_name, std::string_view source,
                              std::string_view options, std::string_view origin) {
  const std::string where = program_description(origin, options, device_name);
  check_sm90a_marker(source, options, where);
  cl_int code = CL_SUCCESS;
  // Two line ends: a source whose last line ends in a backslash (a comment, a macro) splices
  // the first with it, and would swallow the stamp kernel.
  const std::string compiled = named_source(source, origin) + "\n\n__kernel void " +
                               stamp_kernel(source, options) + "(void) {}\n";
  ::cl::Program program(context, compiled, false, &code);
  check(code, [&] { return "creating the program " + where; });
  {
    const CompilerChatterGuard aside(chatty_compiler(
        ::cl::Platform(device.getInfo<CL_DEVICE_PLATFORM>()).getInfo<CL_PLATFORM_NAME>()));
    code = program.build(std::vector<::cl::Device>{device}, std::string(options).c_str());
  }
  if (code != CL_SUCCESS) {
    std::string log;
    program.getBuildInfo(device, CL_PROGRAM_BUILD_LOG, &log);
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    log = with_source_lines(compiled, std::move(log));  // the user's files and lines
    // The first compiler error leads (a table shows the first line), then the whole log.
    const std::string_view first = first_error(log);
    throw AutotuneError(error_kind(code), (first.empty() ? "" : std::string(first) + "\n") +
                                              "building " + where + " failed: " + error_name(code) +
                                              (log.empty() ? std::string(" (empty build log)")
                                                           : "; build log:\n" + log));
  }
  if (wants_ptx_sm90a(options)) return raised_to_sm90a(context, device, program, options, where);
  return program;
}

std::variant<::cl::Program, std::string> program_from_binary(
    const ::cl::Context& context, const ::cl::Device& device, const unsigned char* binary,
    std::size_t size, std::string_view source, std::string_view options) {
  cl_int code = CL_SUCCESS;
  cl_int status = CL_SUCCESS;
  const unsigned char* bytes = binary;
  cl_device_id id = device();
  cl_program raw = clCreateProgramWithBinary(context(), 1, &id, &size, &bytes, &status, &code);
  if (code != CL_SUCCESS || status != CL_SUCCESS) {
    if (raw != nullptr) clReleaseProgram(raw);
    return "the driver rejected it: " + error_name(code != CL_SUCCESS ? code : status);
  }
  ::cl::Program program(raw);  // takes ownership
  code = program.build(std::vector<::cl::Device>{device}, std::string(options).c_str());
  if (code != CL_SUCCESS) {
    // Some drivers (NVIDIA) accept any bytes when creating and reject them only when building.
    return "the driver rejected it when building it: " + error_name(code);
  }
  std::string names;
  (void)program.getInfo(CL_PROGRAM_KERNEL_NAMES, &names);
  while (!names.empty() && names.back() == '\0') names.pop_back();
  if (!holds_kernel(names, stamp_kernel(source, options))) {
    return "it is another program's binary (its kernels: " + names.substr(0, 200) + ")";
  }
  return program;
}

}  // namespace tunekit::cl::detail
