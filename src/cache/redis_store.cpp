// RedisStore: tuning results in a Redis database. hiredis formats the commands and parses the
// replies; the socket is ours (non-blocking, polled against one deadline per command), and a
// reply is bounded on its header before the parser buffers it.
//
// Keys (all under "<prefix>tunekit:v<format>:", <prefix> the URL's ?prefix=, often empty):
//   entry:<op>:<hash>  one entry, the file store's outcome-table text (detail::write_cache_file)
//   lease:<op>:<hash>  "<token> host <name> pid <pid>" while a process tunes that entry
// <op> is the op's file name (detail::op_file_name, no glob characters), <hash> that of the
// entry's device, key and set checksum. A value is only trusted after it parsed, passed its
// checksum and named the very entry its key names.
#include "tunekit/redis_store.hpp"

#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include "../warnings.hpp"
#include "format_internal.hpp"
#include "host_resolution.hpp"
#include "private_files.hpp"
#include "tunekit/error.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit {
namespace {

using Clock = std::chrono::steady_clock;

/// The largest value read back: far above a real entry (1,700 outcomes are ~400 KB).
constexpr long long max_value_bytes = 64ll << 20;
/// The most bytes of one reply read: the largest value and its framing. A reply announcing
/// more is refused on its header, before anything of it is buffered.
constexpr std::size_t max_reply_bytes = static_cast<std::size_t>(max_value_bytes) + (64u << 10);
/// The most elements (nested ones included) one reply may announce: a SCAN batch has ~1,000.
constexpr long long max_reply_elements = 1 << 20;
/// The most keys one listing collects (SCAN), and bad entries reported one by one.
constexpr std::size_t max_scan_keys = 1 << 22;
/// A listed key longer than this is not one of ours (an entry's key is the prefix and ~60 bytes):
/// it is passed over, as is one outside the listing's prefix.
constexpr std::size_t max_listed_key_bytes = 4096;
/// The most bytes of values one listing reads (the file store's reader stops at 1 GiB too).
constexpr std::size_t max_listing_bytes = std::size_t{1} << 30;
/// The most bytes of keys one listing collects (SCAN): max_scan_keys keys of up to
/// max_listed_key_bytes would be 16 GiB. A quarter of max_listing_bytes: an entry's key (the
/// prefix and ~60 bytes) is a tenth of its value or less (2 KB and more), so the keys of a listing
/// whose values fit are well within it.
constexpr std::size_t max_scan_key_bytes = max_listing_bytes / 4;
constexpr std::size_t max_bad_reports = 8;

/// What a "every candidate failed" record on the server is: a bad entry (tunekit never sends one).
constexpr const char* remembered_failure =
    "a remembered failure, which tunekit never sends: failures hold only where they happened";
/// At most this many SCAN rounds: a server that never ends its cursor does not hold us forever.
constexpr int max_scan_rounds = 1 << 20;

/// Where a store's keys begin: the URL's prefix, then tunekit's format version.
std::string keys_under(const StoreAddress& address) {
  return address.prefix + "tunekit:v" + std::to_string(FileStore::format_version) + ":";
}

std::string op_part(std::string_view op) {
  std::string name = detail::op_file_name(op);
  name.resize(name.size() - 5);  // ".json"
  return name;
}

std::string entry_suffix(const EntryId& id) {
  return op_part(id.op) + ":" +
         detail::hex64(stable_hash(id.device + '\0' + id.key + '\0' + detail::hex64(id.checksum)));
}
std::string entry_key(const std::string& keys, const EntryId& id) {
  return keys + "entry:" + entry_suffix(id);
}
std::string lease_key(const std::string& keys, const EntryId& id) {
  return keys + "lease:" + entry_suffix(id);
}

struct ReplyDeleter {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

bool is_status(const Reply& reply, std::string_view text) {
  return reply && reply->type == REDIS_REPLY_STATUS &&
         std::string_view(reply->str, reply->len) == text;
}
bool is_string(const redisReply* reply) { return reply && reply->type == REDIS_REPLY_STRING; }
std::string_view text_of(const redisReply* reply) { return {reply->str, reply->len}; }

/// Milliseconds, for messages.
std::string ms(std::chrono::milliseconds t) { return std::to_string(t.count()) + " ms"; }

/// Whether an open connection with no command in flight has something to read: the server
/// closed it (its `timeout` for idle clients, a restart, a proxy's idle limit) or sent bytes
/// that answer nothing. Either way it must not carry the next command, whose reply would be
/// that end of file or those bytes: a new connection does, and the server is not lost for it.
bool readable_while_idle(int fd) {
  pollfd ready{fd, POLLIN, 0};
  return ::poll(&ready, 1, 0) > 0;  // > 0: this one descriptor has events
}

/// Follows a reply's framing as its bytes arrive, before the parser (which buffers a bulk
/// string until it is whole) sees them: a bulk string or an array announced larger than what is
/// ever read is refused on its header. Only the headers are looked at; the parser checks the rest.
/// Only the RESP2 types tunekit asks for are let through, nested at most max_depth deep (a SCAN
/// reply is 2): a newer hiredis would build a RESP3 map of 2^31 entries, or free a reply nested a
/// million deep by recursion.
class ReplyFraming {
 public:
  /// Nothing, or why the reply is refused.
  std::optional<std::string> feed(const char* data, std::size_t size) {
    for (std::size_t i = 0; i < size;) {
      if (skip_ > 0) {
        const auto n = static_cast<std::size_t>(std::min<unsigned long long>(skip_, size - i));
        skip_ -= n;
        i += n;
        continue;
      }
      const char c = data[i++];
      // A line ends at CR LF, as the parser reads it: a bare LF would end a line here that the
      // parser continues (a status line swallowing the array after it), and the limits below
      // would count other headers than the parser's.
      if (after_cr_ != (c == '\n')) return "not the Redis protocol: a bare CR or LF in a line";
      after_cr_ = c == '\r';
      if (line_.size() < max_header)
        line_ += c;
      else
        long_line_ = true;
      if (c != '\n') continue;
      auto problem = header();
      line_.clear();
      long_line_ = false;
      if (problem) return problem;
    }
    return std::nullopt;
  }

