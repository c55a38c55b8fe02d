// Client: one OpenCL device, context and profiling queue; the enqueue calls that record what a
// candidate runs, and measure(), which times all of it in device time (a TimingClient).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tunekit/cl/device.hpp"
#include "tunekit/cl/errors.hpp"
#include "tunekit/cl/kernel_spec.hpp"
#include "tunekit/cl/opencl.hpp"
#include "tunekit/cl/program_cache.hpp"
#include "tunekit/detail/function_ref.hpp"
#include "tunekit/device_id.hpp"
#include "tunekit/device_limits.hpp"
#include "tunekit/throughput.hpp"

namespace tunekit::cl {

class Profiler;

/// Where Client::measure took its last time from.
enum class MeasureSource {
  events,      ///< the profiling events of everything enqueued through the client
  markers,     ///< markers around the work (it enqueued nothing through the client)
  host_clock,  ///< steady_clock around the work and clFinish (markers had no profiling data)
};

/// Sets `kernel`'s arguments in order (buffers, ::cl::Local(bytes), scalars). A rejected
/// argument is an AutotuneError(launch) naming the kernel and the argument's index.
template <class... Args>
void set_args(::cl::Kernel& kernel, const Args&... args);

namespace detail {
/// One command's profiling interval, in device timer nanoseconds.
struct CommandInterval {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
};

/// The times of a measurement's commands, from their intervals, in nanoseconds: their `span`
/// (first start to last end) and their `busy` time (the length of their union: the device
/// running at least one of them), which Client::measure returns. Sorts `intervals`. An interval
/// that ends before it starts counts as empty.
struct CommandTimes {
  std::uint64_t span = 0;
  std::uint64_t busy = 0;
};
CommandTimes command_times(std::vector<CommandInterval>& intervals);

/// The most patterns one clEnqueueFillBuffer is given. NVIDIA's driver kills the queue on a fill
/// of 2^31 or more patterns (a 32-bit count inside it), so a larger fill is enqueued in pieces.
inline constexpr std::size_t max_fill_patterns = std::size_t{1} << 30;

/// One enqueued piece of a fill: its byte offset and length.
struct FillPiece {
  std::size_t offset = 0;
  std::size_t bytes = 0;
  bool operator==(const FillPiece&) const = default;
};

/// The pieces a fill of `bytes` from `offset` with a `pattern_size`-byte pattern is enqueued as,
/// in order: each at most `max_patterns` patterns, together exactly the range.
inline std::vector<FillPiece> fill_pieces(std::size_t pattern_size, std::size_t offset,
                                          std::size_t bytes,
                                          std::size_t max_patterns = max_fill_patterns) {
  std::vector<FillPiece> pieces;
  const std::size_t most = (pattern_size > 0 ? pattern_size : 1) * max_patterns;
  for (std::size_t done = 0; done < bytes || pieces.empty();) {
    const std::size_t length = bytes - done < most ? bytes - done : most;
    pieces.push_back(FillPiece{offset + done, length});
    done += length;
    if (length == 0) break;
  }
  return pieces;
}
}  // namespace detail

/// One OpenCL device with its context, an in-order queue with profiling on, and the programs
/// built for it. Candidates enqueue through launch(), read(), write(), copy() and fill() so that
/// measure() can time everything they ran. Enqueue from one thread at a time while measuring;
/// work other threads enqueue meanwhile is not recorded (but shares the queue).
class Client {
 public:
  /// The device TUNEKIT_DEVICE (Settings::device) names, else the first GPU, else the first CPU.
  Client();
  /// The device `selector` names (see select_device).
  explicit Client(std::string_view selector);
  explicit Client(DeviceInfo device);
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client();

  /// The device identity (platform, device, driver, compute units, local memory): the tuner id.
  const tunekit::DeviceId& id() const noexcept { return id_; }
  const DeviceInfo& device() const noexcept { return device_; }
  /// Work-group and local-memory limits, which parameter spaces check before running anything.
  tunekit::DeviceLimits limits() const noexcept {
    return {device_.max_work_group_size, static_cast<std::size_t>(device_.local_memory)};
  }
  ::cl::Context& context() noexcept { return context_; }
  /// A CPU device: its kernels run on the host's cores, so the tuner builds no program while
  /// it measures (builds ahead are done before each measurement, not during it).
  bool measures_on_host_cores() const noexcept { return device_.is_cpu(); }
  /// The raw queue, for third-party code. Work enqueued on it directly is not recorded: measure()
  /// then falls back to markers around the work.
  ::cl::CommandQueue& queue() noexcept { return queue_; }

