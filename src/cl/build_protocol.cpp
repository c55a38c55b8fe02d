// The build helpers' messages: encoding, a bounded reader, sockets without SIGPIPE, and the
// check of a reply to `build` (build_protocol.hpp).
#include "build_protocol.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "../cache/private_files.hpp"  // poll_until, errno_text
#include "tunekit/outcome.hpp"         // printable

namespace tunekit::cl::detail {

namespace {

void put_u32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

void put_u64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

std::uint64_t little_endian(const char* bytes, int size) {
  std::uint64_t value = 0;
  for (int i = size - 1; i >= 0; --i) {
    value = value << 8 | static_cast<unsigned char>(bytes[i]);
  }
  return value;
}

}  // namespace

std::string encode_message(const std::vector<std::string_view>& fields) {
  std::size_t size = 4;
  for (std::string_view field : fields) size += 8 + field.size();
  std::string out;
  out.reserve(size);
  put_u32(out, static_cast<std::uint32_t>(fields.size()));
  for (std::string_view field : fields) {
    put_u64(out, field.size());
    out += field;
  }
  return out;
}

bool fits_a_message(const std::vector<std::string_view>& fields) {
  if (fields.empty() || fields.size() > max_message_fields) return false;
  std::size_t total = 0;
  for (std::string_view field : fields) {
    if (field.size() > max_message_bytes - total) return false;
    total += field.size();
  }
  return true;
}

std::vector<std::string> read_message(const ByteSource& source, std::string& problem) {
  char header[8];
  if (!source(header, 4, problem)) return {};
  const std::uint64_t count = little_endian(header, 4);
  if (count == 0 || count > max_message_fields) {
    problem = "a message of " + std::to_string(count) + " fields (1 to " +
              std::to_string(max_message_fields) + " expected)";
    return {};
  }
  std::vector<std::string> fields;
  std::size_t total = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (!source(header, 8, problem)) return {};
    const std::uint64_t length = little_endian(header, 8);
    // Checked before anything is allocated for it.
    if (length > max_message_bytes - total) {
      problem = "a field of " + std::to_string(length) + " bytes (a message holds at most " +
                std::to_string(max_message_bytes) + ")";
      return {};
    }
    total += static_cast<std::size_t>(length);
    // Grown as the bytes arrive: a length the sender does not follow with bytes costs nothing.
    // Doubled by hand up to the length and no further (a string's own growth doubles past it: a
    // 257 MiB field held 512 MiB).
    constexpr std::size_t chunk = std::size_t{1} << 20;
    std::string field;
    while (field.size() < length) {
      const std::size_t part = std::min<std::size_t>(chunk, length - field.size());
      const std::size_t wanted = field.size() + part;
      if (wanted > field.capacity()) {
        std::string larger;
        larger.reserve(std::min<std::size_t>(length, std::max(wanted, 2 * field.size())));
        larger.append(field);
        field.swap(larger);
      }
      field.resize(wanted);
      if (!source(field.data() + field.size() - part, part, problem)) return {};
    }
    fields.push_back(std::move(field));
  }
  return fields;
}

bool send_all(int fd, std::string_view bytes, std::chrono::steady_clock::time_point deadline,
              std::string& problem) {
  while (!bytes.empty()) {
    const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent >= 0) {
      bytes.remove_prefix(static_cast<std::size_t>(sent));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EPIPE || errno == ECONNRESET) {
      problem = peer_closed;
      return false;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      problem = "sending failed: " + tunekit::detail::errno_text(errno);
      return false;
    }
    // The other side reads no more for now: wait for room, as long as the deadline allows.
    const int room = tunekit::detail::poll_until(fd, POLLOUT, deadline);
    if (room == 0) {
      problem = "no room to send in time";
      return false;
    }
    if (room < 0) {
      problem = "waiting failed: " + tunekit::detail::errno_text(errno);
      return false;
    }
  }
  return true;
}

ByteSource socket_source(int fd, std::chrono::steady_clock::time_point deadline) {
  return [fd, deadline](char* into, std::size_t size, std::string& problem) {
    while (size > 0) {
      const int ready = tunekit::detail::poll_until(fd, POLLIN, deadline);
      if (ready == 0) {
        problem = "no answer in time";
        return false;
      }
      if (ready < 0) {
        problem = "waiting failed: " + tunekit::detail::errno_text(errno);
        return false;
      }
      const ssize_t got = ::recv(fd, into, size, 0);
      // A peer that exits with our bytes unread resets the connection: closed all the same.
      if (got == 0 || (got < 0 && errno == ECONNRESET)) {
        problem = peer_closed;
        return false;
      }
      if (got < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        problem = "receiving failed: " + tunekit::detail::errno_text(errno);
        return false;
      }
      into += got;
      size -= static_cast<std::size_t>(got);
    }
    return true;
  };
}

std::string build_request_id(std::uint64_t count) { return std::to_string(count); }

bool unable_to_build(const std::vector<std::string>& fields, std::string_view request_id) {
  return fields.size() == 3 && fields[0] == "unable" && fields[1] == request_id;
}

std::optional<BuildReply> read_build_reply(std::vector<std::string>&& fields,
                                           std::string_view request_id, std::string& problem) {
  const std::string_view name = fields.empty() ? std::string_view() : fields.front();
  const bool known = (name == "binary" && fields.size() == 3) ||
                     (name == "failed" && fields.size() == 4) ||
                     (name == "unable" && fields.size() == 3);
  if (!known) {
    problem = "an answer '" + printable(name, 40) + "' of " + std::to_string(fields.size()) +
              " fields, not one to a build";
    return std::nullopt;
  }
  if (fields[1] != request_id) {  // a late answer, or a confused helper: never this request's
    problem = "an answer to request '" + printable(fields[1], 40) + "', not to request " +
              std::string(request_id) + " (late, or to no request)";
    return std::nullopt;
  }
  if (name == "binary") {
    if (fields[2].empty() || fields[2].size() > ProgramBinaries::max_binary_bytes) {
      problem = "a binary of " + std::to_string(fields[2].size()) + " bytes";
      return std::nullopt;
    }
    BuildReply reply;
    reply.binary = std::move(fields[2]);
    return reply;
  }
  if (name == "failed") {
    const auto kind = error_kind_named(fields[2]);
    if (kind != ErrorKind::build || fields[3].empty() || fields[3].size() > max_text_field_bytes) {
      problem = "a failure of kind '" + printable(fields[2], 100) + "' with a " +
                std::to_string(fields[3].size()) + "-byte message";
      return std::nullopt;
    }
    BuildReply reply;
    reply.failure = AutotuneError(ErrorKind::build, std::move(fields[3]));
    return reply;
  }
  problem = "the helper could not build it: " + printable(fields[2], 400);
  return std::nullopt;
}

}  // namespace tunekit::cl::detail
