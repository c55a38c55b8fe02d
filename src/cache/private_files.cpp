// tunekit's files on disk (private_files.hpp): POSIX reads, atomic writes, lock files and the
// privacy rule for its directories, shared by the result store and the program binaries.
#include "private_files.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <system_error>
#include <thread>

#include "../warnings.hpp"

namespace tunekit::detail {

namespace fs = std::filesystem;

std::string errno_text(int error) { return std::generic_category().message(error); }

[[noreturn]] void fail(const std::string& what, int error) {
  throw AutotuneError(ErrorKind::cache, what + ": " + errno_text(error));
}

std::string quoted(const fs::path& path) { return "'" + path.string() + "'"; }

Stamp stamp_of(const struct stat& st) {
  return Stamp{true,
               st.st_dev,
               st.st_ino,
               st.st_size,
               std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec,
               std::int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec};
}

Stamp stamp_of(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return stamp_of(st);
}

/// A file whose timestamp is this close to the moment it was read could change again within
/// the file system's timestamp granularity without its stamp changing: re-read it on a miss.
bool is_racy(const Stamp& stamp) {
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  return stamp.exists && now - stamp.mtime_ns < 2'000'000'000;
}

FileRead read_file(const fs::path& path, Links links, off_t limit) {
  FileRead read;
  // O_NONBLOCK: opening a FIFO planted in the cache must not hang.
  Fd fd(::open(path.c_str(),
               O_RDONLY | O_CLOEXEC | O_NONBLOCK | (links == Links::refuse ? O_NOFOLLOW : 0)));
  if (!fd) {
    if (errno == ENOENT) return read;
    read.kind = FileRead::unreadable;
    read.error = errno == ELOOP ? "a symbolic link (tunekit never follows links in its cache)"
                                : errno_text(errno);
    read.stamp = stamp_of(path);
    return read;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    read.kind = FileRead::unreadable;
    read.error = errno_text(errno);
    return read;
  }
  read.stamp = stamp_of(st);
  if (S_ISDIR(st.st_mode)) {
    read.kind = FileRead::directory;
    return read;
  }
  if (!S_ISREG(st.st_mode)) {
    read.kind = FileRead::unreadable;
    read.error = "not a regular file";
    return read;
  }
  const auto too_large = [&] {
    read.kind = FileRead::unreadable;
    read.error = limit == max_file_size ? "larger than 1 GiB"
                                        : "larger than " + std::to_string(limit) + " bytes";
    read.bytes.clear();
    return read;
  };
  if (st.st_size > limit) return too_large();
  read.bytes.resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  for (;;) {
    if (done == read.bytes.size()) {  // it grew while read: read to the end, within the limit
      if (done > static_cast<std::size_t>(limit)) return too_large();
      read.bytes.resize(std::min(done + 4096, static_cast<std::size_t>(limit) + 1));
    }
    const ssize_t n = ::read(fd.get(), read.bytes.data() + done, read.bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      read.kind = FileRead::unreadable;
      read.error = errno_text(errno);
      read.bytes.clear();
      return read;
    }
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  read.bytes.resize(done);
  read.kind = FileRead::ok;
  return read;
}

void write_all(int fd, std::string_view bytes, const fs::path& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write " + quoted(path), errno);
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

namespace {
std::atomic<unsigned> unique_counter{0};
}  // namespace

std::string unique_suffix() {
  return std::to_string(::getpid()) + "." + std::to_string(unique_counter.fetch_add(1));
}

void sync_directory(const fs::path& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd) (void)::fsync(fd.get());  // best effort: the file itself is already synced
}

/// Writes `bytes` to `path` so that readers see the old file or the new one, never a mix:
/// a temporary file in the same directory, fsync, rename over, fsync the directory.
/// Cache files are the user's own (0600); an exported bundle is for others to read (0644 less
/// the umask).
void write_atomically(const fs::path& path, std::string_view bytes, mode_t mode,
                      Durability durability) {
  const fs::path temp = path.string() + ".tmp." + unique_suffix();
  Fd fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (!fd) fail("cannot create " + quoted(temp), errno);
  try {
    write_all(fd.get(), bytes, temp);
    if (durability == Durability::synced && ::fsync(fd.get()) != 0) {
      fail("cannot sync " + quoted(temp), errno);
    }
    fd.reset();
    if (::rename(temp.c_str(), path.c_str()) != 0) fail("cannot replace " + quoted(path), errno);
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
  if (durability == Durability::synced) sync_directory(path.parent_path());
}

void write_user_file(const fs::path& path, std::string_view bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    throw AutotuneError(ErrorKind::cache, "could not write " + quoted(path) + ": it is " +
                                              file_kind(st.st_mode) +
                                              ", not a regular file; name a file");
  }
  try {
    write_atomically(path, bytes, 0644);
  } catch (const AutotuneError& e) {
    throw AutotuneError(ErrorKind::cache,
                        "could not write " + quoted(path) + " (" + e.message() + ")");
  }
}

std::string timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%S", &tm);
  return text;
}

/// Renames an unusable cache file aside so that nothing in it is lost, and says where.
void move_aside(const fs::path& path, const std::string& why) {
  const fs::path aside = path.string() + ".corrupt-" + timestamp() + "-" + unique_suffix();
  if (::rename(path.c_str(), aside.c_str()) != 0) {
    fail("cannot move the unusable cache file " + quoted(path) + " aside", errno);
  }
  warn("tunekit: cache file " + quoted(path) + " " + why + "; kept it as " + quoted(aside) +
       " and started a new one");
}

int poll_until(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return 0;
    pollfd ready{fd, events, 0};
    const int n = ::poll(&ready, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
    if (n < 0 && errno == EINTR) continue;
    return n;
  }
}

bool lock_until(int fd, Clock::time_point deadline, WaitNotice* notice) {
  auto delay = std::chrono::milliseconds(1);
  const auto started = Clock::now();
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) fail("cannot lock", errno);
    const auto now = Clock::now();
    if (now >= deadline) return false;
    if (notice && notice->say && now - started >= notice->after) {
      notice->say();
      notice->say = nullptr;  // once
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(delay, deadline - now));
    delay = std::min(delay * 2, std::chrono::milliseconds(50));
  }
}

