// libFuzzer target for the replay-table loader (tunekit::parse_replay_table, the parser behind
// load_replay_table) and for space_from_table, which rebuilds a space from the table's
// configuration strings. Each returns or throws AutotuneError(cache); nothing else. A table that
// parses is written by save_replay_table and read back to the same configurations and outcomes.
// Build and run: fuzz/run.sh replay_table [seconds]   (or cmake -DTUNEKIT_FUZZ=ON with clang++)
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <tunekit/error.hpp>
#include <tunekit/search.hpp>

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

bool same_time(const std::optional<double>& a, const std::optional<double>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if (std::isnan(*a)) return std::isnan(*b);
  // save_replay_table keeps 9 significant digits.
  return *a == *b || std::fabs(*a - *b) <= 1e-8 * std::max(std::fabs(*a), std::fabs(*b));
}

const std::filesystem::path& scratch_file() {
  static const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("tunekit-fuzz-replay-" + std::to_string(::getpid()) + ".tsv");
  return file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tunekit;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ReplayTable table;
  try {
    table = parse_replay_table(text, "fuzzed.tsv");
  } catch (const AutotuneError& e) {
    require(e.kind() == ErrorKind::cache);
    require(e.message().rfind("fuzzed.tsv:", 0) == 0);
    return 0;
  }

  // Round trip through the file format, for tables whose configurations it can hold (a
  // configuration holding a tab or a newline, or starting with '#', cannot be written).
  const bool writable = std::all_of(table.begin(), table.end(), [](const auto& entry) {
    const std::string& config = entry.first;
    return !config.empty() && config[0] != '#' && config.find_first_of("\t\n") == std::string::npos;
  });
  if (writable && table.size() <= 64) {
    save_replay_table(scratch_file(), table);
    const ReplayTable again = load_replay_table(scratch_file());
    require(again.size() == table.size());
    for (const auto& [config, e] : table) {
      const auto it = again.find(config);
      require(it != again.end());
      require(same_time(e.time, it->second.time));
      require(same_time(e.cost_seconds, it->second.cost_seconds));
    }
  }

  // Rebuild the space: small tables only (the space is the product of every parameter's values).
  const bool small =
      table.size() <= 8 && std::all_of(table.begin(), table.end(), [](const auto& e) {
        return std::count(e.first.begin(), e.first.end(), ',') <= 3;
      });
  if (small) {
    try {
      const ExpandedSpace space = space_from_table(table);
      for (std::size_t i = 0; i < space.size(); ++i)
        require(table.count(space[i].to_string()) == 1);
    } catch (const AutotuneError& e) {
      require(e.kind() == ErrorKind::cache);
    }
  }
  return 0;
}
