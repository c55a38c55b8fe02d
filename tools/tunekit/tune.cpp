// `tunekit devices` and `tunekit tune <op>`: the OpenCL side of the tool.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <tunekit/cache.hpp>
#include <tunekit/cl.hpp>
#include <tunekit/ops/registry.hpp>
#include <tunekit/outcome.hpp>
#include <tunekit/progress.hpp>
#include <tunekit/redis_store.hpp>
#include <utility>

#include "commands.hpp"

namespace tunekit::cli {

Settings command_settings(const CommonOptions& common) {
  Settings settings = Settings::from_environment();
  if (!common.cache_dir.empty()) settings.cache_dir = common.cache_dir;
  if (!common.store.empty()) {
    (void)parse_store_url(common.store, "--store");
    settings.store = common.store;
  }
  return settings;
}

namespace {

std::string bytes_text(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) value /= 1024, ++unit;
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

// The device's peak measured now (and kept in the cache directory of the global settings, as a
// tuning's would be).
void print_peak(const cl::DeviceInfo& device) {
  DevicePeak measured;
  try {
    cl::Client client(device);
    measured = client.peak_now();
  } catch (const std::exception& e) {  // one device's failure leaves the others' lines
    std::cout << "      peak:     unknown (" << printable(e.what(), 200) << ")\n";
    return;
  }
  const auto figure = [](double value, double unit, const char* name) {
    if (!(value > 0)) return std::string("unknown");
    char text[48];
    std::snprintf(text, sizeof text, "%.0f %s", value / unit, name);
    return std::string(text);
  };
  std::cout << "      peak:     " << figure(measured.flops_per_second, 1e9, "GFLOP/s")
            << " fp32 multiply-add, " << figure(measured.bytes_per_second, 1e9, "GB/s")
            << " copied (read + written), " << figure(measured.read_bytes_per_second, 1e9, "GB/s")
            << " read, cache " << bytes_text(static_cast<std::uint64_t>(measured.cache_bytes))
            << "\n";
}

}  // namespace

int list_devices_command(const CommonOptions& common, bool peak) {
  const Settings settings = command_settings(common);
  const auto devices = cl::list_devices();
  if (devices.empty()) {
    // select_device says what to install.
    (void)cl::select_device(settings.device);
    return exit_failure;
  }
  std::optional<std::size_t> chosen;
  std::string choice_problem;
  try {
    chosen = cl::select_device(settings).index;
  } catch (const AutotuneError& e) {
    choice_problem = e.message();
  }
  if (peak) set_global_settings(settings);  // the measured peaks are kept where it says
  std::string platform;
  for (const auto& d : devices) {
    if (d.platform_name != platform) {
      platform = d.platform_name;
      std::cout << "platform: " << d.platform_name << " (" << d.platform_version << ")\n";
    }
    std::cout << "  " << d.describe() << (chosen == d.index ? "   <- default" : "") << "\n";
    std::cout << "      identity: " << d.identity() << "\n";
    std::string sizes;
    for (std::size_t s : d.max_work_item_sizes)
      sizes += (sizes.empty() ? "" : " x ") + std::to_string(s);
    std::cout << "      limits:   work-group " << d.max_work_group_size << " (items " << sizes
              << "), local memory " << bytes_text(d.local_memory) << ", global memory "
              << bytes_text(d.global_memory) << ", largest buffer " << bytes_text(d.max_allocation)
              << ", timer " << format_seconds(d.timer_resolution) << "\n";
    if (peak) print_peak(d);
  }
  if (!choice_problem.empty()) {
    std::cout << "TUNEKIT_DEVICE='" << printable(settings.device, 80)
              << "' selects none of these: " << choice_problem << "\n";
    return exit_usage;
  }
  return exit_ok;
}

namespace {

// The device `settings` name. A selector (TUNEKIT_DEVICE, --device) that matches none of the
// devices there are is a usage error; having no OpenCL platform at all is a runtime failure.
cl::DeviceInfo choose_device(const Settings& settings, bool from_option) {
  const std::string& selector = settings.device;
  try {
    return cl::select_device(settings);
  } catch (const AutotuneError& e) {
    if (e.kind() == ErrorKind::device && !selector.empty() && !cl::list_devices().empty()) {
      std::string message = e.message();
      const std::string variable = "TUNEKIT_DEVICE=";
      if (from_option && message.rfind(variable, 0) == 0) {
        message.replace(0, variable.size(), "--device=");
      }
      throw UsageError(message);
    }
    throw;
  }
}

}  // namespace

int tune_command(const CommonOptions& common, const TuneOptions& options) {
  Settings settings = command_settings(common);
  if (!options.level.empty()) settings.level = parse_level(options.level, "--level");
  if (!options.search.empty()) {
    settings.search_strategy = parse_search_strategy(options.search, "--search");
  }
  if (!options.device.empty()) {
    settings.device = options.device;
    settings.device_source.clear();
  }
  if (options.no_cache) settings.persistent_cache = false;
  settings.tuning = TuningMode::blocking;  // tuning is the command's point: it waits for it
  // The tool prints the table itself; TUNEKIT_LOG=debug still adds the tuner's own lines.
  if (settings.log == LogLevel::info) settings.log = LogLevel::quiet;
  // The library's progress line (progress.hpp), drawn unless --no-progress or
  // TUNEKIT_PROGRESS=off: on a terminal in place, elsewhere a line every few seconds.
  ProgressLine progress;
  const bool draw = !options.no_progress && settings.progress != ProgressMode::off;
  // "tuning <op> on <device>" only once a tuning measures: a result the cache serves is not
  // tuned (the table then says where it came from).
  std::string tuning_line;
  settings.on_progress = [&progress, &tuning_line, draw](const TuningProgress& p) {
    if (!tuning_line.empty()) std::cerr << std::exchange(tuning_line, {}) << std::flush;
    if (draw) progress(p);
  };
  set_global_settings(settings);  // the shipped ops' tuners start from the global settings

  const ops::ShippedOp* op = ops::find_shipped_op(options.op);
  if (op == nullptr) throw UsageError("unknown op '" + options.op + "'");
  try {  // before a device is opened: too large for the kernels is a usage error
    op->check(options.arguments);
  } catch (const AutotuneError& e) {
    throw UsageError(e.message());
  }
  // No cache directory at all is a usage error, said before anything is tuned (docs/cli.md):
  // AutotuneError(settings) naming the variables.
  if (settings.persistent_cache) (void)settings.resolved_cache_dir();
  cl::Client client(choose_device(settings, !options.device.empty()));
  tuning_line = "tunekit: tuning " + options.op + " on " + client.device().describe() + " (level " +
                std::string(to_string(settings.level)) + ")\n";
  std::vector<TuningReport> reports;
  try {
    reports = op->tune(client, options.arguments);
  } catch (...) {
    progress.finish();
    throw;
  }
  progress.finish();
  for (const auto& report : reports) {
    std::cout << format_report(
        report, settings.log >= LogLevel::debug ? ReportDetail::full : ReportDetail::summary);
    if (report.tuning_seconds == 0) {
      // A stored result serves every level: say so where the user asked for one.
      const std::string again =
          options.level.empty() ? "" : " at " + std::string(to_string(settings.level));
      std::cout << "(from the "
                << printable(report.source.empty() ? "persistent cache" : report.source, 600)
                << (options.level.empty() ? "" : "; a stored result serves every --level")
                << "; `tunekit cache clear " << report.op << "` or --no-cache tunes again" << again
                << ")\n";
    }
  }
  if (settings.persistent_cache) {
    // Say "kept" only of what is on disk: a full disk or an unusable cache directory leaves the
    // results in memory (the library warned why).
    std::optional<FileStore> store;
    bool kept = false;
    LayeredStore::flush_all();  // results fetched from a shared store are written by a thread
    try {
      store.emplace(settings.resolved_cache_dir());
      kept = std::all_of(reports.begin(), reports.end(), [&](const TuningReport& report) {
        const auto ids = store->ids(report.op);
        return std::any_of(ids.begin(), ids.end(), [&](const EntryId& id) {
          return id.device == report.device && id.key == report.key;
        });
      });
    } catch (const AutotuneError&) {
    }
    // Every result read back from this directory: it was there already (the line above names
    // it), and there is nothing new to keep.
    if (kept && std::all_of(reports.begin(), reports.end(), [&](const TuningReport& report) {
          return report.tuning_seconds == 0 && report.source == store->source();
        })) {
      return exit_ok;
    }
    if (!kept) {
      std::cerr << "tunekit: error: the results could not be written to the persistent cache"
                << (store ? " in " + store->directory().string() : std::string())
                << " (see the warning above): they were not kept\n";
      return exit_failure;
    }
    std::cout << "results kept in " << store->directory().string() << "\n";
  }
  return exit_ok;
}

}  // namespace tunekit::cli
