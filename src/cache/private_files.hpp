// tunekit's files on disk (private): POSIX reads that never follow a link, atomic writes, lock
// files, and the one rule for its directories; shared by the result store (file_store.cpp) and
// the program binaries (src/cl/program_binaries.cpp). Defined in private_files.cpp.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "tunekit/error.hpp"
#include "tunekit/result_store.hpp"

namespace tunekit::detail {

/// Creates `dir` (and missing parents, 0700) unless it exists, then checks it: owned by this
/// user, not writable by group or others, and no link unless `follow_link` (the cache root may
/// be reached through a link the user or root made, never another user's; the folders tunekit
/// makes inside it may not).
/// Throws AutotuneError(cache) naming the fix.
void prepare_private_cache_directory(const std::filesystem::path& dir, bool follow_link);

/// Writes `bytes` to `path` (0600) so that readers see the old file or the new one, never a
/// part: a new temporary "<path>.tmp.<pid>.<n>" (O_EXCL, O_NOFOLLOW), fsync, rename, fsync of
/// the directory. Throws AutotuneError(cache); the temporary file is removed on failure.
void write_private_file_atomically(const std::filesystem::path& path, std::string_view bytes);

/// Whether `name` is such a temporary file's name ("<file>.tmp.<pid>.<n>").
bool is_temporary_file_name(std::string_view name);

using Clock = std::chrono::steady_clock;

/// strerror-like text of an errno value.
std::string errno_text(int error);
/// Throws AutotuneError(cache): "<what>: <errno text>".
[[noreturn]] void fail(const std::string& what, int error);
/// 'path', for messages.
std::string quoted(const std::filesystem::path& path);

/// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

/// What identifies one version of a file on disk. Every write renames a new file into place,
/// so a change shows in the inode, size or times.
struct Stamp {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const Stamp&) const = default;
};

Stamp stamp_of(const struct stat& st);
/// The stamp of the file at `path` (exists false when there is none).
Stamp stamp_of(const std::filesystem::path& path);
/// A file whose timestamp is this close to the moment it was read could change again within
/// the file system's timestamp granularity without its stamp changing: re-read it on a miss.
bool is_racy(const Stamp& stamp);

/// A whole file as read_file read it.
struct FileRead {
  enum Kind { absent, ok, directory, unreadable } kind = absent;
  std::string bytes;
  std::string error;  // for unreadable
  Stamp stamp;
};

/// Files larger than this are not read.
constexpr off_t max_file_size = off_t{1} << 30;

/// Whether a path is inside the cache (never follow a link there) or named by the user.
enum class Links { refuse, follow };

/// Reads the regular file `path` whole: never through a link (unless Links::follow), never
/// blocking on a FIFO, never more than `limit` bytes (a larger file is unreadable).
FileRead read_file(const std::filesystem::path& path, Links links = Links::refuse,
                   off_t limit = max_file_size);

/// Writes all of `bytes` to `fd` (retrying on EINTR); throws naming `path`.
void write_all(int fd, std::string_view bytes, const std::filesystem::path& path);
/// "<pid>.<n>": unique among this process's temporary files (see is_unique_suffix).
std::string unique_suffix();
/// Whether `text` is "<digits>.<digits>", as unique_suffix() makes it.
bool is_unique_suffix(std::string_view text);
/// fsyncs the directory `dir` (best effort).
void sync_directory(const std::filesystem::path& dir);
/// Writes `bytes` to `path` so that readers see the old file or the new one, never a mix:
/// a temporary file in the same directory, fsync, rename over, fsync the directory.
/// Cache files are the user's own (0600); an exported bundle is for others to read (0644 less
/// the umask). Durability::none skips the fsyncs, for files whose loss in a crash costs only
/// work (a checksum tells a torn one).
enum class Durability { synced, none };
void write_atomically(const std::filesystem::path& path, std::string_view bytes, mode_t mode = 0600,
                      Durability durability = Durability::synced);
/// Writes a file the user named (an exported bundle, a report, a replay table) as write_atomically
/// does, 0644 less the umask; refuses a path that names something other than a regular file (a
/// directory, a device, a FIFO, a socket, or a link to one), which a rename would replace.
void write_user_file(const std::filesystem::path& path, std::string_view bytes);
/// "YYYYMMDDTHHMMSS" of now, local time.
std::string timestamp();
/// Renames an unusable cache file aside so that nothing in it is lost, and says where.
void move_aside(const std::filesystem::path& path, const std::string& why);