 private:
  static constexpr std::size_t max_header = 32;  // "$" and 20 digits is a 64-bit length
  static constexpr std::size_t max_depth = 4;

  /// One element of the innermost open array is whole: closes the arrays it completes.
  void element_done() {
    while (!open_.empty()) {
      if (--open_.back() > 0) return;
      open_.pop_back();
    }
  }

  std::optional<std::string> header() {
    if (line_.empty()) return std::nullopt;
    if (std::string_view("+-:$*").find(line_[0]) == std::string_view::npos) {
      return "a reply of a type tunekit never asks for ('" + printable(line_.substr(0, 1), 8) +
             "')";
    }
    if (line_[0] != '$' && line_[0] != '*') {
      element_done();
      return std::nullopt;
    }
    long long n = 0;
    const char* end = line_.data() + line_.size();
    const auto [stop, error] = std::from_chars(line_.data() + 1, end, n);
    if (long_line_ || error == std::errc::result_out_of_range) {
      return "a reply announcing a length past 2^63";
    }
    if (error != std::errc{} || stop + 2 != end || *stop != '\r')
      return std::nullopt;  // the parser's
    if (line_[0] == '$') {
      if (n > static_cast<long long>(max_reply_bytes)) {
        return "a reply too large: it announced " + std::to_string(n) + " bytes, and at most " +
               std::to_string(max_reply_bytes) + " are read";
      }
      if (n >= 0) skip_ = static_cast<unsigned long long>(n) + 2;
      element_done();  // its bytes are skipped above
    } else if (n > 0) {
      elements_ += n;
      if (n > max_reply_elements || elements_ > max_reply_elements) {
        return "a reply too large: it announced " + std::to_string(elements_) +
               " elements, and at most " + std::to_string(max_reply_elements) + " are read";
      }
      if (open_.size() >= max_depth) {
        return "a reply nested more than " + std::to_string(max_depth) + " arrays deep";
      }
      open_.push_back(n);
    } else {
      element_done();  // an empty or nil array
    }
    return std::nullopt;
  }

  std::vector<long long> open_;  // the elements still to come of each open array, outermost first
  std::string line_;
  bool long_line_ = false;
  bool after_cr_ = false;  // the line's last byte was CR: only LF may follow
  unsigned long long skip_ = 0;
  long long elements_ = 0;
};

/// An error reply that says the server wants a password (requirepass, ACL): tunekit sends none.
bool refuses_without_password(std::string_view error) {
  return error.starts_with("NOAUTH") || error.starts_with("WRONGPASS") ||
         error.starts_with("NOPERM");
}

std::string random_token() {
  std::random_device device;
  std::string token;
  for (int i = 0; i < 2; ++i) {
    const std::uint64_t word = (std::uint64_t{device()} << 32) ^ device();
    token += detail::hex64(word);
  }
  return token;
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return printable(name, 64);
}

/// Compare-and-renew, compare-and-delete: only the lease's holder (its token) touches it.
constexpr const char* renew_script =
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";
constexpr const char* release_script =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
    "else return 0 end";

class NoLock final : public TuningLock {};

bool entry_order(const CacheEntry& a, const CacheEntry& b) {
  return std::tie(a.id.op, a.id.device, a.id.key, a.id.checksum) <
         std::tie(b.id.op, b.id.device, b.id.key, b.id.checksum);
}

}  // namespace

struct RedisStore::Impl {
  StoreAddress address;
  Options options;
  std::string url;   // what messages print (no password)
  std::string keys;  // where every key of this store begins (keys_under)

  mutable std::mutex mutex;  // the connection and everything below
  int socket = -1;           // the connection (non-blocking), or -1
  bool reachable = false;
  bool away = false;                // reported unreachable; said again only once it is back
  Clock::time_point retry_at{};     // no connect before this after a failure
  std::vector<CacheEntry> pending;  // saved while away
  bool pending_overflow_said = false;
  std::size_t bad_reported = 0;  // bad entries reported one by one (at most max_bad_reports)
  // In a `tunekit cache` command (CommandMode): a failure is not warned but kept in
  // last_failure, and unusable() throws with it; no wait for retry_at.
  bool command_mode = false;
  std::string last_failure;
  std::size_t last_value_bytes = 0;  // of the last value read(): a listing counts them
  // The end of the listing in progress (Listing), else max(): no command of it runs past it.
  Clock::time_point listing_ends = Clock::time_point::max();
  // try_lock_for_tuning's memory of bad values met under entries' keys (entry_there's
  // `bad_length`), so that its tries do not read one again until it changed; at most
  // max_remembered_bad_lengths keys.
  std::map<std::string, long long> bad_lengths;
  static constexpr std::size_t max_remembered_bad_lengths = 1024;

  /// For the duration of one `tunekit cache` call (under the mutex): see command_mode.
  struct CommandMode {
    Impl& impl;
    explicit CommandMode(Impl& i) : impl(i) {
      impl.command_mode = true;
      impl.retry_at = {};
      impl.last_failure.clear();
    }
    ~CommandMode() { impl.command_mode = false; }
    CommandMode(const CommandMode&) = delete;
    CommandMode& operator=(const CommandMode&) = delete;
  };

  /// For the duration of one listing (under the mutex): its SCAN and every key's read or delete
  /// after it end by listing_timeout from now. A server answering each command just within its
  /// own deadline would otherwise hold `cache ls` for 2 s a key, up to max_scan_keys keys.
  struct Listing {
    Impl& impl;
    explicit Listing(Impl& i) : impl(i) {
      impl.listing_ends = Clock::now() + impl.options.listing_timeout;
    }
    ~Listing() { impl.listing_ends = Clock::time_point::max(); }
    Listing(const Listing&) = delete;
    Listing& operator=(const Listing&) = delete;
  };

