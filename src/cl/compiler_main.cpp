// tunekit-compiler: a process that compiles OpenCL programs for one of a tunekit program's build
// threads (compiler_processes.hpp says why). Started by the library with its socket as stdin and
// stdout; answers HELO once, then one MADE per MAKE, and leaves when the socket closes or after
// 30 s without a request. Not for use by hand.
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "compiler_protocol.hpp"
#include "tunekit/cl/device.hpp"
#include "tunekit/cl/opencl.hpp"

namespace {

using namespace tunekit::cl;
using namespace tunekit::cl::detail;

constexpr int in = 0;
constexpr int out = 1;
constexpr auto idle_limit = std::chrono::seconds(30);
constexpr auto request_limit = std::chrono::seconds(60);  // once its first byte came

bool answer(std::string_view tag, const std::vector<std::string_view>& fields) {
  return write_frame(out, encode_frame(tag, fields),
                     CompilerClock::now() + std::chrono::seconds(60)) == Io::ok;
}

// Whether a request comes within the idle limit.
bool request_comes() {
  pollfd entry{in, POLLIN, 0};
  for (;;) {
    const int ready = ::poll(&entry, 1, static_cast<int>(idle_limit / std::chrono::milliseconds(1)));
    if (ready < 0 && errno == EINTR) continue;
    return ready > 0;
  }
}

std::string build_log(const ::cl::Program& program, const ::cl::Device& device) {
  std::string log;
  program.getBuildInfo(device, CL_PROGRAM_BUILD_LOG, &log);
  return log;
}

int serve() {
  const auto hello = read_frame(in, "HELO", 2, 1 << 20, CompilerClock::now() + idle_limit);
  if (hello.status != Io::ok) return 1;
  if (hello.frame.fields[0] != compiler_protocol_version) {
    answer("HERE", {"it speaks " + std::string(compiler_protocol_version) + ", not " +
                    hello.frame.fields[0].substr(0, 100)});
    return 1;
  }
  const std::string& identity = hello.frame.fields[1];
  std::optional<DeviceInfo> chosen;
  for (auto& device : list_devices()) {
    if (device.identity() == identity) {
      chosen = std::move(device);
      break;
    }
  }
  if (!chosen) {
    answer("HERE", {"no device here is " + identity.substr(0, 300)});
    return 1;
  }
  cl_int code = CL_SUCCESS;
  const ::cl::Context context(chosen->device, nullptr, nullptr, nullptr, &code);
  if (code != CL_SUCCESS) {
    answer("HERE", {"cannot create a context on " + chosen->device_name + ": error " +
                    std::to_string(code)});
    return 1;
  }
  if (!answer("HERE", {"ok"})) return 1;

  while (request_comes()) {
    const auto request = read_frame(in, "MAKE", 2, compiler_frame_limit,
                                    CompilerClock::now() + request_limit);
    if (request.status != Io::ok) return request.status == Io::closed ? 0 : 1;
    const std::string& source = request.frame.fields[0];
    const std::string& options = request.frame.fields[1];
    ::cl::Program program(context, source, false, &code);
    if (code == CL_SUCCESS) {
      code = program.build(std::vector<::cl::Device>{chosen->device}, options.c_str());
    }
    if (code != CL_SUCCESS) {
      const std::string log = code == CL_BUILD_PROGRAM_FAILURE ? build_log(program, chosen->device)
                                                               : "error " + std::to_string(code);
      if (!answer("MADE", {"failed", log})) return 1;
      continue;
    }
    std::size_t size = 0;
    std::vector<unsigned char> binary;
    if (clGetProgramInfo(program(), CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) ==
            CL_SUCCESS &&
        size > 0 && size <= compiler_frame_limit) {
      binary.resize(size);
      unsigned char* data = binary.data();
      if (clGetProgramInfo(program(), CL_PROGRAM_BINARIES, sizeof data, &data, nullptr) !=
          CL_SUCCESS) {
        binary.clear();
      }
    }
    // No binary (a driver that gives none): "ok" with nothing, and the library builds itself.
    const std::string_view bytes(reinterpret_cast<const char*>(binary.data()), binary.size());
    if (!answer("MADE", {"ok", bytes})) return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || std::string_view(argv[1]) != "--serve") {
    std::fprintf(stderr,
                 "tunekit-compiler: compiles OpenCL programs for a tunekit program's build "
                 "threads (Settings::build_processes); it is started by the library, not by "
                 "hand.\n");
    return 2;
  }
  // Only the socket: nothing the starting program left open without close-on-exec.
  for (int fd = 3; fd < 1024; ++fd) ::close(fd);
  try {
    return serve();
  } catch (...) {  // a driver's exception: the library builds itself
    return 1;
  }
}