Fd open_lock_file(const fs::path& path) {
  Fd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  if (!fd && errno == ELOOP) {
    throw AutotuneError(ErrorKind::cache, "the lock file " + quoted(path) +
                                              " is a symbolic link; tunekit never "
                                              "follows links in its cache (remove it)");
  }
  if (!fd) fail("cannot open the lock file " + quoted(path), errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) fail("cannot stat the lock file " + quoted(path), errno);
  if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    throw AutotuneError(ErrorKind::cache, "the lock file " + quoted(path) +
                                              " is not a regular file of this user (remove it)");
  }
  if (st.st_nlink > 1) {
    throw AutotuneError(ErrorKind::cache,
                        "the lock file " + quoted(path) + " has " + std::to_string(st.st_nlink) +
                            " names (a hard link to a file elsewhere); tunekit "
                            "never writes through a link in its cache (remove it)");
  }
  return fd;
}

/// Creates `dir` and its missing parents 0700, whatever the umask (like `mkdir -p -m 700`).
void make_private_directories(const fs::path& dir) {
  fs::path sofar;
  for (const auto& part : dir) {
    sofar /= part;
    if (::mkdir(sofar.c_str(), 0700) == 0) {
      if (::chmod(sofar.c_str(), 0700) != 0) fail("cannot set the mode of " + quoted(sofar), errno);
    } else if (errno != EEXIST) {
      const int error = errno;
      struct stat st {};
      if (::stat(sofar.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;  // EACCES on a parent
      fail("cannot create the cache directory " + quoted(dir), error);
    }
  }
}

/// Checks that `dir` is a directory of this user that no one else may write, so that no other
/// user can plant or swap files in it. The cache directory itself may be reached through a
/// link the user or root made (Links::follow): one that another user planted where the
/// directory was to be created would lead tunekit's writes, and `cache clear`, into a folder of
/// the user's that the link's owner chose. The folders tunekit makes inside it may not be links.
void check_private_directory(const fs::path& dir, Links links) {
  // Without its trailing slashes: lstat("link/") looks through the link.
  std::string name = dir.string();
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  struct stat st {};
  if (::lstat(name.c_str(), &st) != 0) fail("cannot use the cache directory " + quoted(dir), errno);
  if (links == Links::follow && S_ISLNK(st.st_mode)) {
    if (st.st_uid != ::geteuid() && st.st_uid != 0) {
      throw AutotuneError(ErrorKind::cache,
                          "the cache directory " + quoted(dir) +
                              " is a symbolic link of another user (uid " +
                              std::to_string(st.st_uid) +
                              "); tunekit follows only a link of your own or root's: remove it, "
                              "or set TUNEKIT_CACHE_DIR (or --cache-dir) to another directory");
    }
    if (::stat(name.c_str(), &st) != 0)
      fail("cannot use the cache directory " + quoted(dir), errno);
  }
  if (!S_ISDIR(st.st_mode)) {
    throw AutotuneError(ErrorKind::cache,
                        quoted(dir) + " is not a directory" +
                            (S_ISLNK(st.st_mode) ? " but a symbolic link" : "") +
                            "; remove it, or choose another cache directory (TUNEKIT_CACHE_DIR "
                            "or --cache-dir)");
  }
  if (st.st_uid != ::geteuid()) {
    throw AutotuneError(ErrorKind::cache,
                        "the cache directory " + quoted(dir) + " belongs to uid " +
                            std::to_string(st.st_uid) + ", not to this user (uid " +
                            std::to_string(::geteuid()) +
                            "); tunekit uses only a directory of "
                            "your own: set TUNEKIT_CACHE_DIR (or --cache-dir) to one");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw AutotuneError(ErrorKind::cache, "the cache directory " + quoted(dir) +
                                              " is writable by other users (mode " + mode +
                                              "); run `chmod go-w " + dir.string() +
                                              "` or use another one");
  }
}

/// `dir` created if missing (0700) and checked as above.
void prepare_private_directory(const fs::path& dir, Links links) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) make_private_directories(dir);
  check_private_directory(dir, links);
}