/// poll() for `events` on the descriptor `fd` until `deadline` (EINTR waited through): > 0 ready,
/// 0 the deadline passed, < 0 failed (errno set). The Redis client's sockets and the build
/// helpers' (src/cl/build_protocol.cpp) wait with it.
int poll_until(int fd, short events, Clock::time_point deadline);

/// Takes an exclusive flock on `fd`, polling with a growing sleep (1 ms to 50 ms) until
/// `deadline`. The kernel drops a dead process's flock, so no lock outlives its holder.
/// Called once when a wait for a lock has lasted `after`: a waiter says what it waits for.
struct WaitNotice {
  std::chrono::milliseconds after{0};
  std::function<void()> say;
};
bool lock_until(int fd, Clock::time_point deadline, WaitNotice* notice = nullptr);

/// Opens (creating it 0600) the lock file `path`: never through a symbolic link, and only a
/// regular file of this user with no other name (a hard link), so that a planted link or file
/// cannot make us write elsewhere (a tuning's holder writes its pid into the file).
Fd open_lock_file(const std::filesystem::path& path);

/// An exclusive lock on the file `path` (created if needed), or nothing after `timeout`.
/// When `remove_on_release`, the holder deletes the file before it lets go (so that lock files
/// do not pile up); a waiter that then gets the lock of the deleted file notices and retries.
class LockFile final : public TuningLock {
 public:
  static std::unique_ptr<LockFile> acquire(const std::filesystem::path& path,
                                           std::chrono::milliseconds timeout,
                                           bool remove_on_release, WaitNotice* notice = nullptr) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      Fd fd = open_lock_file(path);
      if (!lock_until(fd.get(), deadline, notice)) return nullptr;
      struct stat held {
      }, named{};
      if (::fstat(fd.get(), &held) == 0 && ::stat(path.c_str(), &named) == 0 &&
          held.st_dev == named.st_dev && held.st_ino == named.st_ino) {
        return std::unique_ptr<LockFile>(new LockFile(std::move(fd), path, remove_on_release));
      }
      // The previous holder deleted the file while we waited: lock the current one.
    }
  }

  ~LockFile() override {
    if (remove_on_release_) ::unlink(path_.c_str());
  }

  int fd() const noexcept { return fd_.get(); }

 private:
  LockFile(Fd fd, std::filesystem::path path, bool remove_on_release)
      : fd_(std::move(fd)), path_(std::move(path)), remove_on_release_(remove_on_release) {}

  Fd fd_;  // closing it releases the lock
  std::filesystem::path path_;
  bool remove_on_release_;
};

/// Creates `dir` and its missing parents 0700, whatever the umask (like `mkdir -p -m 700`).
void make_private_directories(const std::filesystem::path& dir);
/// Checks that `dir` is a directory of this user that no one else may write, so that no other
/// user can plant or swap files in it. The cache directory itself may be reached through a
/// link the user or root made (Links::follow), never another user's; the folders tunekit makes
/// inside it may not.
void check_private_directory(const std::filesystem::path& dir, Links links);
/// `dir` created if missing (0700) and checked as above.
void prepare_private_directory(const std::filesystem::path& dir, Links links);
/// What is wrong with a folder tunekit made inside the cache (tables, in-progress records,
/// program binaries) for reading or deleting in it: nothing when it is absent or passes
/// check_private_directory(dir, Links::refuse); a link planted there is never followed.
std::optional<std::string> private_folder_problem(const std::filesystem::path& dir);
/// What makes the cache directory `root` unusable (check_private_directory, the user's own link
/// followed), or nothing when it is fine or absent (made at its first write).
std::optional<std::string> cache_root_problem(const std::filesystem::path& root);
/// The one warning for an unusable cache directory, the same text from every part that keeps
/// files there (the results' store, the program binaries, the device peaks), so that warn_once
/// says it once: "tunekit: <problem>; running without the persistent cache (...)".
std::string unusable_cache_root_warning(std::string_view problem);
/// A store's versioned folder inside the cache (`<root>/programs/v2`, `<root>/devices/v2`): what
/// is wrong with it or its parent for reading or deleting in it (private_folder_problem of each);
/// nothing when both are absent or ours.
std::optional<std::string> store_folders_problem(const std::filesystem::path& dir);
/// Creates such a folder before a write: the cache root (maybe a link the user made), then the
/// parent and `dir` (never links); each checked (prepare_private_cache_directory).
void prepare_store_folders(const std::filesystem::path& dir);
/// "a directory", "a symbolic link", "a FIFO", "a socket" or "a device": what a path that is
/// not a regular file is, for messages.
const char* file_kind(mode_t mode);

}  // namespace tunekit::detail