  Impl(StoreAddress a, Options o)
      : address(std::move(a)),
        options(std::move(o)),
        url(address.url()),
        keys(keys_under(address)) {}
  ~Impl() { disconnect(); }

  void disconnect() {
    if (socket >= 0) ::close(socket);
    socket = -1;
  }

  /// The deadline of a command starting now: connect, send and the whole reply; in a listing,
  /// no later than the listing's.
  Clock::time_point deadline() const {
    return std::min(Clock::now() + options.command_timeout, listing_ends);
  }

  /// Throws once the listing is past its deadline, saying what did not end and how far it got
  /// (`progress()`, a text made only then: it is checked before every key).
  template <class Progress>
  void within_listing_time(const char* what, const Progress& progress) const {
    if (Clock::now() < listing_ends) return;
    throw AutotuneError(ErrorKind::cache, "the result store " + url + " did not end " + what +
                                              " within " + ms(options.listing_timeout) +
                                              ", the deadline of one listing (listing_timeout; " +
                                              progress() + ")");
  }

  /// A listing's command failed: one cut at the listing's deadline failed for that, not for its
  /// own, and says so; else the store cannot be used.
  template <class Progress>
  [[noreturn]] void listing_command_failed(const char* what, const Progress& progress) {
    within_listing_time(what, progress);
    unusable();
  }

  /// The server is lost (`why`): drop the connection, answer at once until retry_at.
  void lose(const std::string& why) {
    disconnect();
    reachable = false;
    last_failure = why;
    if (command_mode) return;  // unusable() throws it
    retry_at = Clock::now() + options.retry_interval;
    if (!away) {
      away = true;
      warn("tunekit: the result store " + url + " cannot be used (" + printable(why, 300) +
           "); using the local cache only, and asking the server again at most every " +
           std::to_string(options.retry_interval.count()) +
           " ms (results tuned meanwhile are sent to it then)");
    }
  }

  std::string timed_out() const {
    return "no whole reply within " + ms(options.command_timeout) +
           ", the deadline of one command (connect, send and reply)";
  }

  /// Opens the TCP connection (the host name resolved too), within connect_timeout and `until`.
  /// Empty, or why not.
  std::string open(Clock::time_point until) {
    until = std::min(until, Clock::now() + options.connect_timeout);
    std::string why;
    const detail::AddressList found =
        detail::resolve_within(address.host, address.port, until, why);
    if (!found) return why;
    why = "no address";
    for (const addrinfo* a = found.get(); a != nullptr; a = a->ai_next) {
      const int s =
          ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (s < 0) {
        why = std::strerror(errno);
        continue;
      }
      int error = 0;
      if (::connect(s, a->ai_addr, a->ai_addrlen) != 0) {
        error = errno;
        if (error == EINPROGRESS) {
          const int ready = detail::poll_until(s, POLLOUT, until);
          socklen_t length = sizeof error;
          if (ready == 0) {
            error = ETIMEDOUT;
          } else if (ready < 0 || ::getsockopt(s, SOL_SOCKET, SO_ERROR, &error, &length) != 0) {
            error = errno;
          }
        }
      }
      if (error != 0) {
        why = error == ETIMEDOUT ? "no connection within " + ms(options.connect_timeout)
                                 : std::string("connect: ") + std::strerror(error);
        ::close(s);
        continue;
      }
      const int one = 1;
      (void)::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      (void)::setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
      socket = s;
      return {};
    }
    return why;
  }

  /// Sends one command and reads its one reply, both before `until`; null with `why` set when
  /// it could not. Nothing of the reply is buffered past max_reply_bytes.
  Reply exchange(std::initializer_list<std::string_view> args, Clock::time_point until,
                 std::string& why) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (auto arg : args) {
      argv.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    char* formatted = nullptr;
    const int length = redisFormatCommandArgv(&formatted, static_cast<int>(argv.size()),
                                              argv.data(), lengths.data());
    if (length < 0 || formatted == nullptr) {
      why = "out of memory";
      return nullptr;
    }
    const std::unique_ptr<char, decltype(&redisFreeCommand)> command(formatted, redisFreeCommand);
    for (std::size_t sent = 0; sent < static_cast<std::size_t>(length);) {
      // MSG_NOSIGNAL: a server gone must not raise SIGPIPE.
      const ssize_t n = ::send(socket, formatted + sent, length - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        const int ready = detail::poll_until(socket, POLLOUT, until);
        if (ready <= 0) {
          why = ready == 0 ? timed_out() : std::string(std::strerror(errno));
          return nullptr;
        }
      } else {
        why = std::string("the connection failed: ") + std::strerror(errno);
        return nullptr;
      }
    }
    const std::unique_ptr<redisReader, decltype(&redisReaderFree)> reader(redisReaderCreate(),
                                                                          redisReaderFree);
    if (!reader) {
      why = "out of memory";
      return nullptr;
    }
    ReplyFraming framing;
    std::size_t received = 0;
    char buffer[16384];
    for (;;) {
      const int ready = detail::poll_until(socket, POLLIN, until);
      if (ready <= 0) {
        why = ready == 0 ? timed_out() : std::string(std::strerror(errno));
        return nullptr;
      }
      const ssize_t n = ::recv(socket, buffer, sizeof buffer, 0);
      if (n == 0) {
        why = "the server closed the connection";
        return nullptr;
      }
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
        why = std::string("the connection failed: ") + std::strerror(errno);
        return nullptr;
      }
      received += static_cast<std::size_t>(n);
      if (received > max_reply_bytes) {
        why = "a reply too large: more than " + std::to_string(max_reply_bytes) + " bytes";
        return nullptr;
      }
      if (auto refused = framing.feed(buffer, static_cast<std::size_t>(n))) {
        why = *refused;
        return nullptr;
      }
      void* parsed = nullptr;
      if (redisReaderFeed(reader.get(), buffer, static_cast<std::size_t>(n)) != REDIS_OK ||
          redisReaderGetReply(reader.get(), &parsed) != REDIS_OK) {
        why = "not the Redis protocol (" + printable(reader->errstr, 100) + ")";
        return nullptr;
      }
      if (parsed != nullptr) {
        Reply reply(static_cast<redisReply*>(parsed));
        if (reader->pos < reader->len) {
          why = "more than one reply to one command";
          return nullptr;
        }
        return reply;
      }
    }
  }

