// The frames between build threads and compiler processes; see compiler_protocol.hpp.
#include "compiler_protocol.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace tunekit::cl::detail {

namespace {

constexpr std::size_t tag_size = 4;

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint64_t get_u64(const unsigned char* bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{bytes[i]} << (8 * i);
  return v;
}

// Milliseconds poll() may wait before `deadline` (-1: none), or nothing once it has passed.
std::optional<int> poll_wait(std::optional<CompilerClock::time_point> deadline) {
  if (!deadline) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - CompilerClock::now());
  if (left.count() <= 0) return std::nullopt;
  return static_cast<int>(std::min<std::chrono::milliseconds::rep>(left.count(), 60'000));
}

// Waits until `fd` is ready for `events`.
Io wait_for(int fd, short events, std::optional<CompilerClock::time_point> deadline) {
  for (;;) {
    const auto wait = poll_wait(deadline);
    if (!wait) return Io::timed_out;
    pollfd entry{fd, events, 0};
    const int ready = ::poll(&entry, 1, *wait);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return Io::failed;
    if (ready > 0) return Io::ok;  // readable, or hung up: the read or write says which
  }
}

// Reads exactly `size` bytes; closed only when nothing at all was read.
Io read_exact(int fd, void* into, std::size_t size,
              std::optional<CompilerClock::time_point> deadline) {
  auto* at = static_cast<unsigned char*>(into);
  std::size_t done = 0;
  while (done < size) {
    if (const Io ready = wait_for(fd, POLLIN, deadline); ready != Io::ok) return ready;
    const ssize_t got = ::read(fd, at + done, size - done);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got < 0) return Io::failed;
    if (got == 0) return done == 0 ? Io::closed : Io::failed;
    done += static_cast<std::size_t>(got);
  }
  return Io::ok;
}

}  // namespace

std::string encode_frame(std::string_view tag, const std::vector<std::string_view>& fields) {
  std::string out(tag.substr(0, tag_size));
  out.resize(tag_size, ' ');
  put_u64(out, fields.size());
  for (const auto field : fields) {
    put_u64(out, field.size());
    out += field;
  }
  return out;
}

FrameRead read_frame(int fd, std::string_view tag, std::size_t fields, std::size_t limit,
                     std::optional<CompilerClock::time_point> deadline) {
  FrameRead out;
  unsigned char head[tag_size + 8];
  out.status = read_exact(fd, head, sizeof head, deadline);
  if (out.status != Io::ok) {
    if (out.status == Io::failed) out.problem = "the frame ended early";
    return out;
  }
  const auto fail = [&](std::string why) {
    out.status = Io::failed;
    out.problem = std::move(why);
    return std::move(out);
  };
  out.frame.tag.assign(reinterpret_cast<const char*>(head), tag_size);
  if (out.frame.tag != tag) return fail("a frame of another kind");
  if (get_u64(head + tag_size) != fields) return fail("a frame with another number of fields");
  std::size_t total = 0;
  for (std::size_t i = 0; i < fields; ++i) {
    unsigned char length_bytes[8];
    if (read_exact(fd, length_bytes, sizeof length_bytes, deadline) != Io::ok) {
      return fail("the frame ended early");
    }
    const std::uint64_t length = get_u64(length_bytes);
    if (length > limit - total) return fail("a frame past its limit of " + std::to_string(limit) +
                                            " bytes");
    total += static_cast<std::size_t>(length);
    std::string field(static_cast<std::size_t>(length), '\0');
    if (length > 0 && read_exact(fd, field.data(), field.size(), deadline) != Io::ok) {
      return fail("the frame ended early");
    }
    out.frame.fields.push_back(std::move(field));
  }
  return out;
}

Io write_frame(int fd, std::string_view bytes,
               std::optional<CompilerClock::time_point> deadline) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    if (const Io ready = wait_for(fd, POLLOUT, deadline); ready != Io::ok) return ready;
    const ssize_t sent = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (sent < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (sent < 0) return errno == EPIPE ? Io::closed : Io::failed;
    done += static_cast<std::size_t>(sent);
  }
  return Io::ok;
}

}  // namespace tunekit::cl::detail
