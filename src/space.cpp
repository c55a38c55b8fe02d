// Expanding a parameter space: depth-first over the parameters, each constraint checked as soon
// as the parameters it reads have values, so that invalid branches are cut early.
#include "tunekit/space.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <stdexcept>

namespace tunekit {

namespace {
[[noreturn]] void bad_start(const std::string& space, const std::string& text,
                            const std::string& why) {
  throw std::invalid_argument("tunekit: start point '" + text + "' of space '" + space + "' " +
                              why);
}
}  // namespace

std::int64_t Config::operator[](std::string_view name) const {
  const auto& all = *names_;
  for (std::size_t i = 0; i < all.size() && i < values_.size(); ++i) {
    if (all[i] == name) return values_[i];
  }
  throw std::out_of_range("tunekit: configuration has no parameter '" + std::string(name) + "'");
}

std::string Config::to_string() const {
  std::string text;
  for (std::size_t i = 0; i < values_.size(); ++i) {
    if (i) text += ',';
    text += (*names_)[i] + "=" + std::to_string(values_[i]);
  }
  return text;
}

std::string Config::build_options() const {
  std::string text;
  for (std::size_t i = 0; i < values_.size(); ++i) {
    if (i) text += ' ';
    text += "-D" + (*names_)[i] + "=" + std::to_string(values_[i]);
  }
  return text;
}

std::vector<ConfigField> parse_config(std::string_view text) {
  std::vector<ConfigField> fields;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string_view field = text.substr(begin, end - begin);
    const std::size_t equals = field.find('=');
    if (equals == std::string_view::npos) {
      throw std::invalid_argument("is not written as NAME=VALUE,...");
    }
    std::string name(field.substr(0, equals));
    const std::string_view digits = field.substr(equals + 1);
    if (name.empty() || std::any_of(fields.begin(), fields.end(),
                                    [&](const ConfigField& f) { return f.name == name; })) {
      throw std::invalid_argument("has an empty or repeated parameter name '" + name + "'");
    }
    std::int64_t value = 0;
    const auto [last, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (error != std::errc() || last != digits.data() + digits.size() || digits.empty()) {
      throw std::invalid_argument("gives '" + name + "' the value '" + std::string(digits) +
                                  "', not an integer");
    }
    fields.push_back({std::move(name), value});
    begin = end + 1;
  }
  return fields;
}

Space& Space::parameter(std::string name, std::vector<std::int64_t> values) {
  if (values.empty()) {
    throw std::invalid_argument("tunekit: parameter '" + name + "' of space '" + name_ +
                                "' has no values");
  }
  if (std::find(names_->begin(), names_->end(), name) != names_->end()) {
    throw std::invalid_argument("tunekit: space '" + name_ + "' already has a parameter '" + name +
                                "'");
  }
  names_->push_back(std::move(name));
  values_.push_back(std::move(values));
  return *this;
}

std::size_t Space::index_of(std::string_view name) const {
  for (std::size_t i = 0; i < names_->size(); ++i) {
    if ((*names_)[i] == name) return i;
  }
  throw std::invalid_argument("tunekit: space '" + name_ + "' has no parameter '" +
                              std::string(name) + "' (declare parameters before constraints)");
}

std::size_t Space::last_of(std::initializer_list<std::string_view> names) const {
  if (names.size() == 0) return names_->empty() ? 0 : names_->size() - 1;
  std::size_t last = 0;
  for (auto name : names) last = std::max(last, index_of(name));
  return last;
}

Space& Space::divides(std::string_view a, std::string_view b) {
  const std::size_t ia = index_of(a), ib = index_of(b);
  constraints_.push_back(
      {std::string(a) + " divides " + std::string(b),
       [ia, ib](const Config& c) { return c.value(ia) != 0 && c.value(ib) % c.value(ia) == 0; },
       std::max(ia, ib)});
  return *this;
}

Space& Space::multiple_of(std::string_view a, std::string_view b) { return divides(b, a); }

Space& Space::product_at_most(std::initializer_list<std::string_view> names, std::int64_t limit) {
  std::vector<std::size_t> indices;
  std::string description;
  for (auto name : names) {
    indices.push_back(index_of(name));
    if (!description.empty()) description += '*';
    description += name;
  }
  constraints_.push_back({description + " <= " + std::to_string(limit),
                          [indices, limit](const Config& c) {
                            std::int64_t product = 1;
                            for (auto i : indices) product *= c.value(i);
                            return product <= limit;
                          },
                          last_of(names)});
  return *this;
}

Space& Space::where(std::string description, std::function<bool(const Config&)> predicate,
                    std::initializer_list<std::string_view> uses) {
  constraints_.push_back({std::move(description), std::move(predicate), last_of(uses)});
  return *this;
}

Space& Space::work_group_size(std::function<std::size_t(const Config&)> size) {
  work_group_size_ = std::move(size);
  return *this;
}

Space& Space::local_memory(std::function<std::size_t(const Config&)> bytes) {
  local_memory_ = std::move(bytes);
  return *this;
}

Space& Space::start_at(std::string config, std::vector<std::string> found_on) {
  for (const auto& device : found_on) {
    if (device.empty()) {
      throw std::invalid_argument("space " + name_ + ": start point " + config +
                                  " names an empty device (found_on names parts of identities)");
    }
  }
  starts_.push_back({std::move(config), std::move(found_on)});
  return *this;
}

std::optional<std::string> Space::exceeds(const Config& config, const DeviceLimits& limits) const {
  if (work_group_size_ && limits.max_work_group_size > 0) {
    const std::size_t size = work_group_size_(config);
    if (size > limits.max_work_group_size) {
      return "work-group of " + std::to_string(size) + " work-items exceeds the device's " +
             std::to_string(limits.max_work_group_size);
    }
  }
  if (local_memory_ && limits.local_memory_bytes > 0) {
    const std::size_t bytes = local_memory_(config);
    if (bytes > limits.local_memory_bytes) {
      return std::to_string(bytes) + " bytes local memory, device has " +
             std::to_string(limits.local_memory_bytes);
    }
  }
  return std::nullopt;
}

ExpandedSpace Space::expand() const {
  ExpandedSpace expanded;
  const std::size_t n = names_->size();
  expanded.unconstrained_ = 1;
  for (const auto& values : values_) expanded.unconstrained_ *= values.size();
  if (n == 0) return expanded;

  std::vector<std::vector<const Constraint*>> due(n);  // constraints checked at each depth
  for (const auto& c : constraints_) due[c.last_parameter].push_back(&c);

  std::shared_ptr<const std::vector<std::string>> names = names_;
  std::vector<std::size_t> choice(n, 0);
  std::vector<std::vector<std::size_t>> chosen;  // value indices of each valid config
  Config partial(names, {});
  partial.values_.reserve(n);
  // Iterative depth-first search: choice[d] is the value index tried at depth d.
  std::size_t depth = 0;
  for (;;) {
    if (choice[depth] < values_[depth].size()) {
      partial.values_.resize(depth + 1);
      partial.values_[depth] = values_[depth][choice[depth]];
      bool ok = true;
      for (const Constraint* c : due[depth]) {
        if (!c->holds(partial)) {
          ok = false;
          break;
        }
      }
      if (ok && depth + 1 == n) {
        expanded.configs_.push_back(Config(names, partial.values_));
        chosen.push_back(choice);
      }
      if (ok && depth + 1 < n) {
        ++depth;
        choice[depth] = 0;
      } else {
        ++choice[depth];
      }
    } else {
      if (depth == 0) break;
      --depth;
      ++choice[depth];
    }
  }

  // Each configuration's value indices as one mixed-radix number, for neighbour lookups.
  expanded.radix_.resize(n);
  for (std::size_t p = 0; p < n; ++p) expanded.radix_[p] = values_[p].size();
  expanded.codes_.reserve(chosen.size());
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    std::uint64_t code = 0;
    for (std::size_t p = 0; p < n; ++p) code = code * expanded.radix_[p] + chosen[i][p];
    expanded.codes_.push_back(code);
    expanded.index_of_code_.emplace(code, i);
  }
  for (const auto& start : starts_) {
    const std::size_t index = resolve_start(start.config, expanded);
    const auto at = std::find(expanded.starts_.begin(), expanded.starts_.end(), index);
    if (at == expanded.starts_.end()) {
      expanded.starts_.push_back(index);
      expanded.found_on_.push_back(start.found_on);
      continue;
    }
    // A repeat counts once, found on the devices of both (any device, if either says so).
    auto& devices = expanded.found_on_[static_cast<std::size_t>(at - expanded.starts_.begin())];
    if (start.found_on.empty()) {
      devices.clear();
    } else if (!devices.empty()) {
      devices.insert(devices.end(), start.found_on.begin(), start.found_on.end());
    }
  }
  return expanded;
}

