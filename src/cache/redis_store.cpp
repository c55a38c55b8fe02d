// RedisStore: tuning results in a Redis database, through hiredis's blocking API with timeouts.
//
// Keys (all under "tunekit:v<format>:"):
//   entry:<op>:<hash>  one entry, the file store's outcome-table text (detail::write_cache_file)
//   lease:<op>:<hash>  "<token> host <name> pid <pid>" while a process tunes that entry
// <op> is the op's file name (detail::op_file_name, no glob characters), <hash> that of the
// entry's device, key and set checksum. A value is only trusted after it parsed, passed its
// checksum and named the very entry its key names.
#include "tunekit/redis_store.hpp"

#include <hiredis/hiredis.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "../warnings.hpp"
#include "format_internal.hpp"
#include "tunekit/error.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit {
namespace {

using Clock = std::chrono::steady_clock;

/// The largest value read back: far above a real entry (1,700 outcomes are ~400 KB).
constexpr long long max_value_bytes = 64ll << 20;
/// At most this many SCAN rounds: a server that never ends its cursor does not hold us forever.
constexpr int max_scan_rounds = 1 << 20;

const std::string& prefix() {
  static const std::string text = "tunekit:v" + std::to_string(FileStore::format_version) + ":";
  return text;
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
std::string entry_key(const EntryId& id) { return prefix() + "entry:" + entry_suffix(id); }
std::string lease_key(const EntryId& id) { return prefix() + "lease:" + entry_suffix(id); }

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

/// Blocks SIGPIPE on this thread while a command writes to a socket the server may have closed,
/// and swallows the signal raised meanwhile: a server gone must not kill the process.
class NoSigpipe {
 public:
  NoSigpipe() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    blocked_ = pthread_sigmask(SIG_BLOCK, &pipe, &old_) == 0;
  }
  ~NoSigpipe() {
    if (!blocked_) return;
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    if (!was_pending_) {
      const timespec zero{0, 0};
      while (sigtimedwait(&pipe, nullptr, &zero) > 0) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  NoSigpipe(const NoSigpipe&) = delete;
  NoSigpipe& operator=(const NoSigpipe&) = delete;

 private:
  sigset_t old_{};
  bool was_pending_ = false;
  bool blocked_ = false;
};

timeval to_timeval(std::chrono::milliseconds ms) {
  const auto count = std::max<std::chrono::milliseconds::rep>(ms.count(), 1);
  return timeval{static_cast<time_t>(count / 1000), static_cast<suseconds_t>(count % 1000 * 1000)};
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
  std::string url;

  mutable std::mutex mutex;  // the connection and everything below
  redisContext* context = nullptr;
  bool reachable = false;
  bool away = false;                // reported unreachable; said again only once it is back
  Clock::time_point retry_at{};     // no connect before this after a failure
  std::vector<CacheEntry> pending;  // saved while away
  bool pending_overflow_said = false;

  Impl(StoreAddress a, Options o) : address(std::move(a)), options(o), url(address.url()) {}
  ~Impl() {
    if (context) redisFree(context);
  }

  /// The server is lost (`why`): drop the connection, answer at once until retry_at.
  void lose(const std::string& why) {
    if (context) redisFree(context);
    context = nullptr;
    reachable = false;
    retry_at = Clock::now() + options.retry_interval;
    if (!away) {
      away = true;
      warn("tunekit: the result store " + url + " cannot be used (" + printable(why, 200) +
           "); using the local cache only, and asking the server again at most every " +
           std::to_string(options.retry_interval.count()) +
           " ms (results tuned meanwhile are sent to it then)");
    }
  }

  /// One command on the open connection; null when the connection failed (then lost). An error
  /// reply is returned: the caller decides.
  Reply raw(std::initializer_list<std::string_view> args) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (auto arg : args) {
      argv.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    Reply reply;
    {
      NoSigpipe guard;
      reply.reset(static_cast<redisReply*>(
          redisCommandArgv(context, static_cast<int>(argv.size()), argv.data(), lengths.data())));
    }
    if (!reply) {
      lose(context->err != 0 ? std::string(context->errstr) : "no reply");
      return nullptr;
    }
    return reply;
  }

  /// Connects when needed (and allowed), then writes what was saved while away.
  bool connect() {
    if (context) return true;
    if (Clock::now() < retry_at) return false;
    context = redisConnectWithTimeout(address.host.c_str(), address.port,
                                      to_timeval(options.connect_timeout));
    if (context == nullptr) {
      lose("out of memory");
      return false;
    }
    if (context->err != 0) {
      lose(context->errstr);
      return false;
    }
    if (redisSetTimeout(context, to_timeval(options.command_timeout)) != REDIS_OK) {
      lose("cannot set the command timeout");
      return false;
    }
    (void)redisEnableKeepAlive(context);
    if (address.db != 0) {
      const Reply reply = raw({"SELECT", std::to_string(address.db)});
      if (!reply) return false;
      if (!is_status(reply, "OK")) {
        lose("SELECT " + std::to_string(address.db) + " failed: " + error_text(reply));
        return false;
      }
    }
    reachable = true;
    const bool was_away = away;
    away = false;
    const std::size_t sent = flush();
    if (!context) return false;
    if (was_away) {
      warn("tunekit: the result store " + url + " is back" +
           (sent ? "; sent it the " + std::to_string(sent) + " results tuned while it was away"
                 : std::string()));
    }
    return true;
  }

  static std::string error_text(const Reply& reply) {
    if (reply && reply->type == REDIS_REPLY_ERROR) return printable(text_of(reply.get()), 200);
    return "an unexpected reply";
  }

  /// A command, connecting first; null when the server cannot be used now.
  Reply command(std::initializer_list<std::string_view> args) {
    if (!connect()) return nullptr;
    return raw(args);
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
  Written write(const CacheEntry& entry, bool only_new) {
    const std::string value = detail::write_cache_file(entry.id.op, {entry});
    const std::string key = entry_key(entry.id);
    Reply reply = only_new ? raw({"SET", key, value, "NX"}) : raw({"SET", key, value});
    if (!reply) return Written::no;
    if (is_status(reply, "OK")) return Written::yes;
    if (only_new && reply->type == REDIS_REPLY_NIL) return Written::kept;
    lose("the server answered SET with " + error_text(reply));
    return Written::no;
  }

  /// Writes the pending results (connection open). Returns how many.
  std::size_t flush() {
    std::size_t sent = 0;
    while (!pending.empty() && context) {
      if (write(pending.front(), false) != Written::yes) break;
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
    Reply reply = command({"GETRANGE", key, "0", std::to_string(max_value_bytes)});
    if (!reply) {
      failed = true;
      return std::nullopt;
    }
    if (reply->type == REDIS_REPLY_ERROR) {  // e.g. a key of another type
      present = true;
      problem = "unreadable (" + error_text(reply) + ")";
      return std::nullopt;
    }
    if (!is_string(reply.get())) {
      problem = "an unexpected reply";
      present = true;
      return std::nullopt;
    }
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
                   : entry_key(entry.id) == key;
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

  void report_bad(const std::string& key, const std::string& problem) {
    warn_once("tunekit: result store " + url + ": ignoring the entry '" + printable(key, 300) +
              "': " + printable(problem, 300) + " (it will be re-tuned)");
  }

  /// Every key matching `pattern`; throws when the server cannot be used.
  std::vector<std::string> scan(const std::string& pattern) {
    std::vector<std::string> keys;
    std::string cursor = "0";
    for (int round = 0; round < max_scan_rounds; ++round) {
      Reply reply = checked({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
      if (!reply) unusable();
      if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2 ||
          !is_string(reply->element[0]) || reply->element[1]->type != REDIS_REPLY_ARRAY) {
        throw AutotuneError(ErrorKind::cache,
                            "the result store " + url + " gave an unexpected reply to SCAN");
      }
      cursor = std::string(text_of(reply->element[0]));
      for (std::size_t i = 0; i < reply->element[1]->elements; ++i) {
        const redisReply* key = reply->element[1]->element[i];
        if (is_string(key)) keys.emplace_back(text_of(key));
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
    throw AutotuneError(ErrorKind::cache, "cannot use the result store " + url +
                                              " (see the warning above); nothing was done");
  }

  std::vector<CacheEntry> entries(const std::string& pattern) {
    std::vector<CacheEntry> found;
    for (const auto& key : scan(pattern)) {
      std::string problem;
      bool present = false, failed = false;
      auto entry = read(key, nullptr, problem, present, failed);
      if (failed) unusable();
      if (entry) {
        found.push_back(std::move(*entry));
      } else if (present) {
        report_bad(key, problem);
      }
    }
    std::sort(found.begin(), found.end(), entry_order);
    return found;
  }

  std::size_t remove(const std::string& pattern) {
    std::size_t removed = 0;
    for (const auto& key : scan(pattern)) {
      Reply reply = checked({"DEL", key});
      if (!reply) unusable();
      if (reply->type == REDIS_REPLY_INTEGER && reply->integer > 0 &&
          key.starts_with(prefix() + "entry:")) {
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

RedisStore::RedisStore(StoreAddress address) : RedisStore(std::move(address), Options{}) {}

RedisStore::RedisStore(StoreAddress address, Options options)
    : impl_(std::make_shared<Impl>(std::move(address), options)) {}

RedisStore::~RedisStore() {
  std::lock_guard lock(impl_->mutex);
  if (!impl_->pending.empty() && impl_->connect()) (void)impl_->flush();
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
  const std::string key = entry_key(id);
  std::string problem;
  bool present = false, failed = false;
  auto entry = impl_->read(key, &id, problem, present, failed);
  if (entry && entry->result.failed()) {
    warn_once("tunekit: ignoring a remembered failure of '" + printable(id.op, 200) + "' in " +
              impl_->url + " (failures hold only where they happened)");
    return std::nullopt;
  }
  if (entry) return std::move(entry->result);
  if (present) impl_->report_bad(key, problem);
  return std::nullopt;
}

void RedisStore::save(const EntryId& id, const StoredResult& result) {
  if (result.failed()) return;  // kept only where it happened (StoredResult::failed)
  std::lock_guard lock(impl_->mutex);
  try {
    if (impl_->connect() && impl_->write(CacheEntry{id, result}, false) == Impl::Written::yes)
      return;
    impl_->keep_for_later(id, result);
  } catch (const std::exception& e) {
    warn_once("tunekit: could not send a result to " + impl_->url + ": " + e.what());
  }
}

std::unique_ptr<TuningLock> RedisStore::lock_for_tuning(const EntryId& id) {
  const std::string key = lease_key(id);
  const std::string entry = entry_key(id);
  const std::string value =
      random_token() + " host " + host_name() + " pid " + std::to_string(::getpid());
  const std::string ttl = std::to_string(std::max<long long>(impl_->options.lease_ttl.count(), 1));
  const auto started = Clock::now();
  const auto deadline = started + impl_->options.lease_wait;
  auto delay = std::chrono::milliseconds(2);
  bool said = false;
  for (;;) {
    {
      std::lock_guard lock(impl_->mutex);
      Reply taken = impl_->checked({"SET", key, value, "NX", "PX", ttl});
      if (!taken) return std::make_unique<NoLock>();  // away: tune here (reported)
      if (is_status(taken, "OK")) return std::make_unique<Lease>(impl_, key, value);
      // Held by another: its result may already be there.
      Reply there = impl_->checked({"EXISTS", entry});
      if (!there) return std::make_unique<NoLock>();
      if (there->type == REDIS_REPLY_INTEGER && there->integer > 0)
        return std::make_unique<NoLock>();
      const auto now = Clock::now();
      if (now >= deadline) {
        warn("tunekit: another machine has been tuning '" + printable(id.op, 200) + "' [" +
             printable(id.key, 200) + "] for over " +
             std::to_string(impl_->options.lease_wait.count()) + " ms; tuning here as well");
        return std::make_unique<NoLock>();
      }
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

std::vector<CacheEntry> RedisStore::entries() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->entries(prefix() + "entry:*");
}

std::vector<CacheEntry> RedisStore::entries(std::string_view op) const {
  std::lock_guard lock(impl_->mutex);
  auto found = impl_->entries(prefix() + "entry:" + op_part(op) + ":*");
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
  std::size_t written = 0;
  for (const auto& entry : entries) {
    if (entry.result.failed()) continue;  // never shared (StoredResult::failed)
    if (!impl_->connect()) impl_->unusable();
    switch (impl_->write(entry, mode == ImportMode::keep_existing)) {
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
  return impl_->remove(prefix() + "*");
}

std::size_t RedisStore::clear(std::string_view op) {
  std::lock_guard lock(impl_->mutex);
  const std::string part = op_part(op);
  const std::size_t removed = impl_->remove(prefix() + "entry:" + part + ":*");
  (void)impl_->remove(prefix() + "lease:" + part + ":*");
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