  /// One command on the open connection, before `until`; null when it failed (then lost). An
  /// error reply is returned: the caller decides.
  Reply raw(std::initializer_list<std::string_view> args, Clock::time_point until) {
    std::string why;
    Reply reply = exchange(args, until, why);
    if (!reply) lose(why);
    return reply;
  }
  Reply raw(std::initializer_list<std::string_view> args) { return raw(args, deadline()); }

  /// Connects when needed (and allowed), before `until`, then writes what was saved while away.
  bool connect(Clock::time_point until) {
    if (socket >= 0 && !readable_while_idle(socket)) return true;
    disconnect();  // none, or one the server closed while it was idle: open a new one
    if (Clock::now() < retry_at) return false;
    if (const std::string why = open(until); !why.empty()) {
      lose(why);
      return false;
    }
    if (!authenticate(until)) return false;
    if (address.db != 0) {
      const Reply reply = raw({"SELECT", std::to_string(address.db)}, until);
      if (!reply) return false;
      if (!is_status(reply, "OK")) {
        lose("SELECT " + std::to_string(address.db) + " failed: " + error_text(reply));
        return false;
      }
    }
    reachable = true;
    const bool was_away = away;
    away = false;
    const std::size_t sent = flush(until);
    if (socket < 0) return false;
    if (was_away) {
      warn("tunekit: the result store " + url + " is back" +
           (sent ? "; sent it the " + std::to_string(sent) + " results tuned while it was away"
                 : std::string()));
    }
    return true;
  }
  bool connect() { return connect(deadline()); }

  /// AUTH on the open connection, when a password is set: as the URL's user, else as the
  /// default one. False (lost, with the reason) when it is refused.
  bool authenticate(Clock::time_point until) {
    if (options.password.empty()) {
      if (address.user.empty()) return true;
      lose("the URL names the user '" + address.user +
           "' but no password is set (TUNEKIT_STORE_PASSWORD, Settings::store_password)");
      return false;
    }
    const Reply reply = address.user.empty() ? raw({"AUTH", options.password}, until)
                                             : raw({"AUTH", address.user, options.password}, until);
    if (!reply) return false;
    if (is_status(reply, "OK")) return true;
    const std::string answer =
        reply->type == REDIS_REPLY_ERROR ? printable(text_of(reply.get()), 200) : "no OK";
    lose("authentication: the server refused the password" +
         (address.user.empty() ? std::string() : " of the user '" + address.user + "'") +
         " (it answered '" + answer +
         "'); check TUNEKIT_STORE_PASSWORD (or Settings::store_password) and the user in the URL");
    return false;
  }

  /// An error reply in words; one that wants a password says so (tunekit sends none).
  static std::string error_text(const Reply& reply) {
    if (!reply || reply->type != REDIS_REPLY_ERROR) return "an unexpected reply";
    const std::string_view text = text_of(reply.get());
    if (text.starts_with("NOPERM")) {
      return "authentication: the ACL user may not run this command or use these keys (it "
             "answered '" +
             printable(text, 100) + "'): grant it access to the keys under the store's prefix";
    }
    if (refuses_without_password(text)) {
      return "authentication: the server wants a password (it answered '" + printable(text, 100) +
             "'): set TUNEKIT_STORE_PASSWORD (or Settings::store_password), and the ACL user in "
             "the URL (redis://USER@HOST...) if it is not the default one";
    }
    return printable(text, 200);
  }

  /// A command, connecting first (and sending what waits, within one deadline), then the command
  /// within its own: a slow flush neither holds the caller past two deadlines nor leaves the
  /// command none. Null when the server cannot be used now.
  Reply command(std::initializer_list<std::string_view> args) {
    const auto until = deadline();
    if (!connect(until)) return nullptr;
    if (!pending.empty()) flush(until);  // what an earlier flush left for lack of time
    if (socket < 0) return nullptr;
    return raw(args, deadline());
  }

  /// A command whose error reply also counts as a failure (lost: e.g. a read-only replica, a
  /// server that wants a password, one out of memory).
  Reply checked(std::initializer_list<std::string_view> args) {
    Reply reply = command(args);
    if (reply && reply->type == REDIS_REPLY_ERROR) {
      lose("the server answered: " + error_text(reply));
      return nullptr;
    }
    return reply;
  }

  enum class Written { no, yes, kept };
  /// Writes `entry` (connection open); `only_new`: not over one the server has (kept).
  Written write(const CacheEntry& entry, bool only_new, Clock::time_point until) {
    const std::string value = detail::write_cache_file(entry.id.op, {entry});
    const std::string key = entry_key(keys, entry.id);
    Reply reply =
        only_new ? raw({"SET", key, value, "NX"}, until) : raw({"SET", key, value}, until);
    if (!reply) return Written::no;
    if (is_status(reply, "OK")) return Written::yes;
    if (only_new && reply->type == REDIS_REPLY_NIL) return Written::kept;
    lose("the server answered SET with " + error_text(reply));
    return Written::no;
  }

  /// Writes the pending results (connection open) while at least half a command's time is left
  /// before `until`; the rest wait for the next command (up to 4096 results queued while the
  /// server was away must not hold one caller for 4096 deadlines). Returns how many.
  std::size_t flush(Clock::time_point until) {
    std::size_t sent = 0;
    while (!pending.empty() && socket >= 0 && Clock::now() + options.command_timeout / 2 < until) {
      if (write(pending.front(), false, until) != Written::yes) break;
      pending.erase(pending.begin());
      ++sent;
    }
    return sent;
  }

