// ProgramBinaries: compiled OpenCL programs kept on disk (<cache dir>/programs/v1/), so that a
// later process loads a program with clCreateProgramWithBinary instead of compiling its source.
//
//  - One file per (device identity, source, build options): a header (magic, format version,
//    the key in full, the binary's length, an XXH3 checksum of header and binary) then the
//    binary. A file is used only when every key field matches and the checksum holds.
//  - Written atomically (a private temporary file, fsync, rename): processes building the same
//    program at once each write a whole file, and the last rename wins.
//  - A bad file (truncated, garbage, foreign key, or a binary the driver rejects) is reported
//    once, removed, and the program is rebuilt from source. Disk failures never fail a build.
//  - No binary can kill more than one process: before a process first loads a binary, it
//    writes and locks a marker next to it ("<file>.loading"), removed once the program built
//    and proved to be this source's. A driver that crashes on the binary leaves the marker
//    behind; the next process finds it unlocked, sets the binary aside ("<file>.aside", never
//    stored again for that program until `cache clear`) and compiles the source. A marker
//    another process holds is waited for up to marker_wait, then that program is compiled; after
//    one such wait, held markers are not waited for again (a stopped process holds one per build
//    thread: its waiters would otherwise lose marker_wait per program).
//  - A binary holds the proof of its source: every program is compiled with one more, empty
//    kernel named after the hash of its source and options (ProgramCache), which a binary of
//    another program lacks.
// See docs/cache.md, "Program binaries".
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit::cl {

/// What identifies one program binary: the device it was compiled for, the source and options.
struct ProgramKey {
  std::string device;  ///< DeviceInfo::identity(): platform, device, driver version, ...
  std::string_view source;
  std::string_view options;
};

/// The binaries of one device under one cache directory. Thread-safe; any number of processes
/// may share the directory.
class ProgramBinaries {
 public:
  /// The format version this build reads and writes: files live in <root>/programs/v<version>.
  /// (2: programs carry their source's stamp kernel; a v1 binary, without it, is not read.)
  static constexpr std::uint32_t format_version = 2;
  /// The largest program binary tunekit takes from a driver, stores or reads back: 256 MiB, far
  /// above any real binary or PTX (a larger size is a driver's or a file's fault).
  static constexpr std::size_t max_binary_bytes = std::size_t{1} << 28;
  /// The longest device identity or build options a binary's header holds: 64 KiB. A program
  /// whose key is longer is built each time, never stored (save() says so once).
  static constexpr std::size_t max_field_bytes = std::size_t{1} << 16;

  /// How long load() waits for another process's marker on a binary before it compiles the
  /// source instead (a load takes well under a second).
  static constexpr std::chrono::milliseconds default_marker_wait{10'000};

  /// Binaries under `cache_root` (Settings::resolved_cache_dir()). Creates nothing until save().
  explicit ProgramBinaries(std::filesystem::path cache_root,
                           std::chrono::milliseconds marker_wait = default_marker_wait);

  /// A stored binary, and the marker held while this process loads it for the first time.
  struct Stored {
    std::vector<unsigned char> binary;
    std::shared_ptr<void> marker;  ///< null when this process loaded the file fine already
  };
  /// The stored binary of `key`, or nothing (absent; bad: then reported once and removed; left
  /// behind by a process that died loading it: then set aside, said once; or its marker held by
  /// another process past marker_wait, or at all once one was).
  std::optional<Stored> load(const ProgramKey& key) const;
  /// The program of `stored` built and was checked: its marker goes, and later loads of the
  /// file in this process need none.
  void loaded_fine(const ProgramKey& key, Stored& stored) const;
  /// Whether a binary of `key` can be stored: its device identity and build options within
  /// max_field_bytes (said once where not).
  bool storable(const ProgramKey& key) const;
  /// Stores `binary` for `key`, replacing an older one. Failures, and a key that is not
  /// storable(), are reported once, not thrown.
  void save(const ProgramKey& key, const std::vector<unsigned char>& binary) const;
  /// Removes the binary of `key` because of `reason` (e.g. the driver rejected it); says so once.
  void discard(const ProgramKey& key, const std::string& reason) const;

  /// The folder holding the files, and the file of `key` in it.
  const std::filesystem::path& directory() const noexcept { return dir_; }
  std::filesystem::path file_of(const ProgramKey& key) const;

  /// How many binaries (and bytes) the directory holds.
  struct Usage {
    std::size_t files = 0;
    std::uintmax_t bytes = 0;
  };
  Usage usage() const;
  /// Removes every binary (and leftover temporary file, marker and binary set aside); returns
  /// what was removed.
  Usage clear() const;

 private:
  std::filesystem::path dir_;
  std::chrono::milliseconds marker_wait_;
  /// A marker was held past marker_wait_: later held markers are tried once, not waited for.
  mutable std::atomic<bool> marker_held_long_{false};
};

namespace detail {
/// The bytes of a binary file for `key` (what ProgramBinaries writes).
std::string encode_program_binary(const ProgramKey& key, const std::vector<unsigned char>& binary);
/// The binary in `bytes` when they are a valid file for exactly `key`; else the reason why not.
/// Treats `bytes` as hostile: never reads out of bounds, never throws.
struct DecodedBinary {
  std::vector<unsigned char> binary;
  std::string problem;  ///< empty when the file is good
};
DecodedBinary decode_program_binary(std::string_view bytes, const ProgramKey& key);
}  // namespace detail

}  // namespace tunekit::cl
