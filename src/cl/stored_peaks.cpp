// StoredPeaks: the devices' peaks on disk, their file format, and the rule that they only rise.
#include "tunekit/cl/stored_peaks.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <system_error>

#include "../cache/format_internal.hpp"  // hex64, parse_hex64
#include "../cache/private_files.hpp"
#include "../warnings.hpp"
#include "tunekit/stable_hash.hpp"

namespace tunekit::cl {

namespace {

namespace fs = std::filesystem;

// "tunekit-device-peak <version>\n": files of another version are not read.
const std::string& format_line() {
  static const std::string line =
      "tunekit-device-peak " + std::to_string(StoredPeaks::format_version) + "\n";
  return line;
}
constexpr std::size_t max_identity = 1 << 12;  // DeviceInfo::identity(): a few hundred bytes
constexpr off_t max_file = 1 << 13;
// Far above any device of today, so that only a forged or broken file is refused: 10 PB/s,
// 10 EFLOP/s.
constexpr double max_bytes_per_second = 1e16;
constexpr double max_flops_per_second = 1e19;

using tunekit::detail::quoted;

// Shortest round-trip form, whatever the process's locale.
std::string number_text(double value) {
  char text[64];
  const auto written = std::to_chars(text, text + sizeof text, value);
  return std::string(text, written.ptr);
}

bool is_peak_name(const std::string& name) { return name.ends_with(".peak"); }
bool is_temporary_name(const std::string& name) {
  return name.find(".peak.tmp.") != std::string::npos &&
         tunekit::detail::is_temporary_file_name(name);
}

// Whether devices/ and devices/v<N> are the folders raise() makes: real directories of this user
// that no one else may write. A link or a foreign folder there is never read or deleted through.
bool folders_are_ours(const fs::path& dir) {
  if (auto wrong = tunekit::detail::store_folders_problem(dir)) {
    warn_once("tunekit: ignoring the stored device peaks: " + *wrong);
    return false;
  }
  return true;
}

// Reads "<name> <value>\n" from the front of `rest`; nothing when it is not that.
std::optional<std::string_view> field(std::string_view& rest, std::string_view name) {
  if (!rest.starts_with(name) || rest.size() <= name.size() || rest[name.size()] != ' ') {
    return std::nullopt;
  }
  const auto end = rest.find('\n', name.size() + 1);
  if (end == std::string_view::npos) return std::nullopt;
  const auto value = rest.substr(name.size() + 1, end - name.size() - 1);
  rest.remove_prefix(end + 1);
  return value;
}

// Reads a whole number from `text` into `value`; false when it is not one.
bool read_number(std::string_view text, double& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc{} && end == text.data() + text.size();
}

}  // namespace

namespace detail {

std::string encode_stored_peak(const std::string& identity, const DevicePeak& peak) {
  std::string out(format_line());
  out += "identity " + std::to_string(identity.size()) + "\n" + identity + "\n";
  out += "flops_per_second " + number_text(peak.flops_per_second) + "\n";
  out += "bytes_per_second " + number_text(peak.bytes_per_second) + "\n";
  out += "read_bytes_per_second " + number_text(peak.read_bytes_per_second) + "\n";
  out += "checksum " + tunekit::detail::hex64(stable_hash(out)) + "\n";
  return out;
}

DecodedPeak decode_stored_peak(std::string_view bytes, const std::string& identity) {
  const auto fail = [](std::string why) { return DecodedPeak{std::nullopt, std::move(why)}; };
  if (!bytes.starts_with(format_line())) return fail("not a tunekit device peak of this version");
  const auto checked = std::min(bytes.rfind("checksum "), bytes.size());  // none: cut short
  std::string_view trailer = bytes.substr(checked);
  const auto checksum = field(trailer, "checksum");
  const auto expected = checksum ? tunekit::detail::parse_hex64(*checksum) : std::nullopt;
  if (!expected || !trailer.empty() || checksum->size() != 16 ||
      *expected != stable_hash(bytes.substr(0, checked))) {
    return fail("checksum mismatch (truncated or modified)");
  }
  std::string_view rest = bytes.substr(format_line().size(), checked - format_line().size());
  const auto size_text = field(rest, "identity");
  std::size_t size = 0;
  if (!size_text ||
      std::from_chars(size_text->data(), size_text->data() + size_text->size(), size).ptr !=
          size_text->data() + size_text->size() ||
      size > max_identity || rest.size() < size + 1 || rest[size] != '\n') {
    return fail("malformed device identity");
  }
  const std::string_view stored_identity = rest.substr(0, size);
  rest.remove_prefix(size + 1);
  const auto flops_text = field(rest, "flops_per_second");
  const auto bytes_text = field(rest, "bytes_per_second");
  const auto read_text = field(rest, "read_bytes_per_second");
  DevicePeak peak;
  if (!flops_text || !bytes_text || !read_text || !rest.empty() ||
      !read_number(*flops_text, peak.flops_per_second) ||
      !read_number(*bytes_text, peak.bytes_per_second) ||
      !read_number(*read_text, peak.read_bytes_per_second)) {
    return fail("malformed peak");
  }
  if (stored_identity != identity) {
    return fail("measured on another device ('" + std::string(stored_identity) + "')");
  }
  // Positive, finite and below any real device: the only peaks a measurement gives.
  if (!(peak.flops_per_second >= 0 && peak.flops_per_second <= max_flops_per_second) ||
      !(peak.bytes_per_second > 0 && peak.bytes_per_second <= max_bytes_per_second) ||
      !(peak.read_bytes_per_second >= 0 && peak.read_bytes_per_second <= max_bytes_per_second)) {
    return fail("implausible peak (" + std::string(*flops_text) + " FLOP/s, " +
                std::string(*bytes_text) + " B/s copied, " + std::string(*read_text) +
                " B/s read)");
  }
  return DecodedPeak{peak, {}};
}

}  // namespace detail

StoredPeaks::StoredPeaks(fs::path cache_root)
    : dir_(std::move(cache_root) / "devices" / ("v" + std::to_string(format_version))) {}

fs::path StoredPeaks::file_of(const std::string& identity) const {
  return dir_ / (tunekit::detail::hex64(stable_hash(identity)) + ".peak");
}

std::optional<DevicePeak> StoredPeaks::load(const std::string& identity) const {
  if (!folders_are_ours(dir_)) return std::nullopt;
  const fs::path path = file_of(identity);
  const auto read = tunekit::detail::read_file(path, tunekit::detail::Links::refuse, max_file);
  if (read.kind == tunekit::detail::FileRead::absent) return std::nullopt;
  if (read.kind != tunekit::detail::FileRead::ok) {
    // Not ours to remove (a link, a folder, a FIFO): leave it and measure.
    warn_once("tunekit: ignoring the stored device peak " + quoted(path) + ": " +
              (read.kind == tunekit::detail::FileRead::directory ? "a directory" : read.error));
    return std::nullopt;
  }
  auto decoded = detail::decode_stored_peak(read.bytes, identity);
  if (!decoded.peak) {
    warn_once("tunekit: the stored device peak " + quoted(path) + " is unusable (" +
              decoded.problem + "); removing it and measuring the device again");
    ::unlink(path.c_str());  // never follows a link; a concurrent rewrite only costs a measurement
  }
  return decoded.peak;
}

void StoredPeaks::raise(const std::string& identity, const DevicePeak& peak) const {
  if (!(peak.bytes_per_second > 0)) return;
  // A link, a FIFO or a directory in the file's place is not ours (load() said so): left alone.
  struct stat there {};
  if (::lstat(file_of(identity).c_str(), &there) == 0 && !S_ISREG(there.st_mode)) return;
  DevicePeak higher = peak;
  if (const auto stored = load(identity)) {
    if (stored->flops_per_second >= peak.flops_per_second &&
        stored->bytes_per_second >= peak.bytes_per_second &&
        stored->read_bytes_per_second >= peak.read_bytes_per_second) {
      return;  // nothing to raise
    }
    higher.flops_per_second = std::max(higher.flops_per_second, stored->flops_per_second);
    higher.bytes_per_second = std::max(higher.bytes_per_second, stored->bytes_per_second);
    higher.read_bytes_per_second =
        std::max(higher.read_bytes_per_second, stored->read_bytes_per_second);
  }
  try {
    tunekit::detail::prepare_store_folders(dir_);
    // Losing it in a crash costs one measurement, and the checksum tells a torn file.
    tunekit::detail::write_atomically(file_of(identity),
                                      detail::encode_stored_peak(identity, higher), 0600,
                                      tunekit::detail::Durability::none);
  } catch (const std::exception& e) {
    warn_once(std::string("tunekit: the device's peak is not stored: ") + e.what());
  }
}

std::size_t StoredPeaks::count() const {
  std::size_t peaks = 0;
  if (!folders_are_ours(dir_)) return peaks;
  std::error_code error;
  for (fs::directory_iterator it(dir_, error), end; !error && it != end; it.increment(error)) {
    std::error_code stat_error;
    peaks += is_peak_name(it->path().filename().string()) && !it->is_symlink(stat_error) &&
             it->is_regular_file(stat_error);
  }
  return peaks;
}

std::size_t StoredPeaks::clear() const {
  std::size_t removed = 0;
  if (!folders_are_ours(dir_)) return removed;
  std::error_code error;
  for (fs::directory_iterator it(dir_, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (!is_peak_name(name) && !is_temporary_name(name)) continue;
    struct stat info {};
    if (::lstat(it->path().c_str(), &info) != 0 || S_ISDIR(info.st_mode)) continue;
    if (::unlink(it->path().c_str()) == 0 && is_peak_name(name)) ++removed;
  }
  return removed;
}

}  // namespace tunekit::cl
