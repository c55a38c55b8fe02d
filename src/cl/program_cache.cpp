// ProgramCache: one build per (source, options), builds of different programs in parallel, and
// build failures kept with their logs.
#include "tunekit/cl/program_cache.hpp"

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "compiler_chatter.hpp"
#include "kernel_file.hpp"
#include "ptx_sm90a.hpp"
#include "tunekit/cl/errors.hpp"
#include "tunekit/cl/program_binaries.hpp"
#include "tunekit/stable_hash.hpp"

namespace tunekit::cl {

namespace {

// A program binary as the driver gives it (one device per program: one binary). The driver's
// own binary of a program it just built, bounded anyway (ProgramBinaries::max_binary_bytes):
// larger is no real binary (nor PTX), and its bytes are not read.
struct DriverBinary {
  cl_int code = CL_SUCCESS;          // of the first query that failed
  std::size_t size = 0;              // what the driver reported
  std::vector<unsigned char> bytes;  // empty unless code is CL_SUCCESS and 0 < size <= the max
};

DriverBinary binary_of(const ::cl::Program& program) {
  DriverBinary binary;
  binary.code = clGetProgramInfo(program(), CL_PROGRAM_BINARY_SIZES, sizeof binary.size,
                                 &binary.size, nullptr);
  if (binary.code != CL_SUCCESS || binary.size == 0 ||
      binary.size > ProgramBinaries::max_binary_bytes) {
    return binary;
  }
  binary.bytes.resize(binary.size);
  unsigned char* data = binary.bytes.data();
  binary.code = clGetProgramInfo(program(), CL_PROGRAM_BINARIES, sizeof data, &data, nullptr);
  if (binary.code != CL_SUCCESS) binary.bytes.clear();
  return binary;
}

// The program built again from its PTX raised to sm_90a (ptx_sm90a_option).
::cl::Program raised_to_sm90a(const ::cl::Context& context, const ::cl::Device& device,
                              const ::cl::Program& built, std::string_view options,
                              const std::string& where) {
  const DriverBinary binary = binary_of(built);
  check(binary.code, [&] { return "reading the PTX of " + where; });
  if (binary.bytes.empty()) {
    throw AutotuneError(ErrorKind::build, "raising " + where + " to sm_90a: the driver gave a " +
                                              std::to_string(binary.size) + "-byte binary");
  }
  const std::string raised = detail::raise_ptx_to_sm90a(
      std::string_view(reinterpret_cast<const char*>(binary.bytes.data()), binary.bytes.size()));
  cl_int code = CL_SUCCESS;
  const auto* bytes = reinterpret_cast<const unsigned char*>(raised.data());
  const std::size_t length = raised.size();
  cl_device_id id = device();
  cl_int status = CL_SUCCESS;
  cl_program raw = clCreateProgramWithBinary(context(), 1, &id, &length, &bytes, &status, &code);
  if (code == CL_SUCCESS) code = status;
  if (code != CL_SUCCESS) {
    if (raw != nullptr) clReleaseProgram(raw);
    check(code, [&] { return "loading the PTX of " + where + " raised to sm_90a"; });
  }
  ::cl::Program program(raw);  // takes ownership
  code = program.build(std::vector<::cl::Device>{device}, std::string(options).c_str());
  if (code != CL_SUCCESS) {
    std::string log;
    program.getBuildInfo(device, CL_PROGRAM_BUILD_LOG, &log);
    throw AutotuneError(error_kind(code), "building " + where + " raised to sm_90a failed: " +
                                              error_name(code) + "; build log:\n" + log);
  }
  return program;
}

/// The name of the empty kernel every program is compiled with: the hash of its source and
/// options. A binary proves it is this program's by holding it (a binary of another program,
/// well-formed and under this program's file name, does not).
std::string stamp_kernel(std::string_view source, std::string_view options) {
  char name[40];
  std::snprintf(name, sizeof name, "tunekit_program_%016" PRIx64,
                stable_hash(std::string(source) + '\0' + std::string(options)));
  return name;
}

/// Whether `names` (CL_PROGRAM_KERNEL_NAMES: "a;b;c") holds `name`.
bool holds_kernel(std::string_view names, std::string_view name) {
  while (!names.empty()) {
    const auto end = std::min(names.find(';'), names.size());
    if (names.substr(0, end) == name) return true;
    names.remove_prefix(std::min(end + 1, names.size()));
  }
  return false;
}

}  // namespace

// One program's state. Its own mutex makes concurrent requests for it wait for a single build,
// while requests for other programs go ahead.
struct ProgramCache::Entry {
  std::mutex mutex;
  bool done = false;
  ::cl::Program program;
  std::optional<AutotuneError> failure;
  bool stored = false;  // its binary is on disk (loaded from there, or saved)
};

struct ProgramCache::Table {
  // source_hash: the source's stable_hash, whichever overload of program() was asked (a
  // KernelSpec carries it, raw text is hashed here), so that the same text is one program.
  struct Key {
    std::uint64_t source_hash;
    std::size_t source_size;  // with the hash: a collision would also need equal lengths
    std::string options;
  };
  // What a lookup compares: a Key without owning its options, so that a hit allocates nothing.
  struct KeyView {
    std::uint64_t source_hash;
    std::size_t source_size;
    std::string_view options;
    KeyView(const Key& key)  // NOLINT(google-explicit-constructor): transparent lookup
        : source_hash(key.source_hash), source_size(key.source_size), options(key.options) {}
    KeyView(std::uint64_t hash, std::size_t size, std::string_view opts)
        : source_hash(hash), source_size(size), options(opts) {}
  };
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(KeyView key) const noexcept {
      return key.source_hash ^ (std::hash<std::string_view>{}(key.options) * 0x9e3779b97f4a7c15ull);
    }
  };
  struct KeyEqual {
    using is_transparent = void;
    bool operator()(KeyView a, KeyView b) const noexcept {
      return a.source_hash == b.source_hash && a.source_size == b.source_size &&
             a.options == b.options;
    }
  };

