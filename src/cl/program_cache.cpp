// ProgramCache: one build per (source, options), builds of different programs in parallel, and
// build failures kept with their logs.
#include "tunekit/cl/program_cache.hpp"

#include <functional>
#include <optional>

#include "tunekit/cl/errors.hpp"

namespace tunekit::cl {

// One program's state. Its own mutex makes concurrent requests for it wait for a single build,
// while requests for other programs go ahead.
struct ProgramCache::Entry {
  std::mutex mutex;
  bool done = false;
  ::cl::Program program;
  std::optional<AutotuneError> failure;
};

ProgramCache::ProgramCache(::cl::Context context, ::cl::Device device, std::string device_name)
    : context_(std::move(context)),
      device_(std::move(device)),
      device_name_(std::move(device_name)) {}

ProgramCache::~ProgramCache() = default;

std::size_t ProgramCache::KeyHash::operator()(KeyView key) const noexcept {
  return key.source_hash ^ (std::hash<std::string_view>{}(key.options) * 0x9e3779b97f4a7c15ull);
}

::cl::Program ProgramCache::program(const KernelSpec& spec) {
  return program(spec.source_hash(), spec.source(), spec.build_options(), spec.origin());
}

::cl::Program ProgramCache::program(std::string_view source, std::string_view options,
                                    std::string_view origin) {
  return program(std::hash<std::string_view>{}(source), source, options, origin);
}

::cl::Program ProgramCache::program(std::size_t source_hash, std::string_view source,
                                    std::string_view options, std::string_view origin) {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard lock(mutex_);
    auto found = programs_.find(KeyView(source_hash, source.size(), options));
    if (found == programs_.end()) {
      found = programs_
                  .emplace(Key{source_hash, source.size(), std::string(options)},
                           std::make_shared<Entry>())
                  .first;
    }
    entry = found->second;
  }
  std::lock_guard lock(entry->mutex);
  if (!entry->done) {
    builds_.fetch_add(1, std::memory_order_relaxed);
    try {
      entry->program = build(source, options, origin);
    } catch (const AutotuneError& error) {
      entry->failure = error;
    }
    entry->done = true;
  }
  if (entry->failure) throw *entry->failure;
  return entry->program;
}

::cl::Program ProgramCache::build(std::string_view source, std::string_view options,
                                  std::string_view origin) {
  const std::string where =
      std::string(origin) + " with options '" + std::string(options) + "' on " + device_name_;
  cl_int code = CL_SUCCESS;
  ::cl::Program program(context_, std::string(source), false, &code);
  check(code, [&] { return "creating the program " + where; });
  code = program.build(std::vector<::cl::Device>{device_}, std::string(options).c_str());
  if (code != CL_SUCCESS) {
    std::string log;
    program.getBuildInfo(device_, CL_PROGRAM_BUILD_LOG, &log);
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    throw AutotuneError(error_kind(code), "building " + where + " failed: " + error_name(code) +
                                              (log.empty() ? std::string(" (empty build log)")
                                                           : "; build log:\n" + log));
  }
  return program;
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
  std::lock_guard lock(mutex_);
  return programs_.size();
}

void ProgramCache::clear() {
  std::lock_guard lock(mutex_);
  programs_.clear();
}

}  // namespace tunekit::cl
