// Seeds a persistent cache directory with the report tests' sample tunings, for the CLI and
// browser tests. Usage: tunekit_report_sample <cache-dir>
#include <cstdio>
#include <exception>
#include <tunekit/cache.hpp>

#include "../test_report_samples.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <cache-dir>\n", argv[0]);
    return 2;
  }
  try {
    tunekit::FileStore store(argv[1]);
    store.clear();
    const std::size_t written = store.save_entries(tunekit::test::sample_entries());
    std::printf("wrote %zu sample results to %s\n", written, store.directory().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tunekit_report_sample: %s\n", e.what());
    return 1;
  }
}
