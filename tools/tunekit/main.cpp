// `tunekit`: list OpenCL devices, tune the shipped ops, inspect and move the persistent cache,
// and write the HTML report. The command line is parsed here; the commands live beside it.
#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <tunekit/error.hpp>
#include <tunekit/ops/matrix.hpp>
#include <tunekit/ops/registry.hpp>
#include <tunekit/outcome.hpp>
#include <tunekit/settings.hpp>

#include "commands.hpp"

namespace {

using namespace tunekit::cli;

// The footer of every command's help: exit statuses, and the variables the library reads
// (tunekit::environment_variables, their one list).
const std::string exit_help = [] {
  std::string text =
      "Exit status: 0 ok; 1 runtime failure (no device, a tuning in which no candidate worked, "
      "cache I/O); 2 usage error (bad arguments, or a bad TUNEKIT_* value).\nEnvironment: ";
  for (const std::string_view name : tunekit::environment_variables) {
    text += std::string(name) + (name == std::end(tunekit::environment_variables)[-1] ? "" : ", ");
  }
  return text +
         "; under them the settings files ~/.config/tunekit/tunekit.toml, then ./tunekit.toml "
         "(see docs/settings.md).";
}();

// Every text option and argument: an empty one is a usage error, never "the default" (an empty
// --cache-dir or op once meant "clear everything").
const CLI::Validator non_empty(
    [](const std::string& text) { return text.empty() ? std::string("must not be empty") : ""; },
    "", "non-empty");

// Size options take integers from 1 to the kernels' limit, checked on the text: a number past
// 2^64 must not wrap or saturate into a valid one. Anything else is a usage error.
const CLI::Validator size_value(
    [](const std::string& text) -> std::string {
      std::uint64_t value = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec == std::errc() && end == text.data() + text.size() && value >= 1 &&
          value <= tunekit::ops::max_kernel_elements) {
        return {};
      }
      return "'" + text.substr(0, 40) + (text.size() > 40 ? "...'" : "'") +
             " is not a size from 1 to " + std::to_string(tunekit::ops::max_kernel_elements) +
             " (the kernels index with 32-bit ints)";
    },
    "", "size");

CLI::Option* add_size(CLI::App& app, const std::string& name, std::optional<std::uint64_t>& value,
                      const std::string& help) {
  return app.add_option(name, value, help)->check(size_value)->type_name("N");
}

void add_tuning_options(CLI::App& op, TuneOptions& options) {
  op.add_option("--device,-d", options.device,
                "OpenCL device: an index from `tunekit devices`, or a substring of the "
                "platform/device name (default: TUNEKIT_DEVICE, else the first GPU, else the "
                "first CPU)")
      ->check(non_empty);
  op.add_option("--level,-l", options.level,
                "how hard to tune: minimal, balanced, extensive, full (default: TUNEKIT_LEVEL, "
                "else balanced)")
      ->check(non_empty);
  op.add_option("--search", options.search,
                "search strategy for parameter spaces: exhaustive, random, annealing, model "
                "(default: "
                "TUNEKIT_SEARCH, else the level's)")
      ->check(non_empty);
  op.add_flag("--no-cache", options.no_cache,
              "neither read nor write the persistent cache (always tunes)");
  op.add_flag("--no-progress", options.no_progress, "no progress line on stderr");
  op.footer(exit_help);
}