  void keep_for_later(const EntryId& id, const StoredResult& result) {
    for (auto& entry : pending) {
      if (entry.id.op == id.op && entry.id.device == id.device && entry.id.key == id.key &&
          entry.id.checksum == id.checksum) {
        entry.result = result;
        return;
      }
    }
    if (pending.size() >= options.max_pending) {
      if (!pending_overflow_said) {
        pending_overflow_said = true;
        warn("tunekit: more than " + std::to_string(options.max_pending) + " results wait for " +
             url +
             "; later ones stay in the local cache only (send them with `tunekit cache "
             "export` and `tunekit --store " +
             url + " cache import`)");
      }
      return;
    }
    pending.push_back(CacheEntry{id, result});
  }

  /// The entry `expected` names (or, when it is null, whatever entry `key` holds), read back
  /// and checked; nothing with `problem` set when it is bad. `present` says whether there was
  /// a value at all.
  std::optional<CacheEntry> read(const std::string& key, const EntryId* expected,
                                 std::string& problem, bool& present, bool& failed) {
    present = false;
    failed = false;
    last_value_bytes = 0;
    Reply reply = command({"GETRANGE", key, "0", std::to_string(max_value_bytes)});
    if (!reply) {
      failed = true;
      return std::nullopt;
    }
    if (reply->type == REDIS_REPLY_ERROR) {
      if (!text_of(reply.get()).starts_with("WRONGTYPE")) {  // the server's problem, not the key's
        lose("the server answered: " + error_text(reply));
        failed = true;
        return std::nullopt;
      }
      present = true;
      problem = "unreadable (" + error_text(reply) + ")";
      return std::nullopt;
    }
    if (!is_string(reply.get())) {
      problem = "an unexpected reply";
      present = true;
      return std::nullopt;
    }
    last_value_bytes = reply->len;
    if (reply->len == 0) return std::nullopt;  // absent (GETRANGE of no key is "")
    present = true;
    if (static_cast<long long>(reply->len) > max_value_bytes) {
      problem = "larger than " + std::to_string(max_value_bytes) + " bytes";
      return std::nullopt;
    }
    try {
      auto parsed = detail::parse_cache_file(text_of(reply.get()));
      if (!parsed.problems.empty()) {
        problem = parsed.problems.front();
        return std::nullopt;
      }
      if (parsed.entries.size() != 1) {
        problem = "it holds " + std::to_string(parsed.entries.size()) + " entries, not one";
        return std::nullopt;
      }
      CacheEntry& entry = parsed.entries.front();
      entry.id.op = parsed.op;
      const bool named =
          expected ? entry.id.op == expected->op && entry.id.device == expected->device &&
                         entry.id.key == expected->key && entry.id.checksum == expected->checksum
                   : entry_key(keys, entry.id) == key;
      if (!named) {
        problem = "it holds another entry than its name says (op '" + printable(entry.id.op, 100) +
                  "', key [" + printable(entry.id.key, 100) + "])";
        return std::nullopt;
      }
      return std::move(entry);
    } catch (const AutotuneError& e) {
      problem = e.message();
      return std::nullopt;
    }
  }

  /// A bad entry met by a lookup: said once per key and problem, and one by one only for the
  /// first max_bad_reports (a server full of bad keys must not flood stderr).
  void report_bad(const std::string& key, const std::string& problem) {
    if (bad_reported == max_bad_reports) {
      ++bad_reported;
      warn("tunekit: result store " + url + ": more bad entries are ignored (and re-tuned) " +
           "without a word each; `tunekit --store " + url + " cache ls` counts them");
    }
    if (bad_reported > max_bad_reports) return;
    ++bad_reported;
    warn_once("tunekit: result store " + url + ": ignoring the entry '" + printable(key, 300) +
              "': " + printable(problem, 300) + " (it will be re-tuned)");
  }

  /// The bad entries a listing met: one line per problem (at most max_bad_reports), with
  /// how many and one key as an example.
  void report_bad(const std::map<std::string, std::pair<std::size_t, std::string>>& bad) {
    std::size_t said = 0, others = 0;
    for (const auto& [problem, seen] : bad) {
      if (said == max_bad_reports) {
        others += seen.first;
        continue;
      }
      ++said;
      warn("tunekit: result store " + url + ": ignoring " + std::to_string(seen.first) +
           (seen.first == 1 ? " entry" : " entries") + " (" + printable(problem, 300) +
           "), e.g. '" + printable(seen.second, 200) + "'; they will be re-tuned");
    }
    if (others > 0) {
      warn("tunekit: result store " + url + ": ignoring " + std::to_string(others) +
           " more entries with other problems");
    }
  }

  enum class There { yes, no, lost };
  /// Whether the server holds a usable entry for `id` (one that load() would return). A bad
  /// value counts as absent: `bad_length` remembers its length, and it is read again only once
  /// its length changed (the tuner that won the lease overwrote it).
  There entry_there(const EntryId& id, long long& bad_length) {
    const std::string key = entry_key(keys, id);
    Reply length = command({"STRLEN", key});
    if (!length) return There::lost;
    if (length->type == REDIS_REPLY_ERROR && text_of(length.get()).starts_with("WRONGTYPE")) {
      return There::no;  // a value of another type: bad, reported by load()
    }
    if (length->type != REDIS_REPLY_INTEGER) {
      lose("the server answered STRLEN with " + error_text(length));
      return There::lost;
    }
    if (length->integer == 0 || length->integer == bad_length) return There::no;
    std::string problem;
    bool present = false, failed = false;
    auto entry = read(key, &id, problem, present, failed);
    if (failed) return There::lost;
    if (entry && !entry->result.failed()) return There::yes;
    bad_length = length->integer;
    if (present) report_bad(key, entry ? std::string(remembered_failure) : problem);
    return There::no;
  }

