// Device peaks kept on disk (StoredPeaks): a later process takes its device's peak from the file
// instead of running the peak kernels; what is stored only rises; a bad file is refused.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <regex>

#include "../../src/cache/format_internal.hpp"  // hex64: the checksum as the files write it
#include "../cache/test_cache_support.hpp"  // TempDir, CapturedWarnings, Child (CACHE_CHILD_PATH)
#include "support_cl.hpp"
#include "tunekit/cl/stored_peaks.hpp"
#include "tunekit/stable_hash.hpp"

namespace tunekit::test {

namespace {

// What `program_child DIR --peak` printed: the peak's text, and the programs it built or loaded.
struct ChildPeak {
  std::string bytes, read, flops;
  int builds = -1, loads = -1;
};

ChildPeak child_peak(const std::string& dir, const fs::path& output,
                     const std::string& mode = "--peak") {
  Child child({dir, mode}, output);
  ChildPeak peak;
  if (child.wait() != 0) return peak;
  const std::string text = read_text(output);
  std::smatch m;
  if (std::regex_search(
          text, m,
          std::regex(
              "peak_bytes=(\\S+) peak_read=(\\S+) peak_flops=(\\S+) builds=(\\d+) loads=(\\d+)"))) {
    peak = {m[1], m[2], m[3], std::stoi(m[4]), std::stoi(m[5])};
  }
  return peak;
}

const std::string device = "test device | driver 1 | 4 CUs";

}  // namespace

TEST_CASE("a later process takes its device's peak from disk and runs no peak kernel",
          "[opencl][stored-peaks]") {
  TempDir dir;
  const ChildPeak first = child_peak(dir.path().string(), dir / "first.txt");
  REQUIRE(first.builds >= 0);
  CHECK(first.builds + first.loads >= 1);  // kernels/peak.cl, compiled or loaded, then run
  CHECK(std::stod(first.bytes) > 0);
  CHECK(std::stod(first.read) > 0);
  CHECK(cl::StoredPeaks(dir.path()).count() == 1);

  const ChildPeak second = child_peak(dir.path().string(), dir / "second.txt");
  CHECK(second.builds == 0);
  CHECK(second.loads == 0);
  CHECK(second.bytes == first.bytes);  // exactly the stored figures
  CHECK(second.read == first.read);
  CHECK(second.flops == first.flops);

  // With the persistent cache off, every process measures.
  const ChildPeak off = child_peak("off", dir / "off.txt");
  CHECK(off.builds + off.loads >= 1);
}

TEST_CASE("a planted arithmetic peak is not kept when a measurement cannot confirm it",
          "[opencl][stored-peaks]") {
  // A valid file for this device with a low FLOP/s figure (its checksum is public). On a CPU
  // device, where the measurement gives the arithmetic peak as unknown, it once stood through
  // peak_now and stopped a matmul tuning at a candidate 80x slower than the best (review 7).
  TempDir dir;
  const std::string identity = shared_client().id().identity();
  const cl::StoredPeaks peaks(dir.path());
  peaks.raise(identity, DevicePeak{2e9, 5e10});
  REQUIRE(peaks.load(identity).has_value());
  const ChildPeak now = child_peak(dir.path().string(), dir / "now.txt", "--peak-now");
  REQUIRE(now.builds >= 0);
  // A CPU: unknown (0); a GPU: what it measures, far above 2 GFLOP/s. Never the planted figure.
  CHECK(std::stod(now.flops) != 2e9);
  if (shared_client().device().is_cpu()) {
    CHECK(now.flops == "0");
    CHECK(child_peak(dir.path().string(), dir / "read.txt").flops == "0");
  }
}

TEST_CASE("a stored peak only rises", "[opencl][stored-peaks]") {
  TempDir dir;
  const cl::StoredPeaks peaks(dir.path());
  peaks.raise(device, DevicePeak{0, 0});  // a failed measurement: nothing stored
  CHECK(peaks.count() == 0);
  CHECK_FALSE(peaks.load(device).has_value());

  peaks.raise(device, DevicePeak{0, 5e10});
  REQUIRE(peaks.load(device).has_value());
  CHECK(peaks.load(device)->bytes_per_second == 5e10);
  peaks.raise(device, DevicePeak{0, 3e10});  // a busy moment's lower figure
  CHECK(peaks.load(device)->bytes_per_second == 5e10);
  peaks.raise(device, DevicePeak{2e12, 4e10});  // each figure rises on its own
  CHECK(peaks.load(device)->flops_per_second == 2e12);
  CHECK(peaks.load(device)->bytes_per_second == 5e10);
  CHECK(peaks.load(device)->read_bytes_per_second == 0);  // never measured: unknown
  peaks.raise(device, DevicePeak{0, 3e10, 0, 6e10});      // the read rate rises alone
  CHECK(peaks.load(device)->read_bytes_per_second == 6e10);
  CHECK(peaks.load(device)->bytes_per_second == 5e10);
  CHECK(peaks.load(device)->flops_per_second == 2e12);
  peaks.raise(device, DevicePeak{0, 3e10, 0, 5.5e10});
  CHECK(peaks.load(device)->read_bytes_per_second == 6e10);
  CHECK_FALSE(peaks.load("another device").has_value());
  CHECK(peaks.count() == 1);
  // Files of this user only, that no one else may read or write.
  struct stat info {};
  REQUIRE(::stat(peaks.file_of(device).c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);

  CHECK(peaks.clear() == 1);
  CHECK(peaks.count() == 0);
}

TEST_CASE("a bad stored peak is refused, said, and removed", "[opencl][stored-peaks]") {
  TempDir dir;
  const cl::StoredPeaks peaks(dir.path());
  peaks.raise(device, DevicePeak{1e12, 5e10});
  const fs::path file = peaks.file_of(device);
  const std::string good = read_text(file);
  REQUIRE(peaks.load(device).has_value());

  std::string bytes, said;
  SECTION("garbage") {
    bytes = "not a peak at all\n";
    said = "not a tunekit device peak";
  }
  SECTION("a figure changed after the checksum was taken") {
    bytes = good;
    bytes[bytes.find("bytes_per_second ") + 17] = '9';
    said = "checksum mismatch";
  }
  SECTION("cut short") {
    bytes = good.substr(0, good.size() / 2);
    said = "checksum mismatch";
  }
  SECTION("another device's file in this device's place, its checksum right") {
    bytes = cl::detail::encode_stored_peak("another device", DevicePeak{1e12, 5e10});
    said = "measured on another device";
  }
  SECTION("an implausible figure with a right checksum") {
    bytes = cl::detail::encode_stored_peak(device, DevicePeak{1e12, 1e30});
    said = "implausible peak";
  }
  SECTION("a negative read rate with a right checksum") {
    bytes = cl::detail::encode_stored_peak(device, DevicePeak{1e12, 5e10, 0, -1});
    said = "implausible peak";
  }
  SECTION("a read rate above any device's, or not a number, with a right checksum") {
    bytes = cl::detail::encode_stored_peak(device,
                                           DevicePeak{1e12, 5e10, 0, GENERATE(1e17, std::nan(""))});
    said = "implausible peak";
  }
  SECTION("no read rate, with a right checksum") {
    bytes = cl::detail::encode_stored_peak(device, DevicePeak{1e12, 5e10, 0, 6e10});
    const auto line = bytes.find("read_bytes_per_second ");
    bytes.erase(line, bytes.find('\n', line) + 1 - line);
    bytes.erase(bytes.find("checksum "));
    bytes += "checksum " + tunekit::detail::hex64(stable_hash(bytes)) + "\n";
    said = "malformed peak";
  }
  SECTION("a file of format 1 (no read rate), its checksum right") {
    bytes = cl::detail::encode_stored_peak(device, DevicePeak{1e12, 5e10});
    bytes.replace(0, bytes.find('\n'), "tunekit-device-peak 1");
    said = "not a tunekit device peak of this version";
  }
  SECTION("not a number, with a right checksum") {
    bytes = cl::detail::encode_stored_peak(device, DevicePeak{std::nan(""), 5e10});
    said = "implausible peak";
  }
  SECTION("far larger than a peak file") {
    bytes = good + std::string(1 << 20, ' ');
    said = "larger than";
  }
  write_text(file, bytes);
  CapturedWarnings warnings;
  CHECK_FALSE(peaks.load(device).has_value());
  INFO(warnings.text());
  CHECK(warnings.count(said) == 1);
  if (said != "larger than") {
    CHECK_FALSE(fs::exists(file));  // removed: the next process measures and stores anew
  }
}

TEST_CASE("a stored peak is never read through a link or from a FIFO", "[opencl][stored-peaks]") {
  TempDir dir;
  const cl::StoredPeaks peaks(dir.path());
  peaks.raise(device, DevicePeak{1e12, 5e10});
  const fs::path file = peaks.file_of(device);
  const fs::path elsewhere = dir / "planted.peak";
  fs::rename(file, elsewhere);
  CapturedWarnings warnings;
  SECTION("a link to a valid file") {
    fs::create_symlink(elsewhere, file);
    CHECK_FALSE(peaks.load(device).has_value());
    CHECK(warnings.count("symbolic link") == 1);
    peaks.raise(device, DevicePeak{2e12, 6e10});
    CHECK(fs::is_symlink(file));  // not ours to remove or replace
    CHECK(fs::exists(elsewhere));
  }
  SECTION("a FIFO does not block the read") {
    REQUIRE(::mkfifo(file.c_str(), 0600) == 0);
    CHECK_FALSE(peaks.load(device).has_value());
    CHECK(warnings.count("not a regular file") == 1);
    peaks.raise(device, DevicePeak{2e12, 6e10});
    struct stat info {};
    REQUIRE(::lstat(file.c_str(), &info) == 0);
    CHECK(S_ISFIFO(info.st_mode));  // left as it was
  }
  SECTION("the folder is a link") {
    fs::remove_all(peaks.directory());
    fs::create_directory(dir / "other");
    fs::create_directory_symlink(dir / "other", peaks.directory());
    fs::rename(elsewhere, dir / "other" / file.filename());
    CHECK_FALSE(peaks.load(device).has_value());
    CHECK(warnings.count("ignoring the stored device peaks") == 1);
    peaks.raise(device, DevicePeak{2e12, 6e10});  // nothing written through the link either
    CHECK(read_text(dir / "other" / file.filename()).find("2000000000000") == std::string::npos);
  }
}

}  // namespace tunekit::test
