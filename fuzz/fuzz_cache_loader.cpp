// libFuzzer target for the cache loader: any bytes given to parse_cache_file (an outcome table),
// IndexedFile::parse (an op's index) or parse_cache_bundle either parse or raise
// AutotuneError(cache); nothing else (no crash, no other exception, no sanitizer report). What
// parses must write and read back to the same entries. Build and run: fuzz/run.sh [seconds]   (or
// cmake -DTUNEKIT_FUZZ=ON with clang++)
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <tunekit/cache.hpp>
#include <tunekit/error.hpp>

#include "../src/cache/indexed_file.hpp"

namespace {

/// The reader's promise to everything after it: each time is 0 or a plausible positive time.
void check_numbers(const tunekit::detail::ParsedFile& parsed) {
  const auto plausible = [](double t) { return t == 0 || (t >= 1e-12 && t <= 1e6); };
  for (const auto& entry : parsed.entries) {
    for (const auto& o : entry.result.outcomes) {
      if (!plausible(o.median) || !plausible(o.min) || !plausible(o.max) ||
          !(std::isnan(o.spread) || plausible(o.spread)) || !plausible(o.low) ||
          !plausible(o.high) || o.low > o.high) {
        std::abort();
      }
    }
  }
}

void check_round_trip(const tunekit::detail::ParsedFile& parsed) {
  using namespace tunekit::detail;
  check_numbers(parsed);
  const std::string text = write_cache_file(parsed.op, parsed.entries);
  const ParsedFile again = parse_cache_file(text);
  if (again.op != parsed.op || !again.problems.empty() ||
      again.entries.size() != parsed.entries.size()) {
    std::abort();
  }
  for (std::size_t i = 0; i < again.entries.size(); ++i) {
    if (entry_checksum(again.entries[i]) != entry_checksum(parsed.entries[i])) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    check_round_trip(tunekit::detail::parse_cache_file(bytes));
  } catch (const tunekit::AutotuneError& e) {
    if (e.kind() != tunekit::ErrorKind::cache) std::abort();
  }
  try {  // an op's index file (format 2)
    const auto index = tunekit::detail::IndexedFile::parse(std::string(bytes));
    const auto all = index->all();
    if (tunekit::detail::IndexedFile::parse(tunekit::detail::write_cache_index(all.op, all.records))
            ->all()
            .records.size() != all.records.size()) {
      std::abort();
    }
  } catch (const tunekit::AutotuneError& e) {
    if (e.kind() != tunekit::ErrorKind::cache) std::abort();
  }
  try {
    for (const auto& op : tunekit::detail::parse_cache_bundle(bytes)) check_round_trip(op);
  } catch (const tunekit::AutotuneError& e) {
    if (e.kind() != tunekit::ErrorKind::cache) std::abort();
  }
  return 0;
}