  /// Every key matching `pattern`; throws when the server cannot be used.
  std::vector<std::string> scan(const std::string& pattern) {
    std::vector<std::string> keys;
    std::size_t key_bytes = 0;
    // What every key of the listing begins with (the prefix holds no glob characters).
    const std::string_view literal =
        std::string_view(pattern).substr(0, pattern.find_first_of("*?[\\"));
    std::string cursor = "0";
    for (int round = 0; round < max_scan_rounds; ++round) {
      const auto rounds = [&] { return std::to_string(round) + " SCAN rounds"; };
      within_listing_time("its SCAN", rounds);
      Reply reply = checked({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
      if (!reply) listing_command_failed("its SCAN", rounds);
      if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
          !is_string(reply->element[0]) || reply->element[1]->type != REDIS_REPLY_ARRAY) {
        throw AutotuneError(ErrorKind::cache,
                            "the result store " + url + " gave an unexpected reply to SCAN");
      }
      cursor = std::string(text_of(reply->element[0]));
      for (std::size_t i = 0; i < reply->element[1]->elements; ++i) {
        const redisReply* key = reply->element[1]->element[i];
        if (is_string(key) && key->len <= max_listed_key_bytes &&
            text_of(key).starts_with(literal)) {
          key_bytes += key->len;
          if (key_bytes > max_scan_key_bytes) {
            throw AutotuneError(ErrorKind::cache,
                                "the result store " + url + " lists keys of more than " +
                                    std::to_string(max_scan_key_bytes) + " bytes in all");
          }
          keys.emplace_back(text_of(key));
        }
      }
      if (keys.size() > max_scan_keys) {
        throw AutotuneError(ErrorKind::cache, "the result store " + url + " lists more than " +
                                                  std::to_string(max_scan_keys) + " keys");
      }
      if (cursor == "0") {
        std::sort(keys.begin(), keys.end());
        keys.erase(std::unique(keys.begin(), keys.end()), keys.end());  // SCAN may repeat
        return keys;
      }
    }
    throw AutotuneError(ErrorKind::cache, "the result store " + url + " never ended its SCAN");
  }

  [[noreturn]] void unusable() {
    throw AutotuneError(
        ErrorKind::cache,
        "cannot use the result store " + url + " (" +
            printable(last_failure.empty() ? "see the warning above" : last_failure, 400) +
            "); nothing was done");
  }

  std::vector<CacheEntry> entries(const std::string& pattern) {
    std::vector<CacheEntry> found;
    std::map<std::string, std::pair<std::size_t, std::string>> bad;  // problem: count, a key
    std::size_t listed_bytes = 0, read_keys = 0;
    const auto listed = scan(pattern);
    const auto progress = [&] {
      return "read " + std::to_string(read_keys) + " of " + std::to_string(listed.size()) +
             " keys; nothing was listed";
    };
    for (const auto& key : listed) {
      within_listing_time("the listing", progress);
      std::string problem;
      bool present = false, failed = false;
      auto entry = read(key, nullptr, problem, present, failed);
      if (failed) listing_command_failed("the listing", progress);
      ++read_keys;
      listed_bytes += last_value_bytes;
      if (listed_bytes > max_listing_bytes) {
        throw AutotuneError(ErrorKind::cache, "the result store " + url + " holds more than " +
                                                  std::to_string(max_listing_bytes) +
                                                  " bytes of entries; nothing was listed");
      }
      problem = printable(problem, 300);  // a forged value's text, kept as a map key
      if (entry && entry->result.failed()) {
        problem = remembered_failure;
      } else if (entry) {
        found.push_back(std::move(*entry));
        continue;
      }
      if (!present && !entry) continue;
      auto& seen = bad[problem];
      if (seen.first++ == 0) seen.second = key;
    }
    report_bad(bad);
    std::sort(found.begin(), found.end(), entry_order);
    return found;
  }

  std::size_t remove(const std::string& pattern) {
    std::size_t removed = 0, deleted_keys = 0;
    const auto listed = scan(pattern);
    const auto progress = [&] {
      return "deleted " + std::to_string(deleted_keys) + " of " + std::to_string(listed.size()) +
             " keys";
    };
    for (const auto& key : listed) {
      within_listing_time("the listing", progress);
      Reply reply = checked({"DEL", key});
      if (!reply) listing_command_failed("the listing", progress);
      ++deleted_keys;
      if (reply->type == REDIS_REPLY_INTEGER && reply->integer > 0 &&
          key.starts_with(keys + "entry:")) {
        ++removed;
      }
    }
    return removed;
  }
};

namespace {

/// A held lease, renewed by a thread every third of its time to live until released.
class Lease final : public TuningLock {
 public:
  Lease(std::shared_ptr<RedisStore::Impl> store, std::string key, std::string value)
      : store_(std::move(store)), key_(std::move(key)), value_(std::move(value)) {
    renewer_ = std::thread([this] { renew(); });
  }
  ~Lease() override {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    renewer_.join();
    std::lock_guard lock(store_->mutex);
    (void)store_->command({"EVAL", release_script, "1", key_, value_});
  }
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

 private:
  void renew() {
    const auto every = std::max(store_->options.lease_ttl / 3, std::chrono::milliseconds(1));
    const std::string ttl = std::to_string(store_->options.lease_ttl.count());
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, every, [this] { return stop_; })) {
      lock.unlock();
      {
        std::lock_guard store_lock(store_->mutex);
        // A failure is the store's to report; a lease lost (expired while this process was
        // stopped) only means another machine may tune the key too: harmless.
        (void)store_->command({"EVAL", renew_script, "1", key_, value_, ttl});
      }
      lock.lock();
    }
  }

  std::shared_ptr<RedisStore::Impl> store_;
  std::string key_;
  std::string value_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread renewer_;
};

}  // namespace

bool redis_store_built() noexcept { return true; }

