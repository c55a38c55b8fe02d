// Client: context and profiling queue, checked enqueues that record their events while a
// measurement runs, and measure(), the device busy time of everything a candidate enqueued.
#include "tunekit/cl/client.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

#include "../cache/private_files.hpp"  // cache_root_problem
#include "../warnings.hpp"
#include "build_processes.hpp"
#include "cache_root.hpp"
#include "command_queue.hpp"
#include "compiled_work_group.hpp"
#include "compiler_chatter.hpp"  // pocl_platform
#include "context_release.hpp"
#include "tunekit/background.hpp"
#include "tunekit/cl/profiling.hpp"
#include "tunekit/cl/program_binaries.hpp"
#include "tunekit/engine/background_queue.hpp"
#include "tunekit/log.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/settings.hpp"

namespace tunekit::cl {

namespace {

// "N bytes local memory needed by kernel 'k', the device has 49152 (for __local arguments;
// 232448 for declared __local arrays)", or one figure where both are the same: check_launch's
// and launch_failed's words for a kernel past a local-memory limit.
std::string local_memory_needed(cl_ulong bytes, const std::string& kernel,
                                const DeviceInfo& device) {
  std::string text = std::to_string(bytes) + " bytes local memory needed by kernel '" + kernel +
                     "', the device has " + std::to_string(device.local_memory);
  if (device.declared_local_memory() == device.local_memory) return text;
  return text + " (for __local arguments; " + std::to_string(device.declared_local_memory()) +
         " for declared __local arrays)";
}

std::string format_range(const ::cl::NDRange& range) {
  if (range.dimensions() == 0) return "driver's choice";
  std::string text;
  std::size_t total = 1;
  for (cl_uint d = 0; d < range.dimensions(); ++d) {
    if (d > 0) text += 'x';
    text += std::to_string(range[d]);
    total *= range[d];
  }
  if (range.dimensions() > 1) text += "=" + std::to_string(total);
  return text;
}

std::size_t volume(const ::cl::NDRange& range) {
  std::size_t total = 1;
  for (cl_uint d = 0; d < range.dimensions(); ++d) total *= range[d];
  return total;
}

::cl::Context make_context(const DeviceInfo& device) {
  // Said before anything is made: what an older platform lacks would fail later, in a call.
  if (const auto version = detail::opencl_version(device.platform_version);
      version && *version < detail::oldest_opencl) {
    throw AutotuneError(ErrorKind::device,
                        "the platform of " + printable(device.device_name, 200) + " is " +
                            printable(device.platform_version, 200) + ": tunekit needs OpenCL " +
                            std::to_string(detail::oldest_opencl.major) + "." +
                            std::to_string(detail::oldest_opencl.minor) +
                            " or later (clEnqueueFillBuffer, clGetKernelArgInfo)");
  }
  cl_int code = CL_SUCCESS;
  ::cl::Context context(device.device, nullptr, nullptr, nullptr, &code);
  check(code, [&] { return "creating a context on " + device.device_name; });
  return context;
}

::cl::CommandQueue make_queue(const ::cl::Context& context, const DeviceInfo& device) {
  cl_int code = CL_SUCCESS;
  // In order: a candidate's commands run one after another, as it enqueued them, so that their
  // intervals are its time and nothing else's.
  ::cl::CommandQueue queue =
      detail::command_queue(context, device.device, CL_QUEUE_PROFILING_ENABLE,
                            detail::has_queue_with_properties(device.platform_version), &code);
  check(code, [&] { return "creating a profiling command queue on " + device.device_name; });
  return queue;
}

// Program binaries under the result cache's directory, unless the persistent cache is off.
std::shared_ptr<const ProgramBinaries> program_binaries() {
  const auto root = client_cache_root("program binaries");
  return root ? std::make_shared<const ProgramBinaries>(*root) : nullptr;
}

// Helper processes that compile this device's programs, where Settings::build_processes asks for
// them (or, unset, detail::automatic_build_processes does), the device is a GPU of a driver other
// than PoCL's, and a helper may be run; else none (every build in this process). Only what was
// asked for is said when it is not done.
std::shared_ptr<BuildProcesses> build_processes(const DeviceInfo& device) {
  const auto& asked = global_settings().build_processes;
  const char* cuda_cache_disable = std::getenv("CUDA_CACHE_DISABLE");
  const std::size_t processes =
      asked ? std::min(*asked, max_build_processes)
            : detail::automatic_build_processes(device.nvidia && device.is_gpu(),
                                                cuda_cache_disable ? cuda_cache_disable : "",
                                                global_settings().build_thread_count());
  if (processes == 0) return nullptr;
  if (!device.is_gpu() || detail::pocl_platform(device.platform_name)) {
    // A CPU builds in parallel in one process already, and PoCL (on any device) asks a compile
    // of its own for a binary; with its kernel cache off, a helper that releases its program
    // deletes the files the program made here from its binary shares (PoCL then aborts at a
    // launch).
    warn_once("tunekit: TUNEKIT_BUILD_PROCESSES=" + std::to_string(processes) + " is not used on " +
              device.device_name + ": build helpers are for GPUs of drivers other than PoCL's; " +
              "programs are built in this process");
    return nullptr;
  }
  std::string why_not;
  auto helper = find_build_helper(why_not);
  if (!helper) {
    if (asked) {
      warn_once("tunekit: TUNEKIT_BUILD_PROCESSES=" + std::to_string(processes) +
                " asks for build helpers, but " + why_not + "; programs are built in this process");
    } else if (const char* named = std::getenv("TUNEKIT_BUILD_HELPER"); named && *named) {
      // A helper named and not usable is said, helpers asked for or not.
      warn_once("tunekit: " + why_not + "; programs are built in this process");
    } else if (global_settings().log == LogLevel::debug) {
      inform("tunekit: no build helpers on " + device.device_name + ": " + why_not +
             "; programs are built in this process\n");
    }
    return nullptr;
  }
  BuildProcessOptions options;
  options.helper = *helper;
  options.processes = processes;
  options.device_identity = device.identity();
  options.device_index = device.index;
  options.device_name = device.device_name;
  return std::make_shared<BuildProcesses>(std::move(options));
}

}  // namespace

std::optional<std::filesystem::path> client_cache_root(const char* what) {
  const Settings settings = global_settings();
  if (!settings.persistent_cache) return std::nullopt;
  try {
    std::filesystem::path root = settings.resolved_cache_dir();
    // Said in the same words as the results' store says it, so once for both.
    if (const auto problem = tunekit::detail::cache_root_problem(root)) {
      warn_once(tunekit::detail::unusable_cache_root_warning(*problem));
      return std::nullopt;
    }
    return root;
  } catch (const std::exception& e) {  // no cache directory (no HOME, say): nothing kept
    warn_once(std::string("tunekit: ") + what + " are not kept: " + e.what());
    return std::nullopt;
  }
}

struct Client::Recording {
  std::mutex measure_mutex;  // one measurement at a time per client
  std::atomic<bool> measuring{false};
  // Atomic: other threads sharing the client read it while the next measurement sets it.
  std::atomic<std::thread::id> measuring_thread;
  std::vector<cl_event> events;  // raw handles: reused capacity, released after each measure
  std::vector<detail::CommandInterval> intervals;  // their times: reused capacity too
};

namespace detail {

CommandTimes command_times(std::vector<CommandInterval>& intervals) {
  if (intervals.empty()) return {};
  std::sort(intervals.begin(), intervals.end(),
            [](const CommandInterval& a, const CommandInterval& b) { return a.start < b.start; });
  CommandTimes times;
  // One pass in order of start: `reached` is the latest end so far; each command adds the part
  // of its interval past it.
  std::uint64_t reached = intervals.front().start;
  for (const CommandInterval& interval : intervals) {
    const std::uint64_t end = std::max(interval.start, interval.end);
    times.busy += end > reached ? end - std::max(interval.start, reached) : 0;
    reached = std::max(reached, end);
  }
  times.span = reached - intervals.front().start;
  return times;
}

}  // namespace detail

std::string kernel_name(const ::cl::Kernel& kernel) {
  std::string name;
  kernel.getInfo(CL_KERNEL_FUNCTION_NAME, &name);
  while (!name.empty() && name.back() == '\0') name.pop_back();
  return name.empty() ? "?" : name;
}

::cl::Kernel make_kernel(Client& client, const KernelSpec& spec) { return client.kernel(spec); }
::cl::Program make_program(Client& client, const KernelSpec& spec) { return client.program(spec); }
void keep_program(Client& client, const KernelSpec& spec) { client.programs().keep(spec); }

Client::Client() : Client(select_device()) {}

Client::Client(std::string_view selector) : Client(select_device(selector)) {}

Client::Client(DeviceInfo device)
    : device_(std::move(device)),
      id_(device_.identity()),
      context_(make_context(device_)),
      queue_(make_queue(context_, device_)),
      // On a CPU device (PoCL) asking for a binary compiles a work-group function, ~5x a build
      // (docs/opencl.md): only the programs a tuning keeps (its winner's) are stored there.
      programs_(context_, device_.device, device_.device_name, id_.identity(), program_binaries(),
                !device_.is_cpu(), build_processes(device_)),
      profiler_(std::make_unique<Profiler>(*this)),
      recording_(std::make_unique<Recording>()) {
  recording_->events.reserve(64);
}

Client::~Client() {
  // They measure on this client (background.hpp): they get a moment to finish, then stop.
  tunekit::detail::finish_background_tunings_using(this);
  queue_.finish();  // nothing of ours may still run when the buffers and events go
  release_recorded();
  detail::context_released(context_());
}

namespace detail {
namespace {

// The hooks of caches keyed by a context. Never destroyed (a static Client may end after the
// caches' statics, whose destructors have removed their hooks by then); `running` counts the
// calls in progress, so that a removal waits for them.
struct ReleaseHooks {
  std::mutex mutex;
  std::condition_variable idle;
  std::map<std::size_t, std::function<void(cl_context)>> hooks;
  std::size_t next = 0;
  std::size_t running = 0;
};
ReleaseHooks& release_hooks() {
  static auto* hooks = new ReleaseHooks;
  return *hooks;
}

}  // namespace

std::size_t on_context_release(std::function<void(cl_context)> drop) {
  auto& all = release_hooks();
  std::lock_guard lock(all.mutex);
  all.hooks.emplace(all.next, std::move(drop));
  return all.next++;
}

void forget_context_release(std::size_t handle) {
  auto& all = release_hooks();
  std::unique_lock lock(all.mutex);
  all.idle.wait(lock, [&] { return all.running == 0; });
  all.hooks.erase(handle);
}

void context_released(cl_context context) {
  auto& all = release_hooks();
  std::vector<std::function<void(cl_context)>> hooks;
  {
    std::lock_guard lock(all.mutex);
    for (const auto& [handle, hook] : all.hooks) hooks.push_back(hook);
    ++all.running;
  }
  for (const auto& hook : hooks) {
    try {
      hook(context);
    } catch (...) {  // a cache that cannot drop its buffers keeps them: nothing else is lost
    }
  }
  {
    std::lock_guard lock(all.mutex);
    --all.running;
  }
  all.idle.notify_all();
}

}  // namespace detail

cl_event* Client::event_slot() {
  if (!recording_->measuring.load(std::memory_order_acquire)) [[likely]]
    return nullptr;
  if (recording_->measuring_thread.load(std::memory_order_relaxed) != std::this_thread::get_id()) {
    return nullptr;
  }
  recording_->events.push_back(nullptr);
  return &recording_->events.back();
}

void Client::discard_slot(cl_event* slot) noexcept {
  if (slot != nullptr) recording_->events.pop_back();
}

void Client::check_launch(const ::cl::Kernel& kernel, const ::cl::NDRange& global,
                          const ::cl::NDRange& local) const {
  if (local.dimensions() > 0) {
    const std::size_t items = volume(local);
    std::size_t kernel_max = 0;
    kernel.getWorkGroupInfo(device_.device, CL_KERNEL_WORK_GROUP_SIZE, &kernel_max);
    std::array<std::size_t, 3> compiled{}, launched{1, 1, 1};
    for (cl_uint d = 0; d < local.dimensions() && d < 3; ++d) launched[d] = local[d];
    const bool as_compiled =
        clGetKernelWorkGroupInfo(kernel(), device_.device(), CL_KERNEL_COMPILE_WORK_GROUP_SIZE,
                                 sizeof compiled, compiled.data(), nullptr) == CL_SUCCESS &&
        detail::trusts_compiled_work_group(device_.nvidia, compiled, launched);
    const std::size_t max =
        detail::work_group_limit(kernel_max, device_.max_work_group_size, as_compiled);
    if (items > max) {
      throw device_limit("work-group " + format_range(local) + " exceeds " +
                         (max < device_.max_work_group_size ? "the kernel's" : "the device's") +
                         " maximum " + std::to_string(max) + " on " + device_.device_name +
                         " (kernel '" + kernel_name(kernel) + "')");
    }
    for (cl_uint d = 0; d < local.dimensions() && d < device_.max_work_item_sizes.size(); ++d) {
      if (local[d] > device_.max_work_item_sizes[d]) {
        throw device_limit("work-group " + format_range(local) + ": dimension " +
                           std::to_string(d) + " exceeds the device's maximum " +
                           std::to_string(device_.max_work_item_sizes[d]) + " on " +
                           device_.device_name + " (kernel '" + kernel_name(kernel) + "')");
      }
    }
    for (cl_uint d = 0; d < local.dimensions() && d < global.dimensions(); ++d) {
      if (local[d] == 0 || global[d] % local[d] != 0) {
        // OpenCL 2.0+ drivers may accept non-uniform work-groups, but kernels written for
        // 1.2 (and tunekit's) assume uniform ones: refuse before the driver guesses.
        throw AutotuneError(ErrorKind::launch, "global size " + format_range(global) +
                                                   " is not a multiple of the work-group " +
                                                   format_range(local) + " (kernel '" +
                                                   kernel_name(kernel) + "')");
      }
    }
  }
  cl_ulong local_bytes = 0;
  // Static __local arrays plus the ::cl::Local arguments set so far. Which is which is not
  // known here: held to what declared arrays may take; arguments past local_memory are the
  // driver's to refuse (launch_failed then names both limits).
  if (kernel.getWorkGroupInfo(device_.device, CL_KERNEL_LOCAL_MEM_SIZE, &local_bytes) ==
          CL_SUCCESS &&
      local_bytes > device_.declared_local_memory()) {
    throw device_limit(local_memory_needed(local_bytes, kernel_name(kernel), device_) + " (" +
                       device_.device_name + ")");
  }
}

namespace {

// The parameters of kernel `name` in a program's source text, each as written ("__local float*
// tile"), comments left out; empty when it is not found. Only for messages: a launch refused
// for an unset argument names it even where the driver keeps no argument names (PoCL without
// -cl-kernel-arg-info).
std::vector<std::string> parameters_in_source(std::string source, const std::string& name) {
  for (std::size_t at = 0; (at = source.find('/', at)) != std::string::npos;) {  // no comments
    const bool line = source.compare(at, 2, "//") == 0, block = source.compare(at, 2, "/*") == 0;
    if (!line && !block) {
      ++at;
      continue;
    }
    const std::size_t end = line ? source.find('\n', at) : source.find("*/", at + 2);
    const std::size_t stop = end == std::string::npos ? source.size() : end + (line ? 0 : 2);
    source.replace(at, stop - at, " ");
  }
  const auto is_word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  for (std::size_t at = 0; (at = source.find(name, at)) != std::string::npos; at += name.size()) {
    const std::size_t after = at + name.size();
    if ((at > 0 && is_word(source[at - 1])) || (after < source.size() && is_word(source[after]))) {
      continue;
    }
    const std::size_t open = source.find_first_not_of(" \t\r\n", after);
    const std::size_t statement = source.find_last_of(";}", at);
    const std::string before =
        source.substr(statement == std::string::npos ? 0 : statement + 1,
                      at - (statement == std::string::npos ? 0 : statement + 1));
    if (open == std::string::npos || source[open] != '(' ||
        before.find("kernel") == std::string::npos) {
      continue;  // a call or another function: not the kernel's definition
    }
    std::vector<std::string> parameters(1);
    int depth = 0;
    for (std::size_t i = open + 1; i < source.size(); ++i) {
      const char c = source[i];
      if (c == ')' && depth == 0) return parameters;
      if (c == '(') ++depth;
      if (c == ')') --depth;
      if (c == ',' && depth == 0) {
        parameters.emplace_back();
      } else {
        parameters.back() += c;
      }
    }
  }
  return {};
}

// "3 'tile' (__local ...)": argument `index` of `kernel`, by its name and address space as the
// driver tells them, else as the program's source writes them.
std::string describe_argument(const ::cl::Kernel& kernel, cl_uint index,
                              const std::vector<std::string>& from_source) {
  std::string name;
  bool local = false;
  char text[256] = {};
  if (clGetKernelArgInfo(kernel(), index, CL_KERNEL_ARG_NAME, sizeof text - 1, text, nullptr) ==
          CL_SUCCESS &&
      text[0] != '\0') {
    name = text;
    cl_kernel_arg_address_qualifier space = 0;
    local = clGetKernelArgInfo(kernel(), index, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof space,
                               &space, nullptr) == CL_SUCCESS &&
            space == CL_KERNEL_ARG_ADDRESS_LOCAL;
  } else if (index < from_source.size()) {
    const std::string& written = from_source[index];
    const std::size_t end = written.find_last_not_of(" \t\r\n");
    std::size_t begin = end == std::string::npos ? 0 : end + 1;
    while (begin > 0 && (std::isalnum(static_cast<unsigned char>(written[begin - 1])) ||
                         written[begin - 1] == '_')) {
      --begin;
    }
    if (end != std::string::npos) name = written.substr(begin, end + 1 - begin);
    local = written.find("local") != std::string::npos;
  }
  std::string described = std::to_string(index);
  if (!name.empty()) described += " '" + printable(name, 100) + "'";
  if (local) described += " (__local: set it with ::cl::Local(bytes))";
  return described;
}

// The error of a launch refused because an argument is not set: its first line names the
// argument (and no size, so that the configurations of a space that forgot the same one are one
// failure); the launch's own error (`launch`: code, sizes, device) follows on the next line.
[[noreturn]] void arguments_not_set(const ::cl::Kernel& kernel, cl_uint given,
                                    const std::string& source, const AutotuneError& launch) {
  cl_uint count = 0;
  (void)clGetKernelInfo(kernel(), CL_KERNEL_NUM_ARGS, sizeof count, &count, nullptr);
  const std::string name = kernel_name(kernel);
  std::vector<std::string> from_source;
  try {
    from_source = parameters_in_source(source, name);
  } catch (...) {  // no memory for it: indices only
  }
  if (from_source.size() != count) from_source.clear();
  std::string first;
  if (given != ~cl_uint{0} && given < count) {
    first = "argument " + describe_argument(kernel, given, from_source);
    if (count - given > 1) first += " (and " + std::to_string(count - given - 1) + " more)";
    first += " of kernel '" + name + "' is not set: launch_with gave " + std::to_string(given) +
             " of its " + std::to_string(count) + " arguments";
  } else {
    first =
        "an argument of kernel '" + name + "' is not set; it takes " + std::to_string(count) + ":";
    for (cl_uint i = 0; i < count && i < 64; ++i) {
      first += (i ? ", " : " ") + describe_argument(kernel, i, from_source);
    }
  }
  throw AutotuneError(ErrorKind::launch, first + "\n" + launch.message());
}

}  // namespace

void Client::launch_failed(cl_int code, const ::cl::Kernel& kernel, const ::cl::NDRange& global,
                           const ::cl::NDRange& local, cl_uint given) const {
  AutotuneError error = make_error(
      code, "enqueueing kernel '" + kernel_name(kernel) + "' with global " + format_range(global) +
                " and work-group " + format_range(local) + " on " + device_.device_name);
  cl_ulong local_bytes = 0;
  if (code == CL_OUT_OF_RESOURCES &&
      kernel.getWorkGroupInfo(device_.device, CL_KERNEL_LOCAL_MEM_SIZE, &local_bytes) ==
          CL_SUCCESS &&
      local_bytes > device_.local_memory) {
    // Past what __local arguments may take, within what declared arrays may (check_launch):
    // the likely cause, said after the driver's code (a spoiled context gives the same code).
    throw AutotuneError(
        ErrorKind::out_of_resources,
        error.message() + "\n" + local_memory_needed(local_bytes, kernel_name(kernel), device_));
  }
  if (code == CL_INVALID_KERNEL_ARGS) {
    std::string source;
    try {
      source = programs_.source_of(kernel.getInfo<CL_KERNEL_PROGRAM>());
    } catch (...) {  // the program is not known: indices only
    }
    arguments_not_set(kernel, given, source, error);
  }
  throw error;
}

void Client::launch(const ::cl::Kernel& kernel, const ::cl::NDRange& global,
                    const ::cl::NDRange& local, const ::cl::NDRange& offset) {
  launch_given(kernel, global, local, offset, no_count);
}

void Client::launch_given(const ::cl::Kernel& kernel, const ::cl::NDRange& global,
                          const ::cl::NDRange& local, const ::cl::NDRange& offset, cl_uint given) {
  check_launch(kernel, global, local);
  // The C call, not CLHPP's: CLHPP would wrap the event in a ::cl::Event and release it.
  cl_event* slot = event_slot();
  const cl_int code = clEnqueueNDRangeKernel(
      queue_(), kernel(), global.dimensions(), offset.dimensions() ? offset.get() : nullptr,
      global.get(), local.dimensions() ? local.get() : nullptr, 0, nullptr, slot);
  if (code != CL_SUCCESS) [[unlikely]] {
    discard_slot(slot);
    launch_failed(code, kernel, global, local, given);
  }
}

::cl::Buffer Client::allocate(std::size_t bytes, cl_mem_flags flags) {
  if (bytes > device_.max_allocation) {
    throw AutotuneError(ErrorKind::allocation,
                        "a buffer of " + std::to_string(bytes) + " bytes exceeds the largest " +
                            device_.device_name + " allows (" +
                            std::to_string(device_.max_allocation) + " bytes)");
  }
  cl_int code = CL_SUCCESS;
  ::cl::Buffer buffer(context_, flags, bytes, nullptr, &code);
  check(code, [&] {
    return "allocating a buffer of " + std::to_string(bytes) + " bytes on " + device_.device_name;
  });
  return buffer;
}

void Client::write(const ::cl::Buffer& buffer, const void* data, std::size_t bytes,
                   std::size_t offset, bool blocking) {
  cl_event* slot = event_slot();
  const cl_int code = clEnqueueWriteBuffer(queue_(), buffer(), blocking ? CL_TRUE : CL_FALSE,
                                           offset, bytes, data, 0, nullptr, slot);
  if (code != CL_SUCCESS) [[unlikely]] {
    discard_slot(slot);
    throw make_error(code, "writing " + std::to_string(bytes) + " bytes at offset " +
                               std::to_string(offset) + " of a buffer on " + device_.device_name);
  }
}

void Client::read(const ::cl::Buffer& buffer, void* data, std::size_t bytes, std::size_t offset,
                  bool blocking) {
  cl_event* slot = event_slot();
  const cl_int code = clEnqueueReadBuffer(queue_(), buffer(), blocking ? CL_TRUE : CL_FALSE, offset,
                                          bytes, data, 0, nullptr, slot);
  if (code != CL_SUCCESS) [[unlikely]] {
    discard_slot(slot);
    throw make_error(code, "reading " + std::to_string(bytes) + " bytes at offset " +
                               std::to_string(offset) + " of a buffer on " + device_.device_name);
  }
}

void Client::copy(const ::cl::Buffer& from, const ::cl::Buffer& to, std::size_t bytes,
                  std::size_t from_offset, std::size_t to_offset) {
  cl_event* slot = event_slot();
  const cl_int code =
      clEnqueueCopyBuffer(queue_(), from(), to(), from_offset, to_offset, bytes, 0, nullptr, slot);
  if (code != CL_SUCCESS) [[unlikely]] {
    discard_slot(slot);
    throw make_error(code, "copying " + std::to_string(bytes) + " bytes between buffers on " +
                               device_.device_name);
  }
}

void Client::fill_bytes(const ::cl::Buffer& buffer, const void* pattern, std::size_t pattern_size,
                        std::size_t offset, std::size_t bytes) {
  for (const auto& piece : detail::fill_pieces(pattern_size, offset, bytes)) {
    cl_event* slot = event_slot();
    const cl_int code = clEnqueueFillBuffer(queue_(), buffer(), pattern, pattern_size, piece.offset,
                                            piece.bytes, 0, nullptr, slot);
    if (code != CL_SUCCESS) [[unlikely]] {
      discard_slot(slot);
      throw make_error(code, "filling " + std::to_string(piece.bytes) + " bytes (at " +
                                 std::to_string(piece.offset) + ", of " + std::to_string(bytes) +
                                 ") of a buffer with a " + std::to_string(pattern_size) +
                                 "-byte pattern on " + device_.device_name);
    }
  }
}

void Client::finish() {
  check(queue_.finish(), [&] { return "waiting for the queue of " + device_.device_name; });
}

void Client::record(const ::cl::Event& event) {
  if (event() == nullptr) return;
  if (cl_event* slot = event_slot()) {
    clRetainEvent(event());
    *slot = event();
  }
}

void Client::release_recorded() noexcept {
  for (cl_event event : recording_->events) {
    if (event != nullptr) clReleaseEvent(event);
  }
  recording_->events.clear();  // keeps the capacity for the next measurement
}

detail::CommandTimes Client::times_of_recorded() {
  std::vector<detail::CommandInterval>& intervals = recording_->intervals;
  intervals.clear();
  for (cl_event event : recording_->events) {
    // An event of another queue (record()) may still run: measure() finished only the client's.
    // Its status below tells a failure; each on its own, as they may be of other contexts.
    (void)clWaitForEvents(1, &event);
    cl_ulong start = 0, end = 0;
    if (clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr) !=
            CL_SUCCESS ||
        clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) !=
            CL_SUCCESS) {
      // A command that failed on the device has no times: report its failure, not the timing.
      cl_int status = CL_COMPLETE;
      clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr);
      if (status < 0) {
        throw make_error(status, "a command enqueued by the candidate on " + device_.device_name);
      }
      continue;  // e.g. an event record()ed from a queue without profiling
    }
    intervals.push_back({start, end});
  }
  last_event_count_ = intervals.size();
  return detail::command_times(intervals);
}

