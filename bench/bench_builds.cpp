// How long OpenCL program builds take, and what helps: N distinct matmul programs (the real
// kernels, with the -D options matmul's blocked space gives them) built one after another, by T
// threads in one context, by T threads in T contexts, and reloaded from stored binaries; then
// the first launch of a program built from source against one loaded from its binary (on PoCL,
// whether the binary carries the work-group functions compiled at a first launch).
// Prints each line as it is measured. docs/benchmarks.md, "Time to tuned".
//
// Usage: bench_builds [--programs N] [--threads T] [--device SELECTOR] [--candidate NAME]
//        bench_builds --per-family N [--families A,B,...] [--device SELECTOR]
//        bench_builds --names FILE [--device SELECTOR]
//        bench_builds --together N [--families FAMILY] [--device SELECTOR]
//   --candidate: the matmul candidate whose first launches are timed (default: the first of
//   the N blocked programs), e.g. "direct[WPTM=4,VWN=8,NVEC=4,LX=2,LY=1]"
//   --per-family: instead, N distinct programs of each f32 family spread over its space, built
//   one after another, each build's time printed: which families a cold tuning's wait for
//   builds goes to (--families: only these). A one-line kernel first: what any build costs.
//   --names: the same for the matmul candidates named in FILE, one per line (a tuning table's).
//   --together N: N programs of a family (--families, default staged) built one by one, against
//   the same N compiled as one program of N kernels (each program's macros and file-scope names
//   kept apart), alternately, twice: whether a driver that builds one program at a time in a
//   process compiles a program's kernels faster together.
// Turn the driver's own compile cache off for honest numbers: CUDA_CACHE_DISABLE=1 (NVIDIA),
// POCL_KERNEL_CACHE=0 (PoCL). Every run also adds a fresh -D to each phase's programs, so no
// phase can reuse what an earlier phase or run compiled.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <tunekit/cl.hpp>
#include <tunekit/cl/program_binaries.hpp>
#include <tunekit/ops/matmul.hpp>
#include <tunekit/settings.hpp>
#include <vector>

#include "arguments.hpp"

namespace tcl = tunekit::cl;
namespace ops = tunekit::ops;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void line(const char* what, std::size_t programs, double seconds, double serial) {
  std::printf("%-44s %4zu programs %8.2f s %8.1f ms/program", what, programs, seconds,
              1e3 * seconds / static_cast<double>(programs));
  if (serial > 0) std::printf("   %.2fx serial", serial / seconds);
  std::printf("\n");
  std::fflush(stdout);
}

::cl::Context make_context(const tcl::DeviceInfo& device) {
  cl_int code = CL_SUCCESS;
  ::cl::Context context(device.device, nullptr, nullptr, nullptr, &code);
  tcl::check(code, [] { return std::string("creating a context"); });
  return context;
}

// The same specs with `tag` added to their options: programs no earlier phase compiled.
std::vector<tcl::KernelSpec> tagged(const std::vector<tcl::KernelSpec>& specs,
                                    const std::string& tag) {
  std::vector<tcl::KernelSpec> out;
  for (const auto& s : specs) {
    out.push_back(tcl::KernelSpec::from_text(std::string(s.source()), s.build_options() + " " + tag,
                                             s.kernel_name()));
  }
  return out;
}

// Builds every spec on `threads` threads; each thread takes the next spec from a shared counter
// and builds it through `cache_of(thread)`.
double build_all(const std::vector<tcl::KernelSpec>& specs, std::size_t threads,
                 const std::function<tcl::ProgramCache&(std::size_t)>& cache_of) {
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> failures{0};
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (std::size_t i; (i = next.fetch_add(1)) < specs.size();) {
        try {
          (void)cache_of(t).program(specs[i]);
        } catch (const std::exception&) {
          failures.fetch_add(1);
        }
      }
    });
  }
  for (auto& thread : pool) thread.join();
  const double seconds = seconds_since(start);
  if (failures > 0) std::printf("  (%zu builds failed)\n", failures.load());
  return seconds;
}