  mutable std::mutex mutex;  // guards the maps only: builds run outside it, in parallel
  std::unordered_map<Key, std::shared_ptr<Entry>, KeyHash, KeyEqual> programs;
  // source_of(): each distinct source once (by its hash), and the source of each program made.
  std::unordered_map<std::uint64_t, std::shared_ptr<const std::string>> sources;
  std::unordered_map<cl_program, std::shared_ptr<const std::string>> source_of_program;
  std::atomic<std::size_t> builds{0};
  std::atomic<std::size_t> binary_loads{0};
};

ProgramCache::ProgramCache(::cl::Context context, ::cl::Device device, std::string device_name)
    : context_(std::move(context)),
      device_(std::move(device)),
      device_name_(std::move(device_name)),
      table_(std::make_unique<Table>()) {}

ProgramCache::ProgramCache(::cl::Context context, ::cl::Device device, std::string device_name,
                           std::string device_identity,
                           std::shared_ptr<const ProgramBinaries> binaries, bool store_when_built)
    : context_(std::move(context)),
      device_(std::move(device)),
      device_name_(std::move(device_name)),
      device_identity_(std::move(device_identity)),
      binaries_(std::move(binaries)),
      store_when_built_(store_when_built),
      table_(std::make_unique<Table>()) {}

ProgramCache::~ProgramCache() = default;

std::size_t ProgramCache::builds() const noexcept {
  return table_->builds.load(std::memory_order_relaxed);
}

std::size_t ProgramCache::binary_loads() const noexcept {
  return table_->binary_loads.load(std::memory_order_relaxed);
}

namespace {
// A spec whose file could not be read fails the candidate that builds it, and nothing else.
void check_available(const KernelSpec& spec) {
  if (!spec.problem().empty()) throw AutotuneError(ErrorKind::build, spec.problem());
}
}  // namespace