bool ExpandedSpace::vouches(std::size_t config, std::string_view device) const {
  const auto at = std::find(starts_.begin(), starts_.end(), config);
  if (at == starts_.end()) return false;
  const auto& devices = found_on_[static_cast<std::size_t>(at - starts_.begin())];
  if (device.empty() || devices.empty()) return true;
  return std::any_of(devices.begin(), devices.end(), [&](const std::string& name) {
    return device.find(name) != std::string_view::npos;
  });
}

ExpandedSpace ExpandedSpace::subset(const std::vector<std::size_t>& kept) const {
  ExpandedSpace part;
  part.radix_ = radix_;
  part.unconstrained_ = unconstrained_;
  part.configs_.reserve(kept.size());
  part.codes_.reserve(kept.size());
  for (std::size_t k = 0; k < kept.size(); ++k) {
    if (kept[k] >= size() || (k > 0 && kept[k] <= kept[k - 1])) {
      throw std::invalid_argument(
          "tunekit: a subset of a space takes ascending indices within it (index " +
          std::to_string(kept[k]) + " of " + std::to_string(size()) + ")");
    }
    part.index_of_code_.emplace(codes_[kept[k]], k);
    part.configs_.push_back(configs_[kept[k]]);
    part.codes_.push_back(codes_[kept[k]]);
  }
  for (std::size_t s = 0; s < starts_.size(); ++s) {
    const auto at = std::lower_bound(kept.begin(), kept.end(), starts_[s]);
    if (at == kept.end() || *at != starts_[s]) continue;
    part.starts_.push_back(static_cast<std::size_t>(at - kept.begin()));
    part.found_on_.push_back(found_on_[s]);
  }
  return part;
}

