// ProgramCache: one build per (source, options), builds of different programs in parallel (in
// helper processes where it has them), and build failures kept with their logs.
#include "tunekit/cl/program_cache.hpp"

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <variant>
#include <vector>

#include "build_processes.hpp"
#include "program_build.hpp"
#include "tunekit/cl/errors.hpp"
#include "tunekit/cl/program_binaries.hpp"
#include "tunekit/engine/persistence.hpp"  // of_the_moment
#include "tunekit/stable_hash.hpp"

namespace tunekit::cl {

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
  std::atomic<std::size_t> helper_builds{0};
};

ProgramCache::ProgramCache(::cl::Context context, ::cl::Device device, std::string device_name)
    : context_(std::move(context)),
      device_(std::move(device)),
      device_name_(std::move(device_name)),
      table_(std::make_unique<Table>()) {}

ProgramCache::ProgramCache(::cl::Context context, ::cl::Device device, std::string device_name,
                           std::string device_identity,
                           std::shared_ptr<const ProgramBinaries> binaries, bool store_when_built,
                           std::shared_ptr<BuildProcesses> helpers)
    : context_(std::move(context)),
      device_(std::move(device)),
      device_name_(std::move(device_name)),
      device_identity_(std::move(device_identity)),
      binaries_(std::move(binaries)),
      store_when_built_(store_when_built),
      helpers_(std::move(helpers)),
      table_(std::make_unique<Table>()) {}

ProgramCache::~ProgramCache() = default;

std::size_t ProgramCache::builds() const noexcept {
  return table_->builds.load(std::memory_order_relaxed);
}

std::size_t ProgramCache::binary_loads() const noexcept {
  return table_->binary_loads.load(std::memory_order_relaxed);
}

std::size_t ProgramCache::helper_builds() const noexcept {
  return table_->helper_builds.load(std::memory_order_relaxed);
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
      // A failure of the moment (memory, resources, the device) is not the program's: the next
      // request builds it again, as the tuner retries the key after its back-off.
      if (tunekit::detail::of_the_moment(error)) throw;
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
  const ProgramKey key{device_identity_, source, options};
  if (binaries_) {
    if (auto program = load_binary(key, origin)) {
      loaded = true;
      return *program;
    }
  }
  // A source refused before any compile is no build (builds() counts compiles started).
  detail::check_sm90a_marker(source, options,
                             detail::program_description(origin, options, device_name_));
  table_->builds.fetch_add(1, std::memory_order_relaxed);
  if (helpers_) {
    if (auto program = build_in_helper(source, options, origin)) return *program;
  }
  return detail::compile_program(context_, device_, device_name_, source, options, origin);
}

// A helper process's build (BuildProcesses), or nothing when no helper answered, or its binary
// is not this program's: then the caller compiles here. A build error is thrown as here.
std::optional<::cl::Program> ProgramCache::build_in_helper(std::string_view source,
                                                           std::string_view options,
                                                           std::string_view origin) {
  auto reply = helpers_->build(source, options, origin);
  if (!reply) return std::nullopt;
  if (reply->failure) throw *reply->failure;
  auto made = detail::program_from_binary(
      context_, device_, reinterpret_cast<const unsigned char*>(reply->binary.data()),
      reply->binary.size(), source, options);
  if (auto* refused = std::get_if<std::string>(&made)) {
    helpers_->binary_refused("the binary of " +
                             detail::program_description(origin, options, device_name_) + ": " +
                             *refused);
    return std::nullopt;
  }
  helpers_->binary_used();
  table_->helper_builds.fetch_add(1, std::memory_order_relaxed);
  return std::get<::cl::Program>(std::move(made));
}

// The program from its stored binary, or nothing (none stored, or the driver rejected it: then
// the file is removed and the caller compiles the source).
std::optional<::cl::Program> ProgramCache::load_binary(const ProgramKey& key,
                                                       std::string_view origin) {
  auto stored = binaries_->load(key);
  if (!stored) return std::nullopt;
  auto made = detail::program_from_binary(context_, device_, stored->binary.data(),
                                          stored->binary.size(), key.source, key.options);
  if (auto* refused = std::get_if<std::string>(&made)) {
    binaries_->discard(
        key,
        *refused + " (" + detail::program_description(origin, key.options, device_name_) + ")");
    return std::nullopt;
  }
  binaries_->loaded_fine(key, *stored);
  table_->binary_loads.fetch_add(1, std::memory_order_relaxed);
  return std::get<::cl::Program>(std::move(made));
}

// Stores the compiled program's binary; a driver that gives none (or an error) is no failure.
void ProgramCache::save_binary(const ProgramKey& key, const ::cl::Program& program) {
  if (!binaries_->storable(key)) return;  // before the driver copies the binary out
  const detail::DriverBinary binary = detail::binary_of(program);
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