// The per-family table: `per_family` distinct programs of each family spread over its space, or
// the programs of the candidates in `names` where it is not empty, each built alone from source
// (tagged, so nothing compiled before is reused). A build that fails (a family the device cannot
// run) prints its error and is left out of the summary.
void per_family_builds(const tcl::DeviceInfo& device, std::size_t per_family,
                       const std::string& only, const std::set<std::string>& names) {
  const ::cl::Context context = make_context(device);
  tcl::ProgramCache cache(context, device.device, device.device_name);
  const std::string run = std::to_string(std::random_device{}());
  std::size_t serial = 0;
  const auto timed = [&](const tcl::KernelSpec& spec) {
    const auto tag = "-DBENCH_RUN=" + run + " -DBENCH_BUILD=" + std::to_string(serial++);
    const auto start = Clock::now();
    (void)cache.program(tagged({spec}, tag).front());
    return seconds_since(start);
  };
  const tcl::KernelSpec trivial = tcl::KernelSpec::from_text(
      "__kernel void one(__global float* p) { p[get_global_id(0)] = 1.0f; }", "", "one");
  const double first = timed(trivial);  // the first build also starts the compiler
  std::printf("a one-line kernel: %.1f ms, then %.1f ms\n", 1e3 * first, 1e3 * timed(trivial));
  std::map<std::string, std::vector<std::pair<std::string, tcl::KernelSpec>>> families;
  std::set<std::string> seen, found;
  for (auto& [name, spec] : ops::matmul_kernels(tunekit::DType::f32)) {
    if (!spec.problem().empty() ||
        (names.empty() && !seen.insert(spec.kernel_name() + spec.build_options()).second)) {
      continue;
    }
    const std::string family = name.substr(0, name.find('['));
    const bool named =
        names.empty()
            ? only.empty() || ("," + only + ",").find("," + family + ",") != std::string::npos
            : names.contains(name);
    if (!named) continue;
    families[family].emplace_back(name, spec);
    if (!names.empty()) found.insert(name);
  }
  for (const auto& name : names) {
    if (!found.contains(name)) {
      std::printf("  not built: %s (no such candidate, or its family cannot run here)\n",
                  name.c_str());
    }
  }
  for (const auto& [family, programs] : families) {
    std::vector<double> times;
    const std::size_t n = names.empty() ? std::min(per_family, programs.size()) : programs.size();
    for (std::size_t i = 0; i < n; ++i) {
      const auto& [name, spec] = programs[i * programs.size() / n];
      try {
        times.push_back(timed(spec));
        std::printf("  %-14s %8.1f ms  %s\n", family.c_str(), 1e3 * times.back(), name.c_str());
      } catch (const std::exception& e) {
        std::printf("  %-14s   failed  %s: %.200s\n", family.c_str(), name.c_str(), e.what());
      }
      std::fflush(stdout);
    }
    if (times.empty()) continue;
    std::sort(times.begin(), times.end());
    std::printf("%-14s %zu of %zu programs: median %.1f ms, min %.1f, max %.1f\n\n", family.c_str(),
                times.size(), programs.size(), 1e3 * times[times.size() / 2], 1e3 * times.front(),
                1e3 * times.back());
    std::fflush(stdout);
  }
}

// The texts of `specs` as one program: each spec's -D options as #defines, its file-scope names
// (the kernel, static functions, typedefs) suffixed with _t<i>, then every macro it defined
// undefined again; the kernels are named in `kernels`.
std::string together_text(const std::vector<tcl::KernelSpec>& specs,
                          std::vector<std::string>& kernels) {
  static const std::regex define(R"(^[ \t]*#[ \t]*define[ \t]+(\w+))", std::regex::multiline);
  static const std::regex function(R"(static\s+inline\s+[\w\s\*]*?\b(\w+)\s*\()");
  static const std::regex type(R"(typedef\s+[^;]*?\b(\w+)\s*;)");
  static const std::regex option(R"(-D(\w+)=(\S+))");
  std::string text;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const std::string source(specs[i].source());
    const std::string suffix = "_t" + std::to_string(i);
    std::set<std::string> macros, names{specs[i].kernel_name()};
    const std::string& options = specs[i].build_options();
    for (std::sregex_iterator m(options.begin(), options.end(), option), end; m != end; ++m) {
      text += "#define " + (*m)[1].str() + " " + (*m)[2].str() + "\n";
      macros.insert((*m)[1].str());
    }
    for (const auto* pattern : {&function, &type}) {
      for (std::sregex_iterator m(source.begin(), source.end(), *pattern), end; m != end; ++m) {
        names.insert((*m)[1].str());
      }
    }
    for (std::sregex_iterator m(source.begin(), source.end(), define), end; m != end; ++m) {
      macros.insert((*m)[1].str());
    }
    for (const auto& name : names) text += "#define " + name + " " + name + suffix + "\n";
    text += source + "\n";
    for (const auto& name : macros) text += "#undef " + name + "\n";
    for (const auto& name : names) text += "#undef " + name + "\n";
    kernels.push_back(specs[i].kernel_name() + suffix);
  }
  return text;
}