SpacePart::SpacePart(const ExpandedSpace& whole, std::vector<std::size_t> kept) : whole_(&whole) {
  // As many as the whole, ascending and within it: all of it, kept without a copy.
  if (kept.size() == whole.size()) return;
  part_ = whole.subset(kept);
  kept_ = std::move(kept);
}

std::optional<std::size_t> SpacePart::index_of(std::size_t whole) const {
  if (!part_) return whole < whole_->size() ? std::optional<std::size_t>(whole) : std::nullopt;
  const auto at = std::lower_bound(kept_.begin(), kept_.end(), whole);
  if (at == kept_.end() || *at != whole) return std::nullopt;
  return static_cast<std::size_t>(at - kept_.begin());
}

std::vector<std::size_t> SpacePart::indices_of(const std::vector<std::size_t>& whole) const {
  std::vector<std::size_t> part;
  for (std::size_t i : whole) {
    if (const auto at = index_of(i)) part.push_back(*at);
  }
  return part;
}

// The index of start point `text` ("A=1,B=2") among the valid configurations; throws naming
// what is wrong with it (a typo in a shipped start point must not pass silently).
std::size_t Space::resolve_start(const std::string& text, const ExpandedSpace& expanded) const {
  const auto fail = [&](const std::string& why) { bad_start(name_, text, why); };
  const std::size_t n = names_->size();
  std::vector<std::optional<std::size_t>> digit(n);
  std::vector<std::int64_t> values(n);
  std::vector<ConfigField> fields;
  try {
    fields = parse_config(text);
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  for (const auto& [name, value] : fields) {
    const auto p = std::find(names_->begin(), names_->end(), name);
    if (p == names_->end()) fail("names no parameter '" + name + "'");
    const std::size_t at = static_cast<std::size_t>(p - names_->begin());
    const auto v = std::find(values_[at].begin(), values_[at].end(), value);
    if (v == values_[at].end()) fail("gives '" + name + "' a value it cannot take");
    digit[at] = static_cast<std::size_t>(v - values_[at].begin());
    values[at] = value;
  }
  std::uint64_t code = 0;
  for (std::size_t p = 0; p < n; ++p) {
    if (!digit[p]) fail("leaves parameter '" + (*names_)[p] + "' out");
    code = code * expanded.radix_[p] + *digit[p];
  }
  const auto found = expanded.index_of_code_.find(code);
  if (found == expanded.index_of_code_.end()) {
    const Config config(names_, values);
    for (const auto& c : constraints_) {
      if (!c.holds(config)) fail("breaks the constraint '" + c.description + "'");
    }
    fail("is not a valid configuration");
  }
  return found->second;
}

}  // namespace tunekit

