// Space: named parameters with value lists and constraints between them, expanded into the
// valid configurations a search strategy explores (e.g. tile sizes passed to a kernel as -D).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tunekit/device_limits.hpp"

namespace tunekit {

class Space;

/// One point of a space: a value for every parameter.
class Config {
 public:
  Config() = default;

  /// The value of parameter `name`; throws std::out_of_range naming it if the space has none.
  std::int64_t operator[](std::string_view name) const;
  std::int64_t value(std::size_t parameter) const { return values_.at(parameter); }
  std::size_t size() const noexcept { return values_.size(); }
  const std::vector<std::int64_t>& values() const noexcept { return values_; }
  const std::vector<std::string>& names() const noexcept { return *names_; }

  /// "TM=8,TN=4"
  std::string to_string() const;
  /// "-DTM=8 -DTN=4": the parameters as OpenCL/C preprocessor definitions.
  std::string build_options() const;

  friend bool operator==(const Config& a, const Config& b) { return a.values_ == b.values_; }

 private:
  friend class Space;
  Config(std::shared_ptr<const std::vector<std::string>> names, std::vector<std::int64_t> values)
      : names_(std::move(names)), values_(std::move(values)) {}

  std::shared_ptr<const std::vector<std::string>> names_ =
      std::make_shared<const std::vector<std::string>>();
  std::vector<std::int64_t> values_;
};

/// One NAME=VALUE of a configuration written as text.
struct ConfigField {
  std::string name;
  std::int64_t value = 0;
};

/// Reads a configuration written as Config::to_string gives it ("TM=8,TN=4"), for start points
/// and replay tables. Throws std::invalid_argument saying what is wrong with it: a field not
/// NAME=VALUE, a value that is not an integer, an empty or repeated name.
std::vector<ConfigField> parse_config(std::string_view text);

/// The valid configurations of a space, with the neighbourhood a local search walks: two
/// configurations are neighbours when they differ in exactly one parameter (Hamming distance 1,
/// which stays connected where constraints cut out single steps).
class ExpandedSpace {
 public:
  std::size_t size() const noexcept { return configs_.size(); }
  const Config& operator[](std::size_t i) const { return configs_.at(i); }
  const std::vector<Config>& configs() const noexcept { return configs_; }
  /// Indices of the neighbours of configuration `i`, computed on demand (a search visits few).
  std::vector<std::size_t> neighbours(std::size_t i) const;
  /// The nearest valid configurations of `i` one parameter away, on either side of its value (at
  /// most two per parameter): the steps a local refinement takes.
  std::vector<std::size_t> adjacent(std::size_t i) const;
  /// The nearest valid configurations of `i` that move one parameter a step up and another a
  /// step down (for each ordered pair of parameters): the trades a refinement tries once no
  /// single step gains, as when the work a work-item does is split between a vector width and a
  /// count of vectors, and neither alone can move without losing.
  std::vector<std::size_t> trades(std::size_t i) const;
  std::size_t parameter_count() const noexcept { return radix_.size(); }
  std::size_t value_count(std::size_t parameter) const { return radix_.at(parameter); }
  /// The position of configuration `i`'s value of `parameter` among that parameter's values.
  std::size_t value_index(std::size_t i, std::size_t parameter) const;
  /// Number of points before constraints (the size of the cartesian product).
  std::uint64_t unconstrained_size() const noexcept { return unconstrained_; }
  /// Indices of the configurations a search measures first (Space::start_at), in that order.
  const std::vector<std::size_t>& starts() const noexcept { return starts_; }
  /// Whether start point `config` vouches for the device of identity `device`: it was found on
  /// a device whose name `device` contains, or its Space::start_at named none (any device). An
  /// empty `device` is unknown: every start point vouches for it. False for a non-start.
  bool vouches(std::size_t config, std::string_view device) const;
  /// The configurations `kept` (indices of this space, ascending) as a space of their own, in
  /// that order: the same parameters and values, so its neighbours are the nearest of them, and
  /// the start points among them. Throws std::invalid_argument on indices out of order or range.
  ExpandedSpace subset(const std::vector<std::size_t>& kept) const;

 private:
  friend class Space;
  std::vector<Config> configs_;
  std::vector<std::uint64_t> radix_;  // values per parameter
  std::vector<std::uint64_t> codes_;  // value indices of each config as a mixed-radix number
  std::unordered_map<std::uint64_t, std::size_t> index_of_code_;
  std::uint64_t unconstrained_ = 0;
  std::vector<std::size_t> starts_;
  std::vector<std::vector<std::string>> found_on_;  // starts_' devices; empty: any
};

/// The part of a space that a search walks: the configurations a device can run, where its
/// limits rule the others out. A configuration over them is no part of the search (it would
/// spend the search's patience and teach its model that large tiles fail). Indices of the part
/// map to indices of the whole space and back.
class SpacePart {
 public:
  /// The whole of `whole` (kept alive by the caller).
  explicit SpacePart(const ExpandedSpace& whole) : whole_(&whole) {}
  /// `kept`: indices of `whole`, ascending (as ExpandedSpace::subset).
  SpacePart(const ExpandedSpace& whole, std::vector<std::size_t> kept);