// --together: N programs of `family` built one by one, then as one program, alternately, twice
// (each phase's programs tagged anew, so none reuses what another compiled).
void together_builds(const tcl::DeviceInfo& device, std::size_t n, const std::string& family) {
  std::vector<tcl::KernelSpec> all;
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (auto& [name, spec] : ops::matmul_kernels(tunekit::DType::f32)) {
    if (name.starts_with(family + "[") && spec.problem().empty() &&
        seen.insert(spec.build_options()).second) {
      all.push_back(spec);
      names.push_back(name);
    }
  }
  n = std::min(n, all.size());
  std::vector<tcl::KernelSpec> specs;
  for (std::size_t i = 0; i < n; ++i) {
    specs.push_back(all[i * all.size() / n]);
    std::printf("  %s\n", names[i * all.size() / n].c_str());
  }
  if (specs.empty()) throw std::invalid_argument("no programs of the family " + family);
  const ::cl::Context context = make_context(device);
  const std::string run = std::to_string(std::random_device{}());
  int phase = 0;
  for (int round = 0; round < 2; ++round) {
    const std::string tag = "-DBENCH_RUN=" + run + " -DBENCH_PHASE=";
    tcl::ProgramCache one_by_one(context, device.device, device.device_name);
    const double apart = build_all(tagged(specs, tag + std::to_string(phase++)), 1,
                                   [&](std::size_t) -> tcl::ProgramCache& { return one_by_one; });
    line("one by one", n, apart, 0);
    std::vector<std::string> kernels;
    const auto text = together_text(specs, kernels);
    tcl::ProgramCache joined(context, device.device, device.device_name);
    const auto start = Clock::now();
    const auto program = joined.program(tcl::KernelSpec::from_text(
        text, "-cl-mad-enable " + tag + std::to_string(phase++), kernels.front(), "together"));
    const double together = seconds_since(start);
    std::size_t made = 0;
    for (const auto& kernel : kernels) {
      cl_int code = CL_SUCCESS;
      ::cl::Kernel k(program, kernel.c_str(), &code);
      made += code == CL_SUCCESS;
    }
    line(("as one program (" + std::to_string(made) + " kernels made)").c_str(), n, together,
         apart);
  }
}

