// The messages between a process that builds programs and its build helpers (the executable
// tunekit-build-helper, tools/build_helper/): their one format, their bounds and how long each
// side waits. build_processes.cpp speaks for the tuning process, the helper for itself;
// fuzz/fuzz_build_reply.cpp feeds the reader and the reply's check any bytes.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/cl/program_binaries.hpp"
#include "tunekit/error.hpp"

namespace tunekit::cl::detail {

/// Raised whenever a message changes: a helper of another version refuses to serve (the process
/// then builds its programs itself).
inline constexpr std::uint32_t build_protocol_version = 2;

/// A message is a little-endian u32 count of fields (1 to max_message_fields), then each field
/// as a little-endian u64 length and its bytes. The first field names the message:
///   to a helper:   hello VERSION IDENTITY INDEX   (the device: DeviceInfo::identity(), index)
///                  build ID SOURCE OPTIONS ORIGIN  (ProgramCache::program's arguments)
///   from a helper: ready VERSION | refused REASON  (to hello)
///                  binary ID BYTES | failed ID KIND MESSAGE | unable ID REASON  (to build ID)
/// ID names the request an answer is for: the count of builds asked of that helper, in decimal
/// (build_request_id), so that an answer that comes late, after the next request went out, is
/// not taken for the next one's. `failed` is the build's AutotuneError (KIND:
/// to_string(ErrorKind)), to be thrown as it is; `unable` means the helper could not say (no
/// binary from its driver): the program is built in the asking process.
inline constexpr std::size_t max_message_fields = 5;
/// All of one message's fields together: a program binary and a little more.
inline constexpr std::size_t max_message_bytes =
    ProgramBinaries::max_binary_bytes + (std::size_t{1} << 22);
/// Any field but a binary or a source: a reason, an error message with its build log.
inline constexpr std::size_t max_text_field_bytes = std::size_t{1} << 22;

/// How long the tuning process waits for a helper to start (its device's context included).
inline constexpr std::chrono::seconds helper_start_patience{30};
/// How long it waits for one build; past it the helper is stopped and the program built here.
inline constexpr std::chrono::seconds helper_build_patience{300};
/// A helper that has had no request for this long exits (it holds a context on the device).
inline constexpr std::chrono::seconds helper_idle_exit{20};
/// The tuning process retires a helper idle this long, before the helper would leave by itself.
inline constexpr std::chrono::seconds helper_idle_retire{15};

/// The problem a reader or a sender gives when the other side has closed (ended, or was never
/// there): a helper gone, as distinct from one that is slow or lies.
inline constexpr std::string_view peer_closed = "the other side closed";

/// Gives exactly `size` bytes into `into`, or false (the other side closed, failed or was too
/// slow: `problem` says which).
using ByteSource = std::function<bool(char* into, std::size_t size, std::string& problem)>;

/// One message as bytes.
std::string encode_message(const std::vector<std::string_view>& fields);

/// Whether `fields` make a message read_message takes (their count and their bytes together
/// within the bounds above).
bool fits_a_message(const std::vector<std::string_view>& fields);

/// The next message from `source`; empty with `problem` set when there is none (closed, too
/// slow) or the bytes are no message (a count or a length past the bounds above). Allocates no
/// more than the lengths it has checked, and about as much as it has received (a megabyte at a
/// time).
std::vector<std::string> read_message(const ByteSource& source, std::string& problem);

/// Sends all of `bytes` on the socket `fd` by `deadline`, without a SIGPIPE when the other side is
/// gone; false (with `problem`: "the other side closed", "no room to send in time", ...) when
/// it cannot.
bool send_all(int fd, std::string_view bytes, std::chrono::steady_clock::time_point deadline,
              std::string& problem);

/// A ByteSource reading the socket `fd` until `deadline`.
ByteSource socket_source(int fd, std::chrono::steady_clock::time_point deadline);

/// The ID of the `count`-th build asked of one helper (from 1).
std::string build_request_id(std::uint64_t count);

/// What a helper answered to the build request `request_id`: the binary, or the build's error (of
/// kind build only: any other kind is the helper's own trouble, its memory or its context, not
/// the program's), or nothing with `problem` set (the helper could not say, the answer is for
/// another request, or it is none of these).
struct BuildReply {
  std::string binary;  // moved out of the message's field
  std::optional<AutotuneError> failure;
};
std::optional<BuildReply> read_build_reply(std::vector<std::string>&& fields,
                                           std::string_view request_id, std::string& problem);

/// Whether `fields` say that the helper could not build request `request_id` (unable): a helper
/// well, that stays, unlike one whose answer is wrong.
bool unable_to_build(const std::vector<std::string>& fields, std::string_view request_id);

}  // namespace tunekit::cl::detail