  const ExpandedSpace& space() const noexcept { return part_ ? *part_ : *whole_; }
  /// The index in the whole space of the part's configuration `i`.
  std::size_t whole_index(std::size_t i) const { return part_ ? kept_.at(i) : i; }
  /// The part's index of the whole space's configuration `whole`; none when it is left out.
  std::optional<std::size_t> index_of(std::size_t whole) const;
  /// The part's indices of `whole` (the whole space's), in order, those left out dropped.
  std::vector<std::size_t> indices_of(const std::vector<std::size_t>& whole) const;

 private:
  const ExpandedSpace* whole_;
  std::optional<ExpandedSpace> part_;  // none: every configuration is kept
  std::vector<std::size_t> kept_;
};

/// A parameter space. Build it with parameter(...) and constraints, then expand().
class Space {
 public:
  explicit Space(std::string name = "space") : name_(std::move(name)) {}

  /// Adds a parameter with the values it may take, in the order a local search steps through.
  Space& parameter(std::string name, std::vector<std::int64_t> values);

  /// value(a) divides value(b).
  Space& divides(std::string_view a, std::string_view b);
  /// value(a) is a multiple of value(b).
  Space& multiple_of(std::string_view a, std::string_view b);
  /// The product of the named parameters is at most `limit`.
  Space& product_at_most(std::initializer_list<std::string_view> names, std::int64_t limit);
  /// Any predicate; `uses` names the parameters it reads so that it prunes early (empty: all).
  Space& where(std::string description, std::function<bool(const Config&)> predicate,
               std::initializer_list<std::string_view> uses = {});

  /// Work-items per work-group of a configuration, checked against the device's maximum.
  Space& work_group_size(std::function<std::size_t(const Config&)> size);
  /// Local memory a configuration needs in bytes, checked against the device's.
  Space& local_memory(std::function<std::size_t(const Config&)> bytes);

  /// A configuration every search measures before it explores, written as Config::to_string
  /// gives it ("TM=8,TN=4", every parameter named): typically the best one known on some
  /// device, so that a small budget still finds it there and a search elsewhere starts from a
  /// good region. expand() throws std::invalid_argument when it is not a valid configuration.
  ///
  /// `found_on`: the devices it was found on, each a part of their identity (DeviceId, e.g.
  /// "NVIDIA H100", "Portable Computing Language"); none: any device. On a device it names, a
  /// search that finds nothing clearly faster than it ends after the level's warm patience. On
  /// another it is measured first all the same but vouches for nothing: the search keeps its
  /// whole patience, since another device's best can be a local best far from this one's (the
  /// H100's start points on PoCL's blocked space: 1.26x off its best, and searches that trusted
  /// them stopped there; docs/benchmarks.md, "Start points vouch for the devices they were found
  /// on"). Throws std::invalid_argument on an empty name (it would name every device).
  Space& start_at(std::string config, std::vector<std::string> found_on = {});

  /// Every configuration satisfying the constraints, in lexicographic order of value indices.
  ExpandedSpace expand() const;

  /// Why `config` exceeds `limits`, or nothing when it fits (unknown limits are not checked).
  std::optional<std::string> exceeds(const Config& config, const DeviceLimits& limits) const;

  const std::string& name() const noexcept { return name_; }
  std::size_t parameter_count() const noexcept { return names_->size(); }

 private:
  struct Constraint {
    std::string description;
    std::function<bool(const Config&)> holds;
    std::size_t last_parameter;  // checked once every parameter up to this one has a value
  };
  std::size_t index_of(std::string_view name) const;
  std::size_t last_of(std::initializer_list<std::string_view> names) const;
  std::size_t resolve_start(const std::string& text, const ExpandedSpace& expanded) const;

  std::string name_;
  std::shared_ptr<std::vector<std::string>> names_ = std::make_shared<std::vector<std::string>>();
  std::vector<std::vector<std::int64_t>> values_;
  std::vector<Constraint> constraints_;
  std::function<std::size_t(const Config&)> work_group_size_;
  std::function<std::size_t(const Config&)> local_memory_;
  struct StartPoint {
    std::string config;
    std::vector<std::string> found_on;  // empty: any device
  };
  std::vector<StartPoint> starts_;
};

/// Starts a space: `tunekit::space("blocked").parameter("TM", {2, 4, 8})...`
inline Space space(std::string name) { return Space(std::move(name)); }

}  // namespace tunekit