::cl::Program ProgramCache::program(const KernelSpec& spec) {
  check_available(spec);
  return program(spec.source_hash(), spec.source(), spec.build_options(), spec.origin(),
                 store_when_built_);
}

void ProgramCache::keep(const KernelSpec& spec) {
  check_available(spec);
  (void)program(spec.source_hash(), spec.source(), spec.build_options(), spec.origin(), true);
}

::cl::Program ProgramCache::program(std::string_view source, std::string_view options,
                                    std::string_view origin) {
  return program(stable_hash(source), source, options, origin, store_when_built_);
}

::cl::Program ProgramCache::program(std::uint64_t source_hash, std::string_view source,
                                    std::string_view options, std::string_view origin, bool store) {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard lock(table_->mutex);
    auto& programs = table_->programs;
    auto found = programs.find(Table::KeyView(source_hash, source.size(), options));
    if (found == programs.end()) {
      found = programs
                  .emplace(Table::Key{source_hash, source.size(), std::string(options)},
                           std::make_shared<Entry>())
                  .first;
    }
    entry = found->second;
  }
  std::lock_guard lock(entry->mutex);
  if (!entry->done) {
    try {
      entry->program = build(source, options, origin, entry->stored);
      remember_source(source_hash, source, entry->program);
    } catch (const AutotuneError& error) {
      entry->failure = error;
    }
    entry->done = true;
  }
  if (entry->failure) throw *entry->failure;
  if (store && binaries_ && !entry->stored) {
    save_binary(ProgramKey{device_identity_, source, options}, entry->program);
    entry->stored = true;
  }
  return entry->program;
}

::cl::Program ProgramCache::build(std::string_view source, std::string_view options,
                                  std::string_view origin, bool& loaded) {
  const std::string where =
      std::string(origin) + " with options '" + std::string(options) + "' on " + device_name_;
  const ProgramKey key{device_identity_, source, options};
  if (binaries_) {
    if (auto program = load_binary(key, where)) {
      loaded = true;
      return *program;
    }
  }
  // Instructions hidden behind the marker stay PTX comments unless the program is raised: the
  // kernel would build and compute something else.
  if (source.find(ptx_sm90a_marker) != std::string_view::npos &&
      !detail::wants_ptx_sm90a(options)) {
    throw AutotuneError(ErrorKind::build, "building " + where + ": its source hides instructions " +
                                              "behind " + std::string(ptx_sm90a_marker) +
                                              ", but its options do not name " +
                                              std::string(ptx_sm90a_option) +
                                              "; without it they would stay comments");
  }
  table_->builds.fetch_add(1, std::memory_order_relaxed);
  cl_int code = CL_SUCCESS;
  const std::string compiled = detail::named_source(source, origin) + "\n__kernel void " +
                               stamp_kernel(source, options) + "(void) {}\n";
  ::cl::Program program(context_, compiled, false, &code);
  check(code, [&] { return "creating the program " + where; });
  {
    const detail::CompilerChatterGuard aside(detail::chatty_compiler(
        ::cl::Platform(device_.getInfo<CL_DEVICE_PLATFORM>()).getInfo<CL_PLATFORM_NAME>()));
    code = program.build(std::vector<::cl::Device>{device_}, std::string(options).c_str());
  }
  if (code != CL_SUCCESS) {
    std::string log;
    program.getBuildInfo(device_, CL_PROGRAM_BUILD_LOG, &log);
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    log = detail::with_source_lines(compiled, std::move(log));  // the user's files and lines
    // The first compiler error leads (a table shows the first line), then the whole log.
    const std::string_view first = detail::first_error(log);
    throw AutotuneError(error_kind(code), (first.empty() ? "" : std::string(first) + "\n") +
                                              "building " + where + " failed: " + error_name(code) +
                                              (log.empty() ? std::string(" (empty build log)")
                                                           : "; build log:\n" + log));
  }
  if (detail::wants_ptx_sm90a(options)) {
    return raised_to_sm90a(context_, device_, program, options, where);
  }
  return program;
}