namespace detail {

AddressList resolve_within(const std::string& host, std::uint16_t port, Clock::time_point deadline,
                           std::string& why, Resolver resolver) {
  const auto started = Clock::now();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  const std::string service = std::to_string(port);
  addrinfo* found = nullptr;
  // A literal address needs no resolver (and must not wait for one that hangs).
  if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &found) == 0) return AddressList(found);
  hints.ai_flags = AI_NUMERICSERV;

  // What the resolving thread and the waiter share: owned by both, so that a wait given up at
  // the deadline leaves the thread nothing dangling; it frees what it finds after that itself.
  struct Resolution {
    std::string host, service;
    addrinfo hints{};
    std::mutex mutex;
    std::condition_variable ended;
    bool done = false;       // the resolver returned: status and found are set
    bool abandoned = false;  // the waiter gave up: nobody takes found
    int status = 0;
    addrinfo* found = nullptr;
  };
  auto shared = std::make_shared<Resolution>();
  shared->host = host;
  shared->service = service;
  shared->hints = hints;
  try {
    std::thread([shared, resolver] {
      addrinfo* list = nullptr;
      const int status =
          resolver(shared->host.c_str(), shared->service.c_str(), &shared->hints, &list);
      std::lock_guard lock(shared->mutex);
      if (shared->abandoned) {
        if (status == 0 && list != nullptr) ::freeaddrinfo(list);
        return;
      }
      shared->done = true;
      shared->status = status;
      shared->found = status == 0 ? list : nullptr;
      shared->ended.notify_one();
    }).detach();
  } catch (const std::system_error& e) {
    why = "cannot start a thread to resolve " + host + ": " + e.what();
    return nullptr;
  }
  std::unique_lock lock(shared->mutex);
  if (!shared->ended.wait_until(lock, deadline, [&] { return shared->done; })) {
    shared->abandoned = true;
    const auto allowed = std::chrono::ceil<std::chrono::milliseconds>(
        std::max(deadline - started, Clock::duration::zero()));
    why = "could not resolve " + host + " within " + ms(allowed);
    return nullptr;
  }
  if (shared->status != 0 || shared->found == nullptr) {
    why = "cannot resolve " + host + ": " +
          (shared->status != 0 ? ::gai_strerror(shared->status) : "no address");
    return nullptr;
  }
  return AddressList(std::exchange(shared->found, nullptr));
}

}  // namespace detail

RedisStore::RedisStore(StoreAddress address) : RedisStore(std::move(address), Options{}) {}

RedisStore::RedisStore(StoreAddress address, Options options)
    : impl_(std::make_shared<Impl>(std::move(address), options)) {}

RedisStore::~RedisStore() {
  std::lock_guard lock(impl_->mutex);
  // One deadline for the whole goodbye: what is not sent by then is said below.
  const auto until = impl_->deadline();
  if (!impl_->pending.empty() && impl_->connect(until)) (void)impl_->flush(until);
  if (!impl_->pending.empty()) {
    warn("tunekit: " + std::to_string(impl_->pending.size()) + " results could not be sent to " +
         impl_->url +
         "; they are in the local cache (send them with `tunekit cache export` and "
         "`tunekit --store " +
         impl_->url + " cache import`)");
  }
}

std::optional<StoredResult> RedisStore::load(const EntryId& id) {
  std::lock_guard lock(impl_->mutex);
  const std::string key = entry_key(impl_->keys, id);
  std::string problem;
  bool present = false, failed = false;
  auto entry = impl_->read(key, &id, problem, present, failed);
  if (entry && entry->result.failed()) {
    impl_->report_bad(key, remembered_failure);
    return std::nullopt;
  }
  if (entry) {
    entry->result.source = "shared store " + impl_->url;
    entry->result.shared = true;
    return std::move(entry->result);
  }
  if (present) impl_->report_bad(key, problem);
  return std::nullopt;
}

void RedisStore::save(const EntryId& id, const StoredResult& result) {
  if (result.failed()) return;  // kept only where it happened (StoredResult::failed)
  std::lock_guard lock(impl_->mutex);
  try {
    if (impl_->connect() &&
        impl_->write(CacheEntry{id, result}, false, impl_->deadline()) == Impl::Written::yes)
      return;
    impl_->keep_for_later(id, result);
  } catch (const std::exception& e) {
    warn_once("tunekit: could not send a result to " + impl_->url + ": " + e.what());
  }
}

namespace {

// The value a lease holds: a token no other holder has, and who holds it, for a person reading
// the server.
std::string lease_value() {
  return random_token() + " host " + host_name() + " pid " + std::to_string(::getpid());
}

}  // namespace

// One try of `id`'s lease (with impl_->mutex held): the lease taken, nothing to hold (the
// server away, or the result there already: a NoLock), or null while another holds it.
// `bad_length`: as Impl::entry_there's.
std::unique_ptr<TuningLock> RedisStore::try_lease(const EntryId& id, const std::string& key,
                                                  const std::string& value, long long& bad_length) {
  const std::string ttl = std::to_string(std::max<long long>(impl_->options.lease_ttl.count(), 1));
  Reply taken = impl_->checked({"SET", key, value, "NX", "PX", ttl});
  if (!taken) return std::make_unique<NoLock>();  // away: tune here (reported)
  if (is_status(taken, "OK")) return std::make_unique<Lease>(impl_, key, value);
  // Held by another: its result may already be there. A bad value under the entry's key is no
  // result: wait for the holder, who overwrites it.
  if (impl_->entry_there(id, bad_length) != Impl::There::no) return std::make_unique<NoLock>();
  return nullptr;
}

std::unique_ptr<TuningLock> RedisStore::stopped_waiting(const EntryId& id) const {
  warn("tunekit: another machine has been tuning '" + printable(id.op, 200) + "' [" +
       printable(id.key, 200) + "] for over " + std::to_string(impl_->options.lease_wait.count()) +
       " ms; tuning here as well");
  return std::make_unique<NoLock>();
}