// What a parse error says, with a command CLI11 does not know named: it reports "A subcommand
// is required" for `tunekit cache bogus` as for `tunekit cache`.
std::string parse_error_message(CLI::App& app, const CLI::ParseError& e) {
  if (e.get_name() != "RequiredError") return e.what();
  const auto every = [](CLI::App*) { return true; };
  CLI::App* level = &app;  // the deepest command given that needs one of its own
  for (CLI::App* sub : app.get_subcommands()) {
    if (sub->get_require_subcommand_min() > 0 && sub->get_subcommands().empty()) level = sub;
  }
  if (level->get_require_subcommand_min() == 0 || !level->get_subcommands().empty()) {
    return e.what();
  }
  std::string names;
  for (const CLI::App* sub : level->get_subcommands(every)) {
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  const std::string path = level == &app ? "tunekit" : "tunekit " + level->get_name();
  const auto rest = level->remaining();
  if (rest.empty()) return "`" + path + "` needs a command: " + names;
  return "'" + tunekit::printable(rest.front(), 80) + "' is not a command of `" + path +
         "`: " + names;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tunekit: autotune OpenCL kernels and inspect the results.", "tunekit"};
  app.footer(exit_help);
  app.set_version_flag("--version", "tunekit 0.1.0");
  app.require_subcommand(1);
  CommonOptions common;
  app.add_option("--cache-dir", common.cache_dir,
                 "the persistent cache directory (default: TUNEKIT_CACHE_DIR, else "
                 "$XDG_CACHE_HOME/tunekit, else ~/.cache/tunekit)")
      ->type_name("DIR")
      ->check(non_empty);
  app.add_option("--store", common.store,
                 "a result store shared by a fleet, behind the cache directory: "
                 "redis://[USER@]HOST[:PORT][/DB][?prefix=PREFIX] (default: TUNEKIT_STORE; its "
                 "password: TUNEKIT_STORE_PASSWORD); the cache commands and "
                 "report then work on it")
      ->type_name("URL")
      ->check(non_empty);

  CLI::App* devices = app.add_subcommand(
      "devices", "List the OpenCL platforms and devices, with their identity and limits.");
  bool devices_peak = false;
  devices->add_flag("--peak", devices_peak,
                    "also measure each device's peak now (fp32 multiply-adds, a copy, a read-only "
                    "sum): the roofline a tuning's good-enough stop uses");
  devices->footer(exit_help);

  TuneOptions tune_options;
  CLI::App* tune = app.add_subcommand(
      "tune",
      "Tune a shipped op for given sizes on one device and print every candidate's time: "
      "tunekit tune OP [SIZES] [TUNING OPTIONS]; `tunekit tune OP --help` lists the op's sizes and "
      "the tuning options.");
  // At most one op; none, or a name that is no shipped op, is answered with the list of ops
  // (below), not with the parser's "A subcommand is required".
  tune->require_subcommand(0, 1);
  std::string unknown_op;
  tune->add_option("op", unknown_op, "a shipped op: one of the commands below");
  tune->footer(exit_help);
  // One subcommand per shipped op (ops/registry.hpp), its options bound here until parsed.
  std::map<std::string, std::map<std::string, std::optional<std::uint64_t>>> sizes;
  std::map<std::string, std::map<std::string, std::string>> choices;
  for (const auto& shipped : tunekit::ops::shipped_ops()) {
    CLI::App* op = tune->add_subcommand(shipped.name, shipped.summary);
    for (const auto& size : shipped.sizes) {
      add_size(*op, "--" + size.name + (size.short_s ? ",-s" : ""), sizes[shipped.name][size.name],
               size.help);
    }
    for (const auto& choice : shipped.choices) {
      op->add_option("--" + choice.name, choices[shipped.name][choice.name], choice.help)
          ->check(CLI::IsMember(choice.values));
    }
    add_tuning_options(*op, tune_options);
  }

  CLI::App* cache =
      app.add_subcommand("cache", "Inspect, clear, export and import the persistent cache.");
  cache->require_subcommand(1);
  cache->footer(exit_help);
  CLI::App* cache_ls =
      cache->add_subcommand("ls", "List the ops with results, and where they are.");
  std::string cache_op;
  CLI::App* cache_show = cache->add_subcommand("show", "Print every stored tuning of one op.");
  cache_show->add_option("op", cache_op, "the op's name (see `tunekit cache ls`)")
      ->required()
      ->check(non_empty);
  CLI::App* cache_clear =
      cache->add_subcommand("clear", "Remove the results of one op, or of every op.");
  cache_clear->add_option("op", cache_op, "the op to clear (default: every op)")->check(non_empty);
  std::string file;
  CLI::App* cache_export =
      cache->add_subcommand("export", "Write every result (all ops, all devices) to one file.");
  cache_export->add_option("file", file, "the bundle to write")->required()->check(non_empty);
  bool keep_existing = false;
  CLI::App* cache_import =
      cache->add_subcommand("import", "Merge a bundle written by `tunekit cache export`.");
  // A missing file is a cache I/O failure (exit 1) reported by import_from, like an unreadable one.
  cache_import->add_option("file", file, "the bundle to read")->required()->check(non_empty);
  cache_import->add_flag("--keep-existing", keep_existing,
                         "keep a local result where the bundle has one for the same entry");
  for (CLI::App* sub : {cache_ls, cache_show, cache_clear, cache_export, cache_import}) {
    sub->footer(exit_help);
  }

  ReportOptions report_options;
  CLI::App* report = app.add_subcommand(
      "report", "Summarise the persistent cache; with --html, write a page of charts.");
  report
      ->add_option("--html", report_options.html,
                   "write a self-contained HTML report (charts per op and key) to FILE")
      ->type_name("FILE")
      ->check(non_empty);
  report->add_option("--op", report_options.op, "only this op")->check(non_empty);
  report->footer(exit_help);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e) == 0 ? exit_ok : exit_usage;  // --help
    std::cerr << "tunekit: " << tunekit::printable(parse_error_message(app, e), 2000, true)
              << "\nRun with --help for more information.\n";
    return exit_usage;
  }

  try {
    if (devices->parsed()) return list_devices_command(common, devices_peak);
    if (tune->parsed()) {
      for (CLI::App* op : tune->get_subcommands()) tune_options.op = op->get_name();
      if (tune_options.op.empty()) {
        std::string ops;
        for (const auto& shipped : tunekit::ops::shipped_ops()) {
          ops += (ops.empty() ? "" : ", ") + shipped.name;
        }
        throw UsageError(
            (unknown_op.empty()
                 ? std::string("tune needs an op")
                 : "'" + tunekit::printable(unknown_op, 80) + "' is not an op it knows") +
            "; `tunekit tune` tunes the shipped ops: " + ops +
            " (`tunekit tune <op> --help` for its sizes). An op of your own is tuned by its "
            "program, at its first call of a size");
      }
      for (const auto& [name, value] : sizes[tune_options.op]) {
        if (value) tune_options.arguments.sizes.emplace(name, *value);
      }
      for (const auto& [name, value] : choices[tune_options.op]) {
        if (!value.empty()) tune_options.arguments.choices.emplace(name, value);
      }
      return tune_command(common, tune_options);
    }
    if (cache_ls->parsed()) return cache_ls_command(common);
    if (cache_show->parsed()) return cache_show_command(common, cache_op);
    if (cache_clear->parsed()) return cache_clear_command(common, cache_op);
    if (cache_export->parsed()) return cache_export_command(common, file);
    if (cache_import->parsed()) return cache_import_command(common, file, keep_existing);
    if (report->parsed()) return report_command(common, report_options);
  } catch (const UsageError& e) {
    std::cerr << "tunekit: " << tunekit::printable(e.what(), 2000, true)
              << "\nRun with --help for more information.\n";
    return exit_usage;
  } catch (const tunekit::AutotuneError& e) {
    std::cerr << "tunekit: error: " << tunekit::printable(e.what(), 8000, true) << "\n";
    return e.kind() == tunekit::ErrorKind::settings ? exit_usage : exit_failure;
  } catch (const std::exception& e) {
    std::cerr << "tunekit: error: " << tunekit::printable(e.what(), 8000, true) << "\n";
    return exit_failure;
  }
  return exit_usage;  // unreachable: a subcommand is required
}
