// Seeds a persistent cache directory with the report tests' sample tunings, for the CLI and
// browser tests. Usage: tunekit_report_sample <cache-dir>
// With --layout <cache-dir>: the layout test's sample instead (test_report_samples.hpp).
// With --forged-bundle <file>: writes a bundle whose entry has a right checksum but a subnormal
// median (what an attacker can make), for `cache import` to refuse.
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <tunekit/cache.hpp>

#include "../report/test_report_samples.hpp"

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--forged-bundle") {
    auto entries = tunekit::test::sample_entries();
    entries.front().result.outcomes.front().median = 5e-324;
    const std::string op = entries.front().id.op;
    std::FILE* out = std::fopen(argv[2], "wb");
    const std::string text = tunekit::detail::write_cache_bundle({{op, {entries.front()}, {}}});
    const bool ok = out != nullptr && std::fwrite(text.data(), 1, text.size(), out) == text.size();
    if (out != nullptr) std::fclose(out);
    return ok ? 0 : 1;
  }
  if (argc == 3 && std::string_view(argv[1]) == "--layout") {  // browser_layout_test.sh
    try {
      tunekit::FileStore store(argv[2]);
      store.clear();
      std::printf("wrote %zu results\n", store.save_entries(tunekit::test::layout_entries()));
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tunekit_report_sample: %s\n", e.what());
      return 1;
    }
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <cache-dir>\n", argv[0]);
    return 2;
  }
  try {
    tunekit::FileStore store(argv[1]);
    store.clear();
    auto entries = tunekit::test::sample_entries();
    // A key whose candidates all failed: stored with no winner (Tuner::persist), shown as such.
    tunekit::StoredResult failed{"", 0, entries.front().result.outcomes};
    for (auto& outcome : failed.outcomes) {
      outcome.status = tunekit::OutcomeStatus::failed;
      outcome.error =
          tunekit::AutotuneError(tunekit::ErrorKind::build, "does not compile", outcome.name);
    }
    entries.push_back({tunekit::EntryId{entries.front().id.device, "always_failing", "n=64", 7},
                       std::move(failed)});
    const std::size_t written = store.save_entries(entries);
    // An interrupted tuning: two candidates measured (cache ls lists it).
    const auto& sample = entries.front();
    store.save_progress(tunekit::EntryId{sample.id.device, sample.id.op, "n=7", sample.id.checksum},
                        {sample.result.outcomes.begin(), sample.result.outcomes.begin() + 2});
    std::printf("wrote %zu sample results to %s\n", written, store.directory().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tunekit_report_sample: %s\n", e.what());
    return 1;
  }
}