namespace tunekit {

std::vector<std::size_t> ExpandedSpace::neighbours(std::size_t i) const {
  std::vector<std::size_t> found;
  const std::uint64_t code = codes_.at(i);
  std::uint64_t place = 1;  // weight of parameter p in the code, from the last parameter up
  for (std::size_t p = radix_.size(); p-- > 0;) {
    const std::uint64_t digit = code / place % radix_[p];
    for (std::uint64_t v = 0; v < radix_[p]; ++v) {
      if (v == digit) continue;
      const std::uint64_t other = code - digit * place + v * place;
      if (auto it = index_of_code_.find(other); it != index_of_code_.end()) {
        found.push_back(it->second);
      }
    }
    place *= radix_[p];
  }
  return found;
}

std::vector<std::size_t> ExpandedSpace::adjacent(std::size_t i) const {
  std::vector<std::size_t> found;
  const std::uint64_t code = codes_.at(i);
  std::uint64_t place = 1;
  for (std::size_t p = radix_.size(); p-- > 0;) {
    const std::uint64_t digit = code / place % radix_[p];
    for (const int direction : {-1, 1}) {
      // Walk outwards to the first value that forms a valid configuration.
      for (std::int64_t v = static_cast<std::int64_t>(digit) + direction;
           v >= 0 && v < static_cast<std::int64_t>(radix_[p]); v += direction) {
        const std::uint64_t other = code - digit * place + static_cast<std::uint64_t>(v) * place;
        if (auto it = index_of_code_.find(other); it != index_of_code_.end()) {
          found.push_back(it->second);
          break;
        }
      }
    }
    place *= radix_[p];
  }
  return found;
}

std::vector<std::size_t> ExpandedSpace::trades(std::size_t i) const {
  const std::size_t count = radix_.size();
  std::vector<std::uint64_t> digits(count), places(count);
  std::uint64_t place = 1;
  for (std::size_t p = count; p-- > 0;) {
    places[p] = place;
    digits[p] = codes_.at(i) / place % radix_[p];
    place *= radix_[p];
  }
  std::vector<std::size_t> found;
  for (std::size_t up = 0; up < count; ++up) {
    for (std::size_t down = 0; down < count; ++down) {
      if (up == down) continue;
      // The nearest valid pair of values outwards, the nearer steps first (constraints may cut
      // the first step of either parameter).
      std::optional<std::size_t> nearest;
      std::uint64_t nearest_distance = 0;
      for (std::uint64_t u = digits[up] + 1; u < radix_[up]; ++u) {
        for (std::uint64_t d = digits[down]; d-- > 0;) {
          const std::uint64_t distance = (u - digits[up]) + (digits[down] - d);
          if (nearest && distance >= nearest_distance) break;
          const std::uint64_t other =
              codes_.at(i) + (u - digits[up]) * places[up] - (digits[down] - d) * places[down];
          if (auto it = index_of_code_.find(other); it != index_of_code_.end()) {
            nearest = it->second;
            nearest_distance = distance;
          }
        }
      }
      if (nearest) found.push_back(*nearest);
    }
  }
  return found;
}

std::size_t ExpandedSpace::value_index(std::size_t i, std::size_t parameter) const {
  std::uint64_t place = 1;  // the last parameter is the code's lowest digit
  for (std::size_t p = radix_.size(); p-- > parameter + 1;) place *= radix_[p];
  return static_cast<std::size_t>(codes_.at(i) / place % radix_.at(parameter));
}

}  // namespace tunekit
