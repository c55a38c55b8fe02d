// ProgramBinaries: the on-disk program binaries, their file format, and the few POSIX calls that
// read and write them without following links or trusting other users' files.
#include "tunekit/cl/program_binaries.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <system_error>

#include "../cache/private_files.hpp"
#include "../warnings.hpp"
#include "tunekit/outcome.hpp"  // printable
#include "tunekit/stable_hash.hpp"

namespace tunekit::cl {

namespace {

namespace fs = std::filesystem;

constexpr char magic[8] = {'T', 'K', 'P', 'R', 'O', 'G', 'B', '\n'};
constexpr std::size_t max_field = ProgramBinaries::max_field_bytes;  // device identity, options
// A binary at the limit with its header: magic, version, two fields, three numbers, checksum.
constexpr std::size_t max_file = ProgramBinaries::max_binary_bytes + 2 * max_field + 64;

using tunekit::detail::errno_text;
using tunekit::detail::quoted;

// ---- the file format: little-endian fields, the XXH3 checksum of everything before it last ----

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}

// Reads fields from hostile bytes: every read is bounds-checked, a short read sets `bad`.
struct Reader {
  std::string_view bytes;
  std::size_t at = 0;
  bool bad = false;
  std::uint64_t number(int size) {
    if (bad || bytes.size() - at < static_cast<std::size_t>(size)) {
      bad = true;
      return 0;
    }
    std::uint64_t v = 0;
    for (int i = 0; i < size; ++i) {
      v |= std::uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
    }
    at += static_cast<std::size_t>(size);
    return v;
  }
  std::string_view text(std::uint64_t size) {
    if (bad || size > bytes.size() - at) {
      bad = true;
      return {};
    }
    const auto view = bytes.substr(at, static_cast<std::size_t>(size));
    at += static_cast<std::size_t>(size);
    return view;
  }
};

std::string name_of(const ProgramKey& key) {
  char name[40];
  std::snprintf(name, sizeof name, "%016" PRIx64 "%016" PRIx64 ".bin",
                stable_hash(key.device + '\n' + std::string(key.options)), stable_hash(key.source));
  return name;
}

// ---- the POSIX part: one small function each way (see docs/cache.md, "Program binaries") ----

enum class ReadStatus { ok, absent, unusable };
struct FileBytes {
  ReadStatus status = ReadStatus::absent;
  std::string bytes;
  std::string problem;
};

// The bytes of `path` if it is a regular file of this user and not a link; never blocks on a
// FIFO, never reads more than max_file.
FileBytes read_own_file(const fs::path& path) {
  FileBytes out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return out;
    out.status = ReadStatus::unusable;
    out.problem = errno == ELOOP ? "it is a symbolic link" : "cannot open it: " + errno_text(errno);
    return out;
  }
  struct stat info {};
  out.status = ReadStatus::unusable;
  if (::fstat(fd, &info) != 0) {
    out.problem = "cannot stat it: " + errno_text(errno);
  } else if (!S_ISREG(info.st_mode)) {
    out.problem = "it is not a regular file";
  } else if (info.st_uid != ::geteuid()) {
    out.problem = "it belongs to another user";
  } else if (static_cast<std::uintmax_t>(info.st_size) > max_file) {
    out.problem = "it is larger than " + std::to_string(max_file) + " bytes";
  } else {
    out.bytes.resize(static_cast<std::size_t>(info.st_size));
    std::size_t done = 0;
    int read_error = 0;
    while (done < out.bytes.size()) {
      const ssize_t got = ::read(fd, out.bytes.data() + done, out.bytes.size() - done);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) read_error = errno;
      if (got <= 0) break;
      done += static_cast<std::size_t>(got);
    }
    if (read_error != 0) {
      // The disk's trouble, not the file's: said as it is, and the file left where it is.
      out.bytes.clear();
      out.problem = "cannot read it: " + errno_text(read_error);
    } else {
      out.bytes.resize(done);  // a file shrunk meanwhile reads short: the checksum says so
      out.status = ReadStatus::ok;
    }
  }
  ::close(fd);
  return out;
}

bool is_binary_name(const std::string& name) { return name.ends_with(".bin"); }
// A load marker ("<hash>.bin.loading") and a binary set aside after a crash ("<hash>.bin.aside").
bool is_marker_or_aside_name(const std::string& name) {
  return name.ends_with(".bin.loading") || name.ends_with(".bin.aside");
}

/// The files this process loaded fine already (their marker is not needed again).
std::mutex proven_mutex;
std::set<std::string>& proven_files() {
  static std::set<std::string> files;
  return files;
}
// What a writer killed mid-write leaves: "<hash>.bin.tmp.<pid>.<n>".
bool is_temporary_name(const std::string& name) {
  return name.find(".bin.tmp.") != std::string::npos &&
         tunekit::detail::is_temporary_file_name(name);
}

}  // namespace

