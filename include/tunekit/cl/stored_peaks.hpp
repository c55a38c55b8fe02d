// StoredPeaks: each device's measured peak (Client::peak) kept on disk under the cache directory
// (<cache dir>/devices/v2/), so that a later process on the same device does not measure it again:
// on PoCL that measurement (compiling and running kernels/peak.cl) was a third of a small tuning.
//
//  - One small text file per device identity: a format line, the identity in full, the peaks,
//    and the XXH3 checksum of what precedes it. It is used only when all of that checks out and the
//    values are plausible; a bad file is reported once and removed (the peak is measured again).
//  - What is stored only rises (raise()): a peak measured in a busy moment is low, never high.
//    A stored peak never stops a tuning on its own: Client::peak_now() measures again first.
//  - Written atomically (0600) into folders of this user that no one else may write; nothing is
//    read or removed through a link.
// See docs/cache.md, "Device peaks".
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "tunekit/throughput.hpp"

namespace tunekit::cl {

/// The peaks of devices under one cache directory. Thread-safe (it holds no state that changes);
/// any number of processes may share the directory.
class StoredPeaks {
 public:
  /// The format version this build reads and writes: files live in <root>/devices/v<version>.
  static constexpr std::uint32_t format_version = 2;  // 2: the read rate

  /// Peaks under `cache_root` (Settings::resolved_cache_dir()). Creates nothing until raise().
  explicit StoredPeaks(std::filesystem::path cache_root);

  /// The stored peak of the device `identity` (DeviceInfo::identity()), or nothing (absent, or
  /// bad: then reported once, and removed when the file is ours). cache_bytes is not stored: 0.
  std::optional<DevicePeak> load(const std::string& identity) const;
  /// Stores, for each of the peaks, the higher of `peak` and what is stored. Failures are
  /// reported once, not thrown. A peak of no bytes per second (a failed measurement) is not stored.
  void raise(const std::string& identity, const DevicePeak& peak) const;

  /// The folder holding the files, and the file of `identity` in it.
  const std::filesystem::path& directory() const noexcept { return dir_; }
  std::filesystem::path file_of(const std::string& identity) const;

  /// How many devices have a stored peak.
  std::size_t count() const;
  /// Removes every stored peak (and leftover temporary file); returns how many peaks went.
  std::size_t clear() const;

 private:
  std::filesystem::path dir_;
};

namespace detail {
/// The bytes of a peak file for `identity` (what StoredPeaks writes).
std::string encode_stored_peak(const std::string& identity, const DevicePeak& peak);
/// The peak in `bytes` if they are a valid file for `identity`; else `problem` says why not.
struct DecodedPeak {
  std::optional<DevicePeak> peak;
  std::string problem;
};
DecodedPeak decode_stored_peak(std::string_view bytes, const std::string& identity);
}  // namespace detail

}  // namespace tunekit::cl
