// libFuzzer target for the report's input: forged cache entries. Bytes that parse as a cache
// file go through reports_from_cache, text_summary and html_report as `tunekit report --html`
// sends them; any other bytes are read as raw outcome numbers (any double, NaN, infinities,
// subnormals) and given to html_report directly, which must stay bounded on data the reader
// would refuse. A hang shows as a libFuzzer timeout (fuzz/run.sh: -timeout=10).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <tunekit/cache.hpp>
#include <tunekit/error.hpp>
#include <tunekit/report.hpp>

namespace {

void render(const std::vector<tunekit::TuningReport>& reports) {
  (void)tunekit::text_summary(reports);
  const std::string html = tunekit::html_report(reports);
  if (html.size() > (std::size_t{64} << 20)) std::abort();  // bounded by the input, not the data
}

/// Reports whose outcomes take their numbers straight from the bytes.
std::vector<tunekit::TuningReport> raw_reports(const std::uint8_t* data, std::size_t size) {
  tunekit::TuningReport report{"op", "n=1", "device", 0, {}};
  constexpr std::size_t per_outcome = 4 * sizeof(double) + 2;
  for (std::size_t at = 0; at + per_outcome <= size && report.outcomes.size() < 64;
       at += per_outcome) {
    tunekit::AutotuneOutcome o;
    double numbers[4];
    std::memcpy(numbers, data + at, sizeof numbers);
    o.name = "c" + std::to_string(report.outcomes.size());
    o.index = report.outcomes.size();
    o.median = numbers[0], o.spread = numbers[1], o.min = numbers[2], o.max = numbers[3];
    o.status =
        data[at + 32] % 2 ? tunekit::OutcomeStatus::measured : tunekit::OutcomeStatus::dropped;
    o.samples = data[at + 33];
    o.batch = 1;
    report.outcomes.push_back(o);
  }
  return {report};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    render(tunekit::reports_from_cache(tunekit::detail::parse_cache_file(bytes).entries));
    return 0;
  } catch (const tunekit::AutotuneError& e) {
    if (e.kind() != tunekit::ErrorKind::cache) std::abort();
  }
  render(raw_reports(data, size));
  return 0;
}