namespace {

// What check_private_directory(dir, links) refuses, or nothing when `dir` is absent or passes.
std::optional<std::string> directory_problem(const fs::path& dir, Links links) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return std::nullopt;  // absent: nothing in it yet
  try {
    check_private_directory(dir, links);
    return std::nullopt;
  } catch (const AutotuneError& e) {
    return e.message();
  }
}

}  // namespace

std::optional<std::string> private_folder_problem(const fs::path& dir) {
  return directory_problem(dir, Links::refuse);
}

std::optional<std::string> cache_root_problem(const fs::path& root) {
  return directory_problem(root, Links::follow);  // the user's own link to it is fine
}

std::string unusable_cache_root_warning(std::string_view problem) {
  return "tunekit: " + std::string(problem) +
         "; running without the persistent cache (no tuning result, program binary or device "
         "peak is kept)";
}

std::optional<std::string> store_folders_problem(const fs::path& dir) {
  for (const fs::path& folder : {dir.parent_path(), dir}) {
    if (auto wrong = private_folder_problem(folder)) return wrong;
  }
  return std::nullopt;
}

void prepare_store_folders(const fs::path& dir) {
  // The cache root (maybe a link the user made), then our folders: one rule for all of them.
  prepare_private_cache_directory(dir.parent_path().parent_path(), true);
  prepare_private_cache_directory(dir.parent_path(), false);
  prepare_private_cache_directory(dir, false);
}

const char* file_kind(mode_t mode) {
  return S_ISDIR(mode)    ? "a directory"
         : S_ISLNK(mode)  ? "a symbolic link"
         : S_ISFIFO(mode) ? "a FIFO"
         : S_ISSOCK(mode) ? "a socket"
                          : "a device";
}

/// "<digits>.<digits>", as unique_suffix() makes it.
bool is_unique_suffix(std::string_view text) {
  const auto dot = text.find('.');
  const auto digits = [](std::string_view t) {
    return !t.empty() &&
           std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return dot != std::string_view::npos && digits(text.substr(0, dot)) &&
         digits(text.substr(dot + 1));
}

void prepare_private_cache_directory(const fs::path& dir, bool follow_link) {
  prepare_private_directory(dir, follow_link ? Links::follow : Links::refuse);
}

void write_private_file_atomically(const fs::path& path, std::string_view bytes) {
  write_atomically(path, bytes, 0600);
}

bool is_temporary_file_name(std::string_view name) {
  const auto at = name.rfind(".tmp.");
  return at != std::string_view::npos && is_unique_suffix(name.substr(at + 5));
}

}  // namespace tunekit::detail
