// Profiling: per-call timing statistics, the per-client region tree with its report, and the
// marker-based EventTimer.
#include "tunekit/cl/profiling.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>
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

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct Profiler::Tree {
  struct Node {
    std::string name;
    std::size_t parent;
    std::vector<std::size_t> children;
    std::size_t calls = 0;
    double device_seconds = 0;
    double host_seconds = 0;
  };
  struct Pending {
    std::size_t node;
    ::cl::Event start;
    ::cl::Event stop;
  };

  // Resolves the oldest pending regions (waiting for their markers), all but `keep`.
  void resolve_locked(std::size_t keep) {
    const std::size_t resolve = pending.size() > keep ? pending.size() - keep : 0;
    for (std::size_t i = 0; i < resolve; ++i) {
      nodes[pending[i].node].device_seconds += between(pending[i].start, pending[i].stop);
    }
    pending.erase(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(resolve));
  }

  RegionStats stats_of(std::size_t index) const {
    const Node& node = nodes[index];
    RegionStats stats{node.name, node.calls, node.device_seconds, node.host_seconds, {}};
    for (std::size_t child : node.children) stats.children.push_back(stats_of(child));
    return stats;
  }

  std::mutex mutex;
  std::vector<Node> nodes{Node{"", 0, {}}};
  std::size_t current = 0;
  std::uint64_t generation = 0;  // bumped by reset(): regions opened before it are dropped
  std::vector<Pending> pending;  // regions whose markers are read lazily
};

Profiler::Profiler(Client& client) : client_(&client), tree_(std::make_unique<Tree>()) {}

Profiler::~Profiler() = default;

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
  Tree& tree = *tree_;
  std::lock_guard lock(tree.mutex);
  const std::size_t parent = tree.current;
  std::size_t node = 0;
  for (std::size_t child : tree.nodes[parent].children) {
    if (tree.nodes[child].name == name) node = child;
  }
  if (node == 0) {
    node = tree.nodes.size();
    tree.nodes.push_back(Tree::Node{std::string(name), parent, {}});
    tree.nodes[parent].children.push_back(node);
  }
  tree.current = node;
  return {node, parent, tree.generation};
}

void Profiler::close(const Opened& opened, ::cl::Event start, ::cl::Event stop, double host_seconds,
                     double device_seconds_if_known) {
  Tree& tree = *tree_;
  std::lock_guard lock(tree.mutex);
  if (opened.generation != tree.generation) return;  // reset() while it was open
  tree.current = opened.parent;
  Tree::Node& node = tree.nodes[opened.node];
  ++node.calls;
  node.host_seconds += host_seconds;
  if (std::isnan(device_seconds_if_known)) {
    tree.pending.push_back({opened.node, std::move(start), std::move(stop)});
    if (tree.pending.size() > max_pending) tree.resolve_locked(max_pending / 2);
  } else {
    node.device_seconds += device_seconds_if_known;
  }
}

RegionStats Profiler::snapshot() {
  std::lock_guard lock(tree_->mutex);
  tree_->resolve_locked(0);
  return tree_->stats_of(0);
}

void Profiler::reset() {
  Tree& tree = *tree_;
  std::lock_guard lock(tree.mutex);
  tree.nodes.assign(1, Tree::Node{"", 0, {}});
  tree.pending.clear();
  tree.current = 0;
  ++tree.generation;
}

Region::Region(Client& client, std::string_view name, bool synchronous)
    : client_(&client),
      synchronous_(synchronous),
      start_(marker(client)),
      host_start_ns_(steady_ns()),
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
  const double host = static_cast<double>(steady_ns() - host_start_ns_) / 1e9;
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
