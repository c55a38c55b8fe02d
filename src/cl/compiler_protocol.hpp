// What a program's build threads and their compiler processes (tunekit-compiler) say to each
// other over a socket: frames of a 4-byte tag and a few length-prefixed fields. Both sides treat
// what they read as hostile: every length is bounded before anything is allocated, and every
// wait has a deadline. Shared by compiler_processes.cpp (the library's side) and
// compiler_main.cpp (the process's).
//
//   library -> process   HELO  [protocol version, device identity]
//   process -> library   HERE  ["ok" | why not]
//   library -> process   MAKE  [source, build options]
//   process -> library   MADE  ["ok" | "failed", the program binary | the build log]
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit::cl::detail {

/// Raised whenever the frames or their meaning change: a process of another version says so in
/// its HERE and is not used.
inline constexpr std::string_view compiler_protocol_version = "tunekit-compiler 1";

/// The most a frame may hold, all fields together: a source, or a binary.
inline constexpr std::size_t compiler_frame_limit = std::size_t{256} << 20;

using CompilerClock = std::chrono::steady_clock;
/// No deadline: wait as long as it takes (the process side's reads of a request in progress).
inline constexpr std::optional<CompilerClock::time_point> no_deadline = std::nullopt;

struct Frame {
  std::string tag;
  std::vector<std::string> fields;
};

/// The bytes of a frame.
std::string encode_frame(std::string_view tag, const std::vector<std::string_view>& fields);

enum class Io { ok, closed, timed_out, failed };

struct FrameRead {
  Io status = Io::failed;
  Frame frame;
  std::string problem;  ///< for failed: what was wrong with the bytes (or the read)
};

/// Reads one frame from `fd`: `tag` and exactly `fields` fields, at most `limit` bytes in all.
/// closed: the other side closed before the first byte; timed_out: `deadline` passed; failed:
/// anything else (a short frame, another tag, a length past the limit), with the reason.
FrameRead read_frame(int fd, std::string_view tag, std::size_t fields, std::size_t limit,
                     std::optional<CompilerClock::time_point> deadline);

/// Writes all of `bytes` to the socket `fd` before `deadline` (never raises SIGPIPE).
Io write_frame(int fd, std::string_view bytes,
               std::optional<CompilerClock::time_point> deadline);

}  // namespace tunekit::cl::detail