namespace detail {

std::string encode_program_binary(const ProgramKey& key, const std::vector<unsigned char>& binary) {
  std::string out(magic, sizeof magic);
  put_u32(out, ProgramBinaries::format_version);
  put_u32(out, static_cast<std::uint32_t>(key.device.size()));
  out += key.device;
  put_u32(out, static_cast<std::uint32_t>(key.options.size()));
  out += key.options;
  put_u64(out, stable_hash(key.source));
  put_u64(out, key.source.size());
  put_u64(out, binary.size());
  out.append(reinterpret_cast<const char*>(binary.data()), binary.size());
  put_u64(out, stable_hash(out));
  return out;
}

DecodedBinary decode_program_binary(std::string_view bytes, const ProgramKey& key) {
  DecodedBinary out;
  const auto fail = [&](std::string why) {
    out.problem = std::move(why);
    out.binary.clear();
    return out;
  };
  if (bytes.size() < sizeof magic + 8 ||
      bytes.substr(0, sizeof magic) != std::string_view(magic, sizeof magic)) {
    return fail("not a tunekit program binary");
  }
  Reader trailer{bytes.substr(bytes.size() - 8)};
  const std::uint64_t checksum = trailer.number(8);
  if (stable_hash(bytes.substr(0, bytes.size() - 8)) != checksum) {
    return fail("checksum mismatch (truncated or modified)");
  }
  Reader in{bytes.substr(0, bytes.size() - 8), sizeof magic};
  const auto version = in.number(4);
  if (version != ProgramBinaries::format_version) {
    return fail("format version " + std::to_string(version) + ", expected " +
                std::to_string(ProgramBinaries::format_version));
  }
  const auto field = [&in] {
    const auto size = in.number(4);
    if (size > max_field) in.bad = true;
    return in.text(size);
  };
  const auto device = field();
  const auto options = field();
  const auto source_hash = in.number(8);
  const auto source_size = in.number(8);
  const auto binary_size = in.number(8);
  if (binary_size > ProgramBinaries::max_binary_bytes) in.bad = true;
  const auto binary = in.text(binary_size);
  if (in.bad || in.at != in.bytes.size()) return fail("malformed header");
  if (device != key.device)
    return fail("compiled for another device ('" + printable(device, 200) + "')");
  if (options != key.options || source_size != key.source.size() ||
      source_hash != stable_hash(key.source)) {
    return fail("compiled from another source or with other options");
  }
  if (binary.empty()) return fail("empty binary");
  out.binary.assign(binary.begin(), binary.end());
  return out;
}

}  // namespace detail

namespace {

// Whether programs/ and programs/v<N> are the folders save() makes: real directories of this
// user that no one else may write. A link or a foreign folder planted there is never read from
// or deleted through (an absent folder just holds nothing).
bool folders_are_ours(const fs::path& dir) {
  if (auto wrong = tunekit::detail::store_folders_problem(dir)) {
    warn_once("tunekit: ignoring the program binaries: " + *wrong);
    return false;
  }
  return true;
}

}  // namespace

ProgramBinaries::ProgramBinaries(fs::path cache_root, std::chrono::milliseconds marker_wait)
    : dir_(std::move(cache_root) / "programs" / ("v" + std::to_string(format_version))),
      marker_wait_(marker_wait) {}

fs::path ProgramBinaries::file_of(const ProgramKey& key) const { return dir_ / name_of(key); }