// One matmul call's wall time (enqueue to finish).
double timed_call(const std::string& name, tcl::Client& client, const ops::DeviceMatrix& a,
                  const ops::DeviceMatrix& b, ops::DeviceMatrix& c) {
  const auto start = Clock::now();
  ops::matmul_with(name, client, a, b, c);
  client.finish();
  return seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  constexpr char usage[] =
      "usage: bench_builds [--programs N] [--threads T] [--device SELECTOR] [--candidate NAME]\n"
      "       bench_builds --per-family N [--families A,B,...] [--device SELECTOR]\n"
      "       bench_builds --names FILE [--device SELECTOR]\n"
      "       bench_builds --together N [--families FAMILY] [--device SELECTOR]\n";
  if (tunekit::bench::asks_for_help(argc, argv)) return std::fputs(usage, stdout) < 0;
  std::size_t programs = 16;
  std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
  std::string selector;
  std::string candidate;
  std::size_t per_family = 0;
  std::string only_families;
  std::set<std::string> names;
  std::size_t together = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--programs" && i + 1 < argc) {
      programs = tunekit::bench::unsigned_argument("bench_builds", arg, argv[++i], 1, 100000);
    } else if (arg == "--threads" && i + 1 < argc) {
      threads = tunekit::bench::unsigned_argument("bench_builds", arg, argv[++i], 1, 256);
    } else if (arg == "--device" && i + 1 < argc) {
      selector = argv[++i];
    } else if (arg == "--candidate" && i + 1 < argc) {
      candidate = argv[++i];
    } else if (arg == "--per-family" && i + 1 < argc) {
      per_family = tunekit::bench::unsigned_argument("bench_builds", arg, argv[++i], 1, 100000);
    } else if (arg == "--together" && i + 1 < argc) {
      together = tunekit::bench::unsigned_argument("bench_builds", arg, argv[++i], 1, 1000);
    } else if (arg == "--families" && i + 1 < argc) {
      only_families = argv[++i];
    } else if (arg == "--names" && i + 1 < argc) {
      std::ifstream file(argv[++i]);
      for (std::string name; std::getline(file, name);) {
        if (!name.empty()) names.insert(name);
      }
      if (names.empty()) {
        std::fprintf(stderr, "bench_builds: no names in %s\n", argv[i]);
        return 2;
      }
    } else {
      if (i + 1 == argc && argv[i][0] == '-')  // the last argument: a flag whose value is missing?
        std::fprintf(stderr, "bench_builds: %.200s: no such option, or its value is missing\n",
                     argv[i]);
      std::fputs(usage, stderr);
      return 2;
    }
  }
  try {
    const tcl::DeviceInfo device = tcl::select_device(selector);
    std::printf("device: %s\nidentity: %s\n", device.describe().c_str(), device.identity().c_str());
    std::printf("POCL_KERNEL_CACHE=%s CUDA_CACHE_DISABLE=%s\n",
                std::getenv("POCL_KERNEL_CACHE") ? std::getenv("POCL_KERNEL_CACHE") : "(unset)",
                std::getenv("CUDA_CACHE_DISABLE") ? std::getenv("CUDA_CACHE_DISABLE") : "(unset)");
    if (together > 0) {
      together_builds(device, together, only_families.empty() ? "staged" : only_families);
      return 0;
    }
    if (per_family > 0 || !names.empty()) {
      per_family_builds(device, per_family, only_families, names);
      return 0;
    }

    // N distinct programs of the blocked family, spread over its space.
    std::vector<std::pair<std::string, tcl::KernelSpec>> blocked;
    std::set<std::string> seen;
    for (auto& [name, spec] : ops::matmul_kernels(tunekit::DType::f32)) {
      if (name.starts_with("blocked[") && seen.insert(spec.build_options()).second) {
        blocked.emplace_back(name, spec);
      }
    }
    programs = std::min(programs, blocked.size());
    std::vector<tcl::KernelSpec> specs;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < programs; ++i) {
      const auto& pick = blocked[i * blocked.size() / programs];
      names.push_back(pick.first);
      specs.push_back(pick.second);
    }
    std::printf("%zu of matmul's %zu blocked programs, %zu threads\n\n", programs, blocked.size(),
                threads);
    std::fflush(stdout);
    const std::string run = std::to_string(std::random_device{}());
    const auto phase = [&](const char* name) {
      return "-DBENCH_RUN=" + run + " -DBENCH_PHASE_" + name;
    };

    const ::cl::Context shared = make_context(device);
    tcl::ProgramCache serial_cache(shared, device.device, device.device_name);
    const double serial =
        build_all(tagged(specs, phase("serial")), 1,
                  [&](std::size_t) -> tcl::ProgramCache& { return serial_cache; });
    line("serial, one context", programs, serial, 0);

    tcl::ProgramCache one_context(shared, device.device, device.device_name);
    line(("T threads, one context (T=" + std::to_string(threads) + ")").c_str(), programs,
         build_all(tagged(specs, phase("one")), threads,
                   [&](std::size_t) -> tcl::ProgramCache& { return one_context; }),
         serial);

    std::vector<std::unique_ptr<tcl::ProgramCache>> per_thread;
    for (std::size_t t = 0; t < threads; ++t) {
      per_thread.push_back(std::make_unique<tcl::ProgramCache>(make_context(device), device.device,
                                                               device.device_name));
    }
    line(("T threads, T contexts (T=" + std::to_string(threads) + ")").c_str(), programs,
         build_all(tagged(specs, phase("many")), threads,
                   [&](std::size_t t) -> tcl::ProgramCache& { return *per_thread[t]; }),
         serial);

    // Binaries: compiled (and stored) once, then loaded in a fresh context.
    char pattern[] = "/tmp/tunekit-bench-builds-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    const fs::path dir = pattern;
    const auto binaries = std::make_shared<const tcl::ProgramBinaries>(dir);
    const auto stored_specs = tagged(specs, phase("binary"));
    tcl::ProgramCache storing(make_context(device), device.device, device.device_name,
                              device.identity(), binaries);
    line("serial, storing binaries", programs,
         build_all(stored_specs, 1, [&](std::size_t) -> tcl::ProgramCache& { return storing; }),
         serial);
    std::printf("  stored: %ju bytes in %zu files\n", binaries->usage().bytes,
                binaries->usage().files);
    tcl::ProgramCache loading(make_context(device), device.device, device.device_name,
                              device.identity(), binaries);
    line("serial, loaded from binaries", programs,
         build_all(stored_specs, 1, [&](std::size_t) -> tcl::ProgramCache& { return loading; }),
         serial);
    tcl::ProgramCache loading_threads(make_context(device), device.device, device.device_name,
                                      device.identity(), binaries);
    line("T threads, loaded from binaries", programs,
         build_all(stored_specs, threads,
                   [&](std::size_t) -> tcl::ProgramCache& { return loading_threads; }),
         serial);
    std::printf("  (compiled from source: %zu, loaded: %zu)\n\n",
                storing.builds() + loading.builds() + loading_threads.builds(),
                loading.binary_loads() + loading_threads.binary_loads());

    // First launches: a program built from source, then the same one loaded from its binary in
    // new clients (the binary stored right after the build, as tunekit stores it).
    tunekit::Settings settings = tunekit::global_settings();
    settings.persistent_cache = true;
    const std::string name = candidate.empty() ? names.front() : candidate;
    const std::size_t n = 256;
    const auto all = ops::matmul_kernels(tunekit::DType::f32);
    const tcl::KernelSpec* first_spec = nullptr;
    for (const auto& [other, spec] : all) {
      if (other == name) first_spec = &spec;
    }
    if (first_spec == nullptr) throw std::invalid_argument("no matmul candidate '" + name + "'");
    // One client per line, on a fresh context; `store`: keep() the program (store its binary)
    // before the first call; `after(client)` runs after the calls.
    const auto first_launch = [&](const char* what, const fs::path& cache, bool store,
                                  const std::function<void(tcl::Client&)>& after = nullptr) {
      settings.cache_dir = cache;
      tunekit::set_global_settings(settings);
      tcl::Client client(device);
      const auto a = ops::random_matrix(client.context(), n, n, tunekit::DType::f32, 1);
      const auto b = ops::random_matrix(client.context(), n, n, tunekit::DType::f32, 2);
      auto c = ops::random_matrix(client.context(), n, n, tunekit::DType::f32, 3);
      auto start = Clock::now();
      (void)client.program(*first_spec);
      const double build = seconds_since(start);
      start = Clock::now();
      if (store) client.programs().keep(*first_spec);
      const double stored = seconds_since(start);
      const double first = timed_call(name, client, a, b, c);
      std::vector<double> later;
      for (int i = 0; i < 15; ++i) later.push_back(timed_call(name, client, a, b, c));
      std::nth_element(later.begin(), later.begin() + 7, later.end());
      std::printf(
          "%-40s program %7.1f ms  stored %7.1f ms  first call %7.1f ms  later calls"
          " %7.2f ms (median of 15)  (compiled %zu, loaded %zu)\n",
          what, 1e3 * build, 1e3 * stored, 1e3 * first, 1e3 * later[7], client.programs().builds(),
          client.programs().binary_loads());
      std::fflush(stdout);
      if (after) after(client);
    };
    std::printf("first launches of %s at %zux%zux%zu:\n", name.c_str(), n, n, n);
    first_launch("compiled from source", dir / "none", false, [&](tcl::Client& client) {
      // The binary as the driver gives it after launches.
      const auto program = client.program(*first_spec);
      std::size_t size = 0;
      clGetProgramInfo(program(), CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
      std::vector<unsigned char> binary(size);
      unsigned char* data = binary.data();
      clGetProgramInfo(program(), CL_PROGRAM_BINARIES, sizeof data, &data, nullptr);
      tcl::ProgramBinaries(dir / "after")
          .save({device.identity(), first_spec->source(), first_spec->build_options()}, binary);
    });
    first_launch("compiled, binary stored before the call", dir / "kept", true);
    first_launch("loaded from that binary", dir / "kept", false);
    first_launch("loaded from that binary again", dir / "kept", false);
    first_launch("loaded from a binary taken after calls", dir / "after", false);
    const auto kept = tcl::ProgramBinaries(dir / "kept").usage();
    const auto taken = tcl::ProgramBinaries(dir / "after").usage();
    std::printf("  binary files: %ju bytes stored before the first call, %ju taken after calls\n",
                kept.bytes, taken.bytes);
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_builds: %s\n", e.what());
    return 1;
  }
  return 0;
}