// The program from its stored binary, or nothing (none stored, or the driver rejected it: then
// the file is removed and the caller compiles the source).
std::optional<::cl::Program> ProgramCache::load_binary(const ProgramKey& key,
                                                       const std::string& where) {
  auto stored = binaries_->load(key);
  if (!stored) return std::nullopt;
  cl_int code = CL_SUCCESS;
  cl_int status = CL_SUCCESS;
  const unsigned char* bytes = stored->binary.data();
  const std::size_t size = stored->binary.size();
  cl_device_id device = device_();
  cl_program raw = clCreateProgramWithBinary(context_(), 1, &device, &size, &bytes, &status, &code);
  if (code != CL_SUCCESS || status != CL_SUCCESS) {
    if (raw != nullptr) clReleaseProgram(raw);
    binaries_->discard(key, "the driver rejected it for " + where + ": " +
                                error_name(code != CL_SUCCESS ? code : status));
    return std::nullopt;
  }
  ::cl::Program program(raw);  // takes ownership
  code = program.build(std::vector<::cl::Device>{device_}, std::string(key.options).c_str());
  if (code != CL_SUCCESS) {
    // Some drivers (NVIDIA) accept any bytes here and reject them only when building.
    binaries_->discard(
        key, "the driver rejected it when building it for " + where + ": " + error_name(code));
    return std::nullopt;
  }
  std::string names;
  (void)program.getInfo(CL_PROGRAM_KERNEL_NAMES, &names);
  while (!names.empty() && names.back() == '\0') names.pop_back();
  if (!holds_kernel(names, stamp_kernel(key.source, key.options))) {
    binaries_->discard(key, "it is another program's binary (its kernels: " + names.substr(0, 200) +
                                "), not that of " + where);
    return std::nullopt;
  }
  binaries_->loaded_fine(key, *stored);
  table_->binary_loads.fetch_add(1, std::memory_order_relaxed);
  return program;
}

// Stores the compiled program's binary; a driver that gives none (or an error) is no failure.
void ProgramCache::save_binary(const ProgramKey& key, const ::cl::Program& program) {
  if (!binaries_->storable(key)) return;  // before the driver copies the binary out
  const DriverBinary binary = binary_of(program);
  if (!binary.bytes.empty()) binaries_->save(key, binary.bytes);
}

::cl::Kernel ProgramCache::kernel(const KernelSpec& spec) {
  ::cl::Program built = program(spec);
  cl_int code = CL_SUCCESS;
  ::cl::Kernel kernel(built, spec.kernel_name().c_str(), &code);
  if (code == CL_INVALID_KERNEL_NAME) {
    std::string names;
    built.getInfo(CL_PROGRAM_KERNEL_NAMES, &names);
    throw AutotuneError(ErrorKind::build, "no kernel '" + spec.kernel_name() + "' in " +
                                              spec.origin() + " (its kernels: " + names + ")");
  }
  check(code, [&] { return "creating kernel '" + spec.kernel_name() + "' of " + spec.origin(); });
  return kernel;
}

std::size_t ProgramCache::size() const {
  std::lock_guard lock(table_->mutex);
  return table_->programs.size();
}

void ProgramCache::clear() {
  std::lock_guard lock(table_->mutex);
  table_->programs.clear();
  table_->sources.clear();
  table_->source_of_program.clear();
}

void ProgramCache::remember_source(std::uint64_t source_hash, std::string_view source,
                                   const ::cl::Program& program) {
  std::lock_guard lock(table_->mutex);
  auto& text = table_->sources[source_hash];
  if (!text || *text != source) text = std::make_shared<const std::string>(source);
  table_->source_of_program[program()] = text;
}

std::string ProgramCache::source_of(const ::cl::Program& program) const {
  std::lock_guard lock(table_->mutex);
  const auto found = table_->source_of_program.find(program());
  return found == table_->source_of_program.end() ? std::string() : *found->second;
}

}  // namespace tunekit::cl