std::optional<ProgramBinaries::Stored> ProgramBinaries::load(const ProgramKey& key) const {
  if (!folders_are_ours(dir_)) return std::nullopt;
  const fs::path path = file_of(key);
  FileBytes read = read_own_file(path);
  if (read.status == ReadStatus::absent) return std::nullopt;
  if (read.status == ReadStatus::unusable) {
    // Not ours to remove (a link, another user's file): leave it and build from source.
    warn_once("tunekit: ignoring program binary " + quoted(path) + ": " + read.problem);
    return std::nullopt;
  }
  auto decoded = detail::decode_program_binary(read.bytes, key);
  if (!decoded.problem.empty()) {
    discard(key, decoded.problem);
    return std::nullopt;
  }
  Stored stored{std::move(decoded.binary), nullptr};
  {
    std::lock_guard lock(proven_mutex);
    if (proven_files().contains(path.string())) return stored;
  }
  // The first load in this process: a marker, locked while the driver loads the binary. One
  // found unlocked and not empty was left by a process that died loading it.
  const fs::path marker = path.string() + ".loading";
  std::unique_ptr<tunekit::detail::LockFile> held;
  const bool patient = !marker_held_long_.load(std::memory_order_relaxed);
  try {
    held = tunekit::detail::LockFile::acquire(marker,
                                              patient ? marker_wait_ : decltype(marker_wait_){0},
                                              /*remove_on_release=*/true);
  } catch (const std::exception& e) {
    warn_once(std::string("tunekit: not loading program binaries: ") + e.what());
    return std::nullopt;
  }
  if (!held) {
    // Another process has been loading it for long (stopped, or stuck in its driver): compile.
    // It may hold other markers too, so later ones held are not waited for.
    if (patient) marker_held_long_.store(true, std::memory_order_relaxed);
    return std::nullopt;
  }
  struct stat info {};
  if (::fstat(held->fd(), &info) != 0) return std::nullopt;
  if (info.st_size > 0) {
    const fs::path aside = path.string() + ".aside";
    if (::rename(path.c_str(), aside.c_str()) != 0) ::unlink(path.c_str());
    warn_once("tunekit: a process ended while its driver loaded the program binary " +
              quoted(path) + " (it may crash the driver); set aside as " + quoted(aside) +
              ", building from source (that program's binary is not stored again until "
              "`tunekit cache clear`)");
    return std::nullopt;  // the marker goes with `held`
  }
  try {
    tunekit::detail::write_all(held->fd(), "pid " + std::to_string(::getpid()) + " loading\n",
                               marker);
  } catch (const std::exception&) {
    return std::nullopt;  // a marker that cannot say so protects nothing: compile
  }
  stored.marker = std::shared_ptr<tunekit::detail::LockFile>(std::move(held));
  return stored;
}

void ProgramBinaries::loaded_fine(const ProgramKey& key, Stored& stored) const {
  if (!stored.marker) return;
  {
    std::lock_guard lock(proven_mutex);
    proven_files().insert(file_of(key).string());
  }
  stored.marker.reset();  // removes the marker, then lets go of its lock
}

bool ProgramBinaries::storable(const ProgramKey& key) const {
  // A file the reader would refuse ("malformed header") is not written: it would cost a write,
  // then a warning and a removal on every later build of the program.
  const bool device_fits = key.device.size() <= max_field;
  if (device_fits && key.options.size() <= max_field) return true;
  warn_once("tunekit: program binary not cached: its " +
            std::string(device_fits ? "build options" : "device identity") + " of " +
            std::to_string(device_fits ? key.options.size() : key.device.size()) +
            " bytes pass the " + std::to_string(max_field) + " a binary's header holds");
  return false;
}

void ProgramBinaries::save(const ProgramKey& key, const std::vector<unsigned char>& binary) const {
  if (binary.empty() || binary.size() > max_binary_bytes || !storable(key)) return;
  struct stat aside {};
  if (::lstat((file_of(key).string() + ".aside").c_str(), &aside) == 0) return;  // see load()
  try {
    tunekit::detail::prepare_store_folders(dir_);
    tunekit::detail::write_private_file_atomically(dir_ / name_of(key),
                                                   detail::encode_program_binary(key, binary));
  } catch (const std::exception& e) {
    warn_once(std::string("tunekit: program binary not cached: ") + e.what());
  }
}

void ProgramBinaries::discard(const ProgramKey& key, const std::string& reason) const {
  if (!folders_are_ours(dir_)) return;
  const fs::path path = file_of(key);
  warn_once("tunekit: program binary " + quoted(path) + " is unusable (" + reason +
            "); removing it and building from source");
  ::unlink(path.c_str());  // unlink never follows a link; a concurrent rewrite only costs a build
}

ProgramBinaries::Usage ProgramBinaries::usage() const {
  Usage usage;
  if (!folders_are_ours(dir_)) return usage;
  std::error_code error;
  for (fs::directory_iterator it(dir_, error), end; !error && it != end; it.increment(error)) {
    if (!is_binary_name(it->path().filename().string())) continue;
    std::error_code stat_error;
    if (!it->is_regular_file(stat_error) || it->is_symlink(stat_error)) continue;
    ++usage.files;
    const auto size = it->file_size(stat_error);
    if (!stat_error) usage.bytes += size;
  }
  return usage;
}

ProgramBinaries::Usage ProgramBinaries::clear() const {
  Usage removed;
  if (!folders_are_ours(dir_)) return removed;
  std::error_code error;
  for (fs::directory_iterator it(dir_, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!is_binary_name(name) && !is_temporary_name(name) && !is_marker_or_aside_name(name))
      continue;
    struct stat info {};
    if (::lstat(it->path().c_str(), &info) != 0 || S_ISDIR(info.st_mode)) continue;
    if (::unlink(it->path().c_str()) == 0 && is_binary_name(name)) {
      ++removed.files;
      removed.bytes += static_cast<std::uintmax_t>(info.st_size);
    }
  }
  return removed;
}

}  // namespace tunekit::cl
