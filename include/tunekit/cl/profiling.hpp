// Profiling in device time: timing() of a call, scoped regions aggregated per client into a tree
// with a text report, and EventTimer, a start/stop stopwatch over OpenCL markers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tunekit/cl/client.hpp"
#include "tunekit/cl/opencl.hpp"

namespace tunekit::cl {

/// Device times of repeated calls: mean, standard deviation and every call's time, in seconds.
struct TimingResult {
  double mean = 0;
  double std = 0;  ///< sample standard deviation (0 for a single call)
  double min = 0;
  double max = 0;
  std::vector<double> times;  ///< one per timed call, in call order
};

/// How many calls timing() makes: `warmup` untimed, then `n` timed.
struct TimingOptions {
  std::size_t warmup = 3;
  std::size_t n = 100;
};

/// Summarises per-call times.
TimingResult summarize_times(std::vector<double> times);

/// Times `fn(args...)` on `client`: `options.warmup` calls, then `options.n` calls each measured
/// with Client::measure (so each time spans everything the call enqueued).
template <class Fn, class... Args>
requires std::is_invocable_v<Fn&, Args&...> TimingResult timing(Client& client,
                                                                TimingOptions options, Fn&& fn,
                                                                Args&&... args) {
  auto call = [&] { std::invoke(fn, args...); };
  for (std::size_t i = 0; i < options.warmup; ++i) call();
  std::vector<double> times;
  times.reserve(options.n);
  for (std::size_t i = 0; i < options.n; ++i) times.push_back(client.measure(call, 1));
  return summarize_times(std::move(times));
}

/// timing() with 3 warm-up calls and 100 timed ones.
template <class Fn, class... Args>
requires(!std::is_same_v<std::remove_cvref_t<Fn>, TimingOptions> &&
         std::is_invocable_v<Fn&, Args&...>) TimingResult
    timing(Client& client, Fn&& fn, Args&&... args) {
  return timing(client, TimingOptions{}, std::forward<Fn>(fn), std::forward<Args>(args)...);
}

/// A stopwatch in device time: start() and stop() enqueue markers on the client's queue;
/// seconds() waits for the stop marker and returns the time between the two. Restarting reuses
/// the timer (and releases the previous markers).
class EventTimer {
 public:
  explicit EventTimer(Client& client) : client_(&client) {}
  void start();
  void stop();
  /// Device seconds from start() to stop(): the queue's work in between, and any time the device
  /// waited for the host to enqueue it. Blocks until the stop marker has completed.
  double seconds();

 private:
  Client* client_;
  ::cl::Event start_;
  ::cl::Event stop_;
};

/// One node of a client's region tree: how often a region ran and how long, summed.
struct RegionStats {
  std::string name;
  std::size_t calls = 0;
  double device_seconds = 0;  ///< between markers at the region's entry and exit
  double host_seconds = 0;    ///< steady_clock from entry to exit
  std::vector<RegionStats> children;
};

/// A client's regions, aggregated by their path of names (the same name under different parents
/// is a different node). Used through region(), timing_region() and profile_report().
class Profiler {
 public:
  explicit Profiler(Client& client);
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;
  ~Profiler();

  /// The tree so far (waits for the markers of regions not yet resolved). Its root is unnamed.
  RegionStats snapshot();
  /// Forgets every region (open ones keep working but start a new tree when they close).
  void reset();

  // Used by Region.
  struct Opened {
    std::size_t node;
    std::size_t parent;
    std::uint64_t generation;
  };
  Opened open(std::string_view name);
  void close(const Opened& opened, ::cl::Event start, ::cl::Event stop, double host_seconds,
             double device_seconds_if_known);

 private:
  // The tree, its pending markers and the mutex that guards them (profiling.cpp): kept out of
  // this header so that it costs a user's file no <mutex>.
  struct Tree;
  Client* client_;
  std::unique_ptr<Tree> tree_;
};

/// A scoped region: created by region() or timing_region(), closed by its destructor (or
/// close()). Regions nest: one opened inside another becomes its child.
class [[nodiscard]] Region {
 public:
  Region(Client& client, std::string_view name, bool synchronous);
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;
  ~Region();

  /// Ends the region now. For a timing_region, returns its device seconds (waiting for the
  /// queue); for a region, returns NaN (its time is read when the report is made).
  double close();

 private:
  // In this order: the marker is enqueued before the region is opened in the tree, so that a
  // failing marker leaves the tree as it was.
  Client* client_;
  bool synchronous_;
  bool open_ = true;
  ::cl::Event start_;
  std::int64_t host_start_ns_;  // steady_clock, in nanoseconds (no <chrono> here)
  Profiler::Opened opened_;
};

/// A region that never stalls the queue: its device time is read when the report is made.
inline Region region(Client& client, std::string_view name) { return {client, name, false}; }
/// A region that waits for the queue when it ends, so that its time is known at once
/// (close() returns it) and its host time includes the device work.
inline Region timing_region(Client& client, std::string_view name) { return {client, name, true}; }

/// The client's region tree (see Profiler::snapshot).
inline RegionStats profile(Client& client) { return client.profiler().snapshot(); }
/// The region tree as an indented table: calls, device total and mean, host total per region.
std::string profile_report(Client& client);
/// Forgets the client's regions.
inline void reset_profile(Client& client) { client.profiler().reset(); }

}  // namespace tunekit::cl
