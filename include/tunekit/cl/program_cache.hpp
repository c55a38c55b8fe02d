// ProgramCache: every OpenCL program a client uses, built once per (source, build options) even
// when several threads ask for it together; a failed build is remembered with its log (not a
// failure of the moment: memory, resources, the device, which the next request retries). With
// ProgramBinaries, a program compiled by an earlier process is loaded from its binary instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tunekit/cl/kernel_spec.hpp"
#include "tunekit/cl/opencl.hpp"

namespace tunekit::cl {

/// A build option (as a whole word) that asks the cache to raise the program to sm_90a: NVIDIA's
/// OpenCL compiles for `.target sm_90`, where ptxas refuses Hopper's arch-specific instructions
/// (wgmma, setmaxnreg), and no build option changes it. A kernel writes those instructions in
/// inline PTX behind ptx_sm90a_marker (a PTX comment: the driver's build succeeds); the cache then
/// takes the driver's PTX, removes every marker, sets `.target sm_90a` and builds that PTX. Only
/// for NVIDIA devices of compute capability 9.0 (an sm_90a program runs on nothing else); on any
/// other device the build fails with an AutotuneError(build) saying so. The stored binary is the
/// raised program's.
inline constexpr std::string_view ptx_sm90a_option = "-DTUNEKIT_PTX_SM90A=1";
/// The marker in front of sm_90a instructions in a kernel's inline PTX (`asm volatile("//sm_90a:"
/// "wgmma.fence.sync.aligned;")`: one instruction per line, the marker hides the rest of it).
inline constexpr std::string_view ptx_sm90a_marker = "//sm_90a:";

class ProgramBinaries;  // tunekit/cl/program_binaries.hpp
class BuildProcesses;   // src/cl/build_processes.hpp: helper processes that compile
struct ProgramKey;

/// The programs of one context and device, keyed by (hash of the source, build options).
class ProgramCache {
 public:
  /// `device_name` appears in build errors.
  ProgramCache(::cl::Context context, ::cl::Device device, std::string device_name);
  /// Also loads a program from `binaries` (under `device_identity`, DeviceInfo::identity())
  /// before compiling its source, and stores there every program it compiles, or with
  /// `store_when_built` false only those keep() names (storing costs PoCL more than a build).
  /// With `helpers`, a program is compiled in one of those processes and made here from its
  /// binary (where one process builds one program at a time, several build at once); when none
  /// answers, it is compiled here.
  ProgramCache(::cl::Context context, ::cl::Device device, std::string device_name,
               std::string device_identity, std::shared_ptr<const ProgramBinaries> binaries,
               bool store_when_built = true, std::shared_ptr<BuildProcesses> helpers = nullptr);
  ProgramCache(const ProgramCache&) = delete;
  ProgramCache& operator=(const ProgramCache&) = delete;
  ~ProgramCache();

  /// The program of `spec`, built on first request. Throws AutotuneError(build) with the full
  /// build log when it does not compile (and again on later requests, without rebuilding).
  ::cl::Program program(const KernelSpec& spec);
  /// The program built from `source` with `options`; `origin` names it in errors.
  ::cl::Program program(std::string_view source, std::string_view options,
                        std::string_view origin = "<inline source>");

  /// Builds `spec`'s program if needed and stores its binary if it is not on disk yet (e.g. a
  /// tuning's winner, on a device where not every program is stored). Throws as program().
  void keep(const KernelSpec& spec);

  /// A new kernel object for `spec` (objects are not shared: setting arguments is not
  /// thread-safe). Throws AutotuneError(build) when the program has no such kernel.
  ::cl::Kernel kernel(const KernelSpec& spec);

  /// How many builds from source were started (successful or not): a cache hit adds nothing,
  /// nor does a program loaded from its stored binary.
  std::size_t builds() const noexcept;
  /// How many programs were loaded from stored binaries (ProgramBinaries).
  std::size_t binary_loads() const noexcept;
  /// How many of builds() a helper process compiled (the rest were compiled here).
  std::size_t helper_builds() const noexcept;
  /// How many programs (built or failed) the cache holds.
  std::size_t size() const;
  /// Forgets every program (the next request builds again).
  void clear();
  /// The source text `program` was made from (a program this cache handed out), or empty. Read
  /// on the error path only: a launch refused for an unset argument names it from the source
  /// where the driver keeps no argument names.
  std::string source_of(const ::cl::Program& program) const;

 private:
  // The programs by (source, options), their sources, the counters and the mutex that guards
  // them (program_cache.cpp): out of this header, so that it costs a user's file no <mutex>,
  // <atomic> nor <unordered_map> (issue 28: their compile time).
  struct Table;
  struct Entry;

  ::cl::Program program(std::uint64_t source_hash, std::string_view source,
                        std::string_view options, std::string_view origin, bool store);
  ::cl::Program build(std::string_view source, std::string_view options, std::string_view origin,
                      bool& loaded);
  std::optional<::cl::Program> load_binary(const ProgramKey& key, std::string_view origin);
  std::optional<::cl::Program> build_in_helper(std::string_view source, std::string_view options,
                                               std::string_view origin);
  void remember_source(std::uint64_t source_hash, std::string_view source,
                       const ::cl::Program& program);
  void save_binary(const ProgramKey& key, const ::cl::Program& program);

  ::cl::Context context_;
  ::cl::Device device_;
  std::string device_name_;
  std::string device_identity_;
  std::shared_ptr<const ProgramBinaries> binaries_;  // null: nothing on disk
  bool store_when_built_ = true;
  std::shared_ptr<BuildProcesses> helpers_;  // null: every build here
  std::unique_ptr<Table> table_;
};

}  // namespace tunekit::cl
