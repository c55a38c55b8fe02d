// How a program is compiled from its source and made again from a binary: ProgramCache's steps,
// apart so that a build helper (tools/build_helper) compiles exactly as a tuning process would.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tunekit/cl/opencl.hpp"

namespace tunekit::cl::detail {

/// `source` compiled with `options` for `device`: with the empty kernel that stamps it as this
/// program's (stamp_kernel), the compiler's summary lines held aside on PoCL, raised to sm_90a
/// where `options` name ptx_sm90a_option. Throws AutotuneError (build, or the kind of the
/// driver's code) whose message starts with the compiler's first error and holds the whole log;
/// `origin` and `device_name` name the program there.
::cl::Program compile_program(const ::cl::Context& context, const ::cl::Device& device,
                              std::string_view device_name, std::string_view source,
                              std::string_view options, std::string_view origin);

/// The driver's binary of `program` (one device): empty when the driver gives none, fails, or
/// reports one past ProgramBinaries::max_binary_bytes (then no byte of it is read).
struct DriverBinary {
  cl_int code = CL_SUCCESS;  // of the first query that failed
  std::size_t size = 0;      // what the driver reported
  std::vector<unsigned char> bytes;
};
DriverBinary binary_of(const ::cl::Program& program);

/// The program made from `binary` and built with `options`, if it is the binary of `source` with
/// `options` (it holds their stamp kernel); else why not (the driver refused it, or it is another
/// program's), for a person.
std::variant<::cl::Program, std::string> program_from_binary(
    const ::cl::Context& context, const ::cl::Device& device, const unsigned char* binary,
    std::size_t size, std::string_view source, std::string_view options);

/// Throws AutotuneError(build) naming `where` when `source` hides instructions behind
/// ptx_sm90a_marker and `options` do not ask for them to be raised (they would stay comments).
/// compile_program checks it; the program cache checks it before it counts a build.
void check_sm90a_marker(std::string_view source, std::string_view options,
                        const std::string& where);

/// "<origin> with options '<options>' on <device>": how errors name a program.
std::string program_description(std::string_view origin, std::string_view options,
                                std::string_view device_name);

}  // namespace tunekit::cl::detail