std::unique_ptr<TuningLock> RedisStore::lock_for_tuning(const EntryId& id) {
  const std::string key = lease_key(impl_->keys, id), value = lease_value();
  const auto started = Clock::now();
  const auto deadline = started + impl_->options.lease_wait;
  auto delay = std::chrono::milliseconds(2);
  bool said = false;
  long long bad_length = -1;  // of a bad value met under the entry's key
  for (;;) {
    {
      std::lock_guard lock(impl_->mutex);
      if (auto held = try_lease(id, key, value, bad_length)) return held;
      const auto now = Clock::now();
      if (now >= deadline) return stopped_waiting(id);
      if (!said && now - started >= std::chrono::seconds(1)) {
        said = true;
        Reply holder = impl_->command({"GET", key});
        std::string who = is_string(holder.get()) ? std::string(text_of(holder.get())) : "";
        if (const auto space = who.find(' '); space != std::string::npos) who.erase(0, space + 1);
        warn("tunekit: waiting for another machine (" +
             printable(who.empty() ? "unknown" : who, 120) + ") that is tuning '" +
             printable(id.op, 200) + "' [" + printable(id.key, 200) + "] on " + impl_->url +
             ", for its result (at most " + std::to_string(impl_->options.lease_wait.count()) +
             " ms)");
      }
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(delay, deadline - Clock::now()));
    delay = std::min(delay * 2, std::chrono::milliseconds(25));
  }
}

TuningLockAttempt RedisStore::try_lock_for_tuning(const EntryId& id,
                                                  Clock::time_point waiting_since) {
  std::lock_guard lock(impl_->mutex);
  const std::string key = lease_key(impl_->keys, id);
  const auto remembered = impl_->bad_lengths.find(key);
  long long bad_length = remembered == impl_->bad_lengths.end() ? -1 : remembered->second;
  auto held = try_lease(id, key, lease_value(), bad_length);
  if (held) {
    impl_->bad_lengths.erase(key);
    return {std::move(held), false};
  }
  if (bad_length != -1) {
    if (impl_->bad_lengths.size() >= Impl::max_remembered_bad_lengths) impl_->bad_lengths.clear();
    impl_->bad_lengths[key] = bad_length;
  }
  if (Clock::now() - waiting_since >= impl_->options.lease_wait) {
    impl_->bad_lengths.erase(key);
    return {stopped_waiting(id), false};
  }
  return {nullptr, true};
}

std::vector<CacheEntry> RedisStore::entries() const {
  std::lock_guard lock(impl_->mutex);
  const Impl::CommandMode throwing(*impl_);
  const Impl::Listing listing(*impl_);
  return impl_->entries(impl_->keys + "entry:*");
}

std::vector<CacheEntry> RedisStore::entries(std::string_view op) const {
  std::lock_guard lock(impl_->mutex);
  const Impl::CommandMode throwing(*impl_);
  const Impl::Listing listing(*impl_);
  auto found = impl_->entries(impl_->keys + "entry:" + op_part(op) + ":*");
  std::erase_if(found, [&](const CacheEntry& e) { return e.id.op != op; });
  return found;
}

std::vector<std::string> RedisStore::ops() const {
  std::set<std::string> names;
  for (const auto& entry : entries()) names.insert(entry.id.op);
  return {names.begin(), names.end()};
}

std::size_t RedisStore::save_entries(const std::vector<CacheEntry>& entries, ImportMode mode) {
  std::lock_guard lock(impl_->mutex);
  const Impl::CommandMode throwing(*impl_);
  std::size_t written = 0;
  for (const auto& entry : entries) {
    if (entry.result.failed()) continue;  // never shared (StoredResult::failed)
    if (!impl_->connect()) impl_->unusable();
    switch (impl_->write(entry, mode == ImportMode::keep_existing, impl_->deadline())) {
      case Impl::Written::no:
        impl_->unusable();
      case Impl::Written::yes:
        ++written;
        break;
      case Impl::Written::kept:
        break;
    }
  }
  return written;
}

std::size_t RedisStore::clear() {
  std::lock_guard lock(impl_->mutex);
  const Impl::CommandMode throwing(*impl_);
  const Impl::Listing listing(*impl_);  // one for the entries and the leases
  const std::size_t removed = impl_->remove(impl_->keys + "entry:*");
  (void)impl_->remove(impl_->keys + "lease:*");
  return removed;
}

std::size_t RedisStore::clear(std::string_view op) {
  std::lock_guard lock(impl_->mutex);
  const Impl::CommandMode throwing(*impl_);
  const Impl::Listing listing(*impl_);  // one for the entries and the leases
  const std::string part = op_part(op);
  const std::size_t removed = impl_->remove(impl_->keys + "entry:" + part + ":*");
  (void)impl_->remove(impl_->keys + "lease:" + part + ":*");
  return removed;
}

bool RedisStore::reachable() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->reachable;
}

std::size_t RedisStore::pending() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->pending.size();
}

const StoreAddress& RedisStore::address() const noexcept { return impl_->address; }

namespace {
/// A private scratch directory (mkdtemp, 0700), removed with everything in it.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    std::string name = (std::filesystem::temp_directory_path() / "tunekit-store-XXXXXX").string();
    if (::mkdtemp(name.data()) == nullptr) {
      throw AutotuneError(ErrorKind::cache, "cannot create a scratch directory in " +
                                                std::filesystem::temp_directory_path().string());
    }
    path_ = name;
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};
}  // namespace

// Bundles are read and written by the file store alone (one owner of the format and of its
// checks): through a scratch one.
std::size_t RedisStore::export_to(const std::filesystem::path& file) const {
  const auto all = entries();
  ScratchDirectory scratch;
  FileStore local(scratch.path());
  local.save_entries(all);
  return local.export_to(file);
}

std::size_t RedisStore::import_from(const std::filesystem::path& file, ImportMode mode) {
  ScratchDirectory scratch;
  FileStore local(scratch.path());
  local.import_from(file);
  return save_entries(local.entries(), mode);
}

}  // namespace tunekit