double Client::measure(FunctionRef<void()> work, std::size_t batch) {
  std::lock_guard lock(recording_->measure_mutex);
  // Earlier work must neither be counted nor delay this work's start.
  finish();
  release_recorded();
  const auto host_start = std::chrono::steady_clock::now();
  // The marker before the work costs one event per sample; it is only read when the work
  // enqueued nothing through this client.
  ::cl::Event before;
  const bool have_before = queue_.enqueueMarkerWithWaitList(nullptr, &before) == CL_SUCCESS;
  {
    recording_->measuring_thread.store(std::this_thread::get_id(), std::memory_order_relaxed);
    recording_->measuring.store(true, std::memory_order_release);
    struct StopRecording {
      std::atomic<bool>& measuring;
      ~StopRecording() { measuring.store(false, std::memory_order_release); }
    } stop{recording_->measuring};
    try {
      for (std::size_t i = 0; i < batch; ++i) work();
    } catch (...) {
      release_recorded();
      throw;
    }
  }
  if (!recording_->events.empty()) {
    // Preferred: the busy time of everything the work enqueued through the client: all its
    // kernels and copies, not only the last, and no host enqueue overhead before the first
    // command or between two.
    finish();
    const detail::CommandTimes times = times_of_recorded();
    release_recorded();
    if (last_event_count_ > 0) {
      last_source_ = MeasureSource::events;
      last_span_ = static_cast<double>(times.span) * 1e-9;
      return static_cast<double>(times.busy) * 1e-9;
    }
  }
  last_event_count_ = 0;
  // Fallback 1: the work used the raw queue (e.g. a third-party library). In an in-order queue
  // the marker before completes no later than that work starts and the marker after no earlier
  // than it ends, so the interval between their ends covers all of it (plus any time the device
  // waited for the host to enqueue).
  ::cl::Event after;
  const bool have_after =
      have_before && queue_.enqueueMarkerWithWaitList(nullptr, &after) == CL_SUCCESS;
  finish();
  if (have_after) {
    cl_ulong begin = 0, end = 0;
    if (before.getProfilingInfo(CL_PROFILING_COMMAND_END, &begin) == CL_SUCCESS &&
        after.getProfilingInfo(CL_PROFILING_COMMAND_END, &end) == CL_SUCCESS && end >= begin) {
      last_source_ = MeasureSource::markers;
      last_span_ = static_cast<double>(end - begin) * 1e-9;
      return last_span_;
    }
  }
  // Fallback 2: markers without profiling data (seen on some drivers): host wall-clock time
  // from before the work to the end of clFinish, which includes enqueue overhead.
  last_source_ = MeasureSource::host_clock;
  last_span_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - host_start).count();
  return last_span_;
}

}  // namespace tunekit::cl
