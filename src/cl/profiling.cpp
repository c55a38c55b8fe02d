// Profiling: per-call timing statistics, the per-client region tree with its report, and the
// marker-based EventTimer.
#include "tunekit/cl/profiling.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>

#include "tunekit/outcome.hpp"

namespace tunekit::cl {

namespace {

::cl::Event marker(Client& client) {
  ::cl::Event event;
  check(client.queue().enqueueMarkerWithWaitList(nullptr, &event),
        [&] { return "enqueueing a profiling marker on " + client.device().device_name; });
  return event;
}

// Device seconds between the completion of two markers; waits for the second.
double between(const ::cl::Event& start, const ::cl::Event& stop) {
  check(stop.wait(), "waiting for a profiling marker");
  cl_ulong begin = 0, end = 0;
  check(start.getProfilingInfo(CL_PROFILING_COMMAND_END, &begin), "reading a marker's time");
  check(stop.getProfilingInfo(CL_PROFILING_COMMAND_END, &end), "reading a marker's time");
  return end >= begin ? static_cast<double>(end - begin) * 1e-9 : 0.0;
}

// Pending regions beyond this are resolved (waiting on the oldest), so that a long loop of
// regions holds a bounded number of events.
constexpr std::size_t max_pending = 4096;

}  // namespace

TimingResult summarize_times(std::vector<double> times) {
  TimingResult result;
  result.times = std::move(times);
  if (result.times.empty()) return result;
  const double n = static_cast<double>(result.times.size());
  result.mean = std::accumulate(result.times.begin(), result.times.end(), 0.0) / n;
  double squares = 0;
  for (double t : result.times) squares += (t - result.mean) * (t - result.mean);
  result.std = result.times.size() > 1 ? std::sqrt(squares / (n - 1)) : 0.0;
  const auto [low, high] = std::minmax_element(result.times.begin(), result.times.end());
  result.min = *low;
  result.max = *high;
  return result;
}

void EventTimer::start() {
  stop_ = ::cl::Event();
  start_ = marker(*client_);
}

void EventTimer::stop() {
  if (start_() == nullptr) {
    throw AutotuneError(ErrorKind::runtime, "EventTimer::stop() without start()");
  }
  stop_ = marker(*client_);
}

double EventTimer::seconds() {
  if (start_() == nullptr || stop_() == nullptr) {
    throw AutotuneError(ErrorKind::runtime, "EventTimer::seconds() needs start() and stop() first");
  }
  return between(start_, stop_);
}

Profiler::Opened Profiler::open(std::string_view name) {
  std::lock_guard lock(mutex_);
  const std::size_t parent = current_;
  std::size_t node = 0;
  for (std::size_t child : nodes_[parent].children) {
    if (nodes_[child].name == name) node = child;
  }
  if (node == 0) {
    node = nodes_.size();
    nodes_.push_back(Node{std::string(name), parent, {}});
    nodes_[parent].children.push_back(node);
  }
  current_ = node;
  return {node, parent, generation_};
}

void Profiler::close(const Opened& opened, ::cl::Event start, ::cl::Event stop, double host_seconds,
                     double device_seconds_if_known) {
  std::lock_guard lock(mutex_);
  if (opened.generation != generation_) return;  // reset() while it was open
  current_ = opened.parent;
  Node& node = nodes_[opened.node];
  ++node.calls;
  node.host_seconds += host_seconds;
  if (std::isnan(device_seconds_if_known)) {
    pending_.push_back({opened.node, std::move(start), std::move(stop)});
    if (pending_.size() > max_pending) resolve_locked(max_pending / 2);
  } else {
    node.device_seconds += device_seconds_if_known;
  }
}

void Profiler::resolve_locked(std::size_t keep) {
  const std::size_t resolve = pending_.size() > keep ? pending_.size() - keep : 0;
  for (std::size_t i = 0; i < resolve; ++i) {
    nodes_[pending_[i].node].device_seconds += between(pending_[i].start, pending_[i].stop);
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(resolve));
}

RegionStats Profiler::stats_of(std::size_t index) const {
  const Node& node = nodes_[index];
  RegionStats stats{node.name, node.calls, node.device_seconds, node.host_seconds, {}};
  for (std::size_t child : node.children) stats.children.push_back(stats_of(child));
  return stats;
}

RegionStats Profiler::snapshot() {
  std::lock_guard lock(mutex_);
  resolve_locked(0);
  return stats_of(0);
}

void Profiler::reset() {
  std::lock_guard lock(mutex_);
  nodes_.assign(1, Node{"", 0, {}});
  pending_.clear();
  current_ = 0;
  ++generation_;
}

Region::Region(Client& client, std::string_view name, bool synchronous)
    : client_(&client),
      synchronous_(synchronous),
      start_(marker(client)),
      host_start_(std::chrono::steady_clock::now()),
      opened_(client.profiler().open(name)) {}

Region::~Region() {
  if (!open_) return;
  try {
    close();
  } catch (...) {
    // A destructor must not throw (it may run during unwinding): the region is lost instead.
  }
}

double Region::close() {
  if (!open_) return std::numeric_limits<double>::quiet_NaN();
  open_ = false;
  ::cl::Event stop = marker(*client_);
  double device = std::numeric_limits<double>::quiet_NaN();
  if (synchronous_) {
    client_->finish();
    device = between(start_, stop);
  }
  const double host =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - host_start_).count();
  client_->profiler().close(opened_, std::move(start_), std::move(stop), host, device);
  return device;
}

namespace {
void append_rows(std::string& text, const RegionStats& stats, int depth) {
  char line[256];
  const std::string label = std::string(static_cast<std::size_t>(depth) * 2, ' ') + stats.name;
  const double calls = static_cast<double>(std::max<std::size_t>(stats.calls, 1));
  std::snprintf(line, sizeof line, "%-32s %8zu %14s %14s %14s\n", label.c_str(), stats.calls,
                format_seconds(stats.device_seconds).c_str(),
                format_seconds(stats.device_seconds / calls).c_str(),
                format_seconds(stats.host_seconds).c_str());
  text += line;
  for (const auto& child : stats.children) append_rows(text, child, depth + 1);
}
}  // namespace

std::string profile_report(Client& client) {
  const RegionStats root = profile(client);
  char header[256];
  std::snprintf(header, sizeof header, "%-32s %8s %14s %14s %14s\n", "region", "calls",
                "device total", "device mean", "host total");
  std::string text = "profile of " + client.device().device_name + "\n" + header;
  for (const auto& child : root.children) append_rows(text, child, 0);
  if (root.children.empty()) text += "(no regions)\n";
  return text;
}

}  // namespace tunekit::cl