  ProgramCache& programs() noexcept { return programs_; }
  /// The program of `spec`, built once (see ProgramCache).
  ::cl::Program program(const KernelSpec& spec) { return programs_.program(spec); }
  /// A new kernel object for `spec`, from the cached program.
  ::cl::Kernel kernel(const KernelSpec& spec) { return programs_.kernel(spec); }

  /// Enqueues `kernel` over `global` work-items in work-groups of `local` (NullRange: the driver
  /// chooses). First checks the work-group against the kernel's and the device's limits and the
  /// kernel's local memory against the device's: AutotuneError(out_of_resources) if over.
  void launch(const ::cl::Kernel& kernel, const ::cl::NDRange& global,
              const ::cl::NDRange& local = ::cl::NullRange,
              const ::cl::NDRange& offset = ::cl::NullRange);
  /// set_args(kernel, args...) then launch(kernel, global, local). A kernel that takes more
  /// arguments than `args` is an AutotuneError(launch) naming the first one not given (its
  /// index, and its name where the driver tells it).
  template <class... Args>
  void launch_with(::cl::Kernel& kernel, const ::cl::NDRange& global, const ::cl::NDRange& local,
                   const Args&... args) {
    set_args(kernel, args...);
    launch_given(kernel, global, local, ::cl::NullRange, sizeof...(Args));
  }

  /// The checks launch() makes before it enqueues, alone: for a candidate of several launches
  /// that checks its later ones before its first changes anything (outputs_changed).
  void check_launch(const ::cl::Kernel& kernel, const ::cl::NDRange& global,
                    const ::cl::NDRange& local) const;

  /// A device buffer of `bytes` bytes: AutotuneError(allocation) when the device cannot hold it.
  ::cl::Buffer allocate(std::size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE);
  /// A device buffer holding a copy of `values`.
  template <class T>
  ::cl::Buffer upload(const std::vector<T>& values, cl_mem_flags flags = CL_MEM_READ_WRITE) {
    static_assert(std::is_trivially_copyable_v<T>, "only trivially copyable values go to a device");
    ::cl::Buffer buffer = allocate(values.empty() ? 1 : values.size() * sizeof(T), flags);
    if (!values.empty()) write(buffer, values.data(), values.size() * sizeof(T));
    return buffer;
  }
  /// The first `count` values of `buffer`, read back (blocking).
  template <class T>
  std::vector<T> download(const ::cl::Buffer& buffer, std::size_t count) {
    std::vector<T> values(count);
    if (count > 0) read(buffer, values.data(), count * sizeof(T));
    return values;
  }

  /// Copies host data to `buffer` at `offset` (blocking unless `blocking` is false, in which
  /// case `data` must stay valid until the queue reaches the copy).
  void write(const ::cl::Buffer& buffer, const void* data, std::size_t bytes,
             std::size_t offset = 0, bool blocking = true);
  /// Copies `bytes` of `buffer` from `offset` to host memory (blocking unless told otherwise).
  void read(const ::cl::Buffer& buffer, void* data, std::size_t bytes, std::size_t offset = 0,
            bool blocking = true);
  /// Copies between device buffers.
  void copy(const ::cl::Buffer& from, const ::cl::Buffer& to, std::size_t bytes,
            std::size_t from_offset = 0, std::size_t to_offset = 0);
  /// Fills `count` values of `buffer`, from value index `first`, with `value`.
  template <class T>
  void fill(const ::cl::Buffer& buffer, const T& value, std::size_t count, std::size_t first = 0) {
    static_assert(std::is_trivially_copyable_v<T>, "only trivially copyable values go to a device");
    fill_bytes(buffer, &value, sizeof(T), first * sizeof(T), count * sizeof(T));
  }
  /// Repeats `pattern` (1, 2, 4, ..., 128 bytes) over `bytes` bytes of `buffer` from `offset`;
  /// in pieces of detail::max_fill_patterns patterns (a driver limit), each its own event.
  void fill_bytes(const ::cl::Buffer& buffer, const void* pattern, std::size_t pattern_size,
                  std::size_t offset, std::size_t bytes);
  /// Waits for everything enqueued; an asynchronous failure becomes its AutotuneError.
  void finish();

