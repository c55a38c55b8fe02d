// tunekit-build-helper: compiles OpenCL programs for a process that tunes
// (src/cl/build_processes.cpp starts it), so that a driver that builds one program at a time in a
// process (NVIDIA's) builds several at once across processes. Not for people: it speaks
// build_protocol.hpp's messages on the socket `--socket N` names, builds each program exactly as
// the asking process would (detail::compile_program) and sends its binary or its build error back.
// It leaves when the socket closes (its parent closed it, or ended), in the middle of a build too,
// or after helper_idle_exit without a request.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>
#include <thread>

#include "build_protocol.hpp"
#include "program_build.hpp"
#include "tunekit/cl/device.hpp"
#include "tunekit/cl/errors.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace detail = tunekit::cl::detail;

bool reply(int socket, const std::vector<std::string_view>& fields) {
  std::string problem;
  return detail::send_all(socket, detail::encode_message(fields),
                          Clock::now() + detail::helper_build_patience, problem);
}

// Ends the helper as soon as the other side closes the socket (or ends), even while a build
// runs: a driver's compile that never returns does not keep the helper, and its context on the
// device, alive after the program is gone.
void leave_when_closed(int socket) {
  std::thread([socket] {
    for (;;) {
      pollfd closed{socket, POLLRDHUP, 0};
      if (::poll(&closed, 1, -1) > 0 && (closed.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) {
        ::_exit(0);
      }
    }
  }).detach();
}

// The socket's descriptor from `--socket N`, or -1.
int socket_argument(int argc, char** argv) {
  if (argc != 3 || std::string_view(argv[1]) != "--socket") return -1;
  const std::string_view text = argv[2];
  int fd = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), fd);
  if (error != std::errc() || end != text.data() + text.size() || fd < 0) return -1;
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISSOCK(status.st_mode)) return -1;
  return fd;
}

std::size_t index_of(std::string_view text) {
  std::size_t index = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), index);
  return error == std::errc() && end == text.data() + text.size() && !text.empty() ? index
                                                                                   : SIZE_MAX;
}

}  // namespace

int main(int argc, char** argv) {
  // A parent gone is a failed send, not a signal. (Its end of the socket closes when it exits,
  // which ends the wait for the next request: no PR_SET_PDEATHSIG, which would fire when the
  // parent's thread that started this helper ends, while the parent still uses it.)
  ::signal(SIGPIPE, SIG_IGN);
  const int socket = socket_argument(argc, argv);
  if (socket < 0) {
    std::fprintf(stderr,
                 "tunekit-build-helper: not for people; a process that tunes starts it with "
                 "--socket N (docs/opencl.md)\n");
    return 2;
  }
  // Not passed on to whatever a driver's compiler runs: its copy would keep the socket open.
  ::fcntl(socket, F_SETFD, FD_CLOEXEC);
  leave_when_closed(socket);
  std::string problem;
  const auto hello = detail::read_message(
      detail::socket_source(socket, Clock::now() + detail::helper_start_patience), problem);
  if (hello.size() != 4 || hello[0] != "hello") {
    reply(socket, {"refused", hello.empty() ? "no hello (" + problem + ")"
                                            : "a start message that is no hello"});
    return 1;
  }
  const std::string version = std::to_string(detail::build_protocol_version);
  if (hello[1] != version) {
    reply(socket, {"refused", "this helper speaks version " + version + " of the messages, not " +
                                  hello[1].substr(0, 20)});
    return 1;
  }
  // What fails before the helper is ready is said (refused), so that the process that started it
  // can name why it builds its programs itself.
  std::vector<tunekit::cl::DeviceInfo> devices;
  try {
    devices = tunekit::cl::list_devices();
  } catch (const std::exception& error) {
    reply(socket, {"refused", std::string("listing the devices: ") + error.what()});
    return 1;
  }
  try {
    const std::size_t index = index_of(hello[3]);
    if (index >= devices.size() || devices[index].identity() != hello[2]) {
      reply(socket, {"refused", "no device #" + hello[3].substr(0, 20) + " with that identity " +
                                    "here (" + std::to_string(devices.size()) + " devices)"});
      return 1;
    }
    const auto& device = devices[index];
    cl_int code = CL_SUCCESS;
    const ::cl::Context context(device.device, nullptr, nullptr, nullptr, &code);
    if (code != CL_SUCCESS) {
      reply(socket, {"refused", "creating a context: " + tunekit::cl::error_name(code)});
      return 1;
    }
    if (!reply(socket, {"ready", version})) return 1;
    for (;;) {
      const auto request = detail::read_message(
          detail::socket_source(socket, Clock::now() + detail::helper_idle_exit), problem);
      if (request.empty()) return 0;  // closed, or idle too long
      if (request.size() != 5 || request[0] != "build") return 1;
      const std::string_view id = request[1];  // echoed: the answer names its request
      if (id.size() > detail::build_request_id(UINT64_MAX).size()) return 1;
      try {
        const ::cl::Program program = detail::compile_program(
            context, device.device, device.device_name, request[2], request[3], request[4]);
        const detail::DriverBinary binary = detail::binary_of(program);
        if (binary.bytes.empty()) {
          reply(socket, {"unable", id,
                         "the driver gave a " + std::to_string(binary.size) + "-byte binary (" +
                             tunekit::cl::error_name(binary.code) + ")"});
          continue;
        }
        if (!reply(socket, {"binary", id,
                            std::string_view(reinterpret_cast<const char*>(binary.bytes.data()),
                                             binary.bytes.size())})) {
          return 0;
        }
      } catch (const tunekit::AutotuneError& error) {
        const std::string_view message =
            std::string_view(error.message()).substr(0, detail::max_text_field_bytes);
        if (!reply(socket, {"failed", id, tunekit::to_string(error.kind()), message})) return 0;
      }
    }
  } catch (const std::exception&) {
    // Out of memory, most likely: it leaves without a word, and the program builds this one
    // itself (an "unable" would keep a dying helper in its pool).
    return 1;
  }
}