  /// Adds an event from elsewhere (e.g. a library that returns one) to the measurement in
  /// progress on this thread; does nothing when none is.
  void record(const ::cl::Event& event);

  /// TimingClient: runs `work` `batch` times and returns the device seconds that everything it
  /// enqueued through this client ran: the union of the commands' intervals (their busy time).
  /// A gap between two commands is not counted: where the device waited for a host whose enqueue
  /// was delayed (a thread descheduled, a driver lock held by a build on another thread) it is
  /// the host's moment, not the work's cost, and it ranked a candidate measured during a build
  /// behind one measured after (docs/opencl.md). See MeasureSource for the fallbacks when it
  /// enqueued nothing through the client.
  double measure(FunctionRef<void()> work, std::size_t batch);
  /// The last measure()'s span, gaps included: from the first start to the last end of its
  /// commands (equal to its time where it did not come from events).
  double last_measure_span() const noexcept { return last_span_; }
  /// Seconds per tick of the device's profiling timer.
  double timer_resolution() const noexcept { return device_.timer_resolution; }
  /// How the last measure() got its time, and from how many events.
  MeasureSource last_measure_source() const noexcept { return last_source_; }
  std::size_t last_measure_events() const noexcept { return last_event_count_; }

  /// The device's peak arithmetic (FLOP/s) and memory (bytes/s) throughput, for throughput
  /// bounds: declared by declare_peak(), else measured at the first call (a multiply-add kernel,
  /// a copy and a read-only sum: a few tens of milliseconds) and kept for every client of this
  /// device in the process. A device on which the measurement fails has an unknown (zero) peak;
  /// so has a CPU device's arithmetic (device_peak.cpp says why).
  tunekit::DevicePeak peak();
  /// The peak measured again now, kept as the higher of it and what was known (a busy moment
  /// makes a measured peak low, never high), unless it was declared. A tuning calls it before
  /// it stops near the roofline, so that a low first measurement cannot end it.
  tunekit::DevicePeak peak_now();
  /// Declares the peak of this client's device (e.g. from its data sheet) instead of measuring.
  void declare_peak(const tunekit::DevicePeak& peak);

  /// The profiling module's per-client state (regions); see tunekit/cl/profiling.hpp.
  Profiler& profiler() noexcept { return *profiler_; }

 private:
  // What a measurement in progress records; defined in client.cpp, so that this header costs a
  // user's file neither <thread> nor <mutex> (issue 28: their compile time).
  struct Recording;
  // The event slot for an enqueue: nullptr (no event object at all) unless this thread is
  // measuring, so the ordinary path creates and releases nothing.
  cl_event* event_slot();
  void discard_slot(cl_event* slot) noexcept;
  // launch(), knowing how many arguments the caller set (unknown: no_count).
  static constexpr cl_uint no_count = ~cl_uint{0};
  void launch_given(const ::cl::Kernel& kernel, const ::cl::NDRange& global,
                    const ::cl::NDRange& local, const ::cl::NDRange& offset, cl_uint given);
  [[noreturn]] void launch_failed(cl_int code, const ::cl::Kernel& kernel,
                                  const ::cl::NDRange& global, const ::cl::NDRange& local,
                                  cl_uint given) const;
  // The recorded commands' times (detail::command_times); sets last_event_count_ to how many
  // had profiling times (none: zero times).
  detail::CommandTimes times_of_recorded();
  void release_recorded() noexcept;

  DeviceInfo device_;
  tunekit::DeviceId id_;
  ::cl::Context context_;
  ::cl::CommandQueue queue_;
  ProgramCache programs_;
  std::unique_ptr<Profiler> profiler_;
  std::unique_ptr<Recording> recording_;
  MeasureSource last_source_ = MeasureSource::events;
  std::size_t last_event_count_ = 0;
  double last_span_ = 0;
};

/// The name of `kernel` (for messages).
std::string kernel_name(const ::cl::Kernel& kernel);

template <class... Args>
void set_args(::cl::Kernel& kernel, const Args&... args) {
  cl_uint index = 0;
  const auto set_one = [&](const auto& arg) {
    const cl_int code = kernel.setArg(index, arg);
    if (code != CL_SUCCESS) [[unlikely]] {
      throw make_error(code, "setting argument " + std::to_string(index) + " of kernel '" +
                                 kernel_name(kernel) + "'");
    }
    ++index;
  };
  (set_one(args), ...);
}

}  // namespace tunekit::cl
