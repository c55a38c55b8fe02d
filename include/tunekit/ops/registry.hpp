// The shipped ops in one list: each op's name, what a command line gives it (sizes and
// choices), how to check those before a device is opened, and how to tune it. The `tunekit` tool
// makes its `tune` commands and the report's op descriptions from this list: a new op is its
// file in src/ops, its kernel, and one entry in src/ops/registry.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/cl/client.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::ops {

/// A size an op takes (`--size 256`, `--m 64`): an integer from 1 to max_kernel_elements.
struct SizeParameter {
  std::string name;      ///< the option's name without dashes: "size", "m", "rows"
  std::string help;      ///< one line, e.g. "rows of A and C"
  bool short_s = false;  ///< also `-s` (the op's main size)
};

/// A choice among fixed values (`--dtype f16`, `--reduce max`); `values.front()` is the default.
struct ChoiceParameter {
  std::string name;
  std::vector<std::string> values;
  std::string help;
};

/// The sizes and choices given for one run of an op, by parameter name; only those given.
struct OpArguments {
  std::map<std::string, std::uint64_t, std::less<>> sizes;
  std::map<std::string, std::string, std::less<>> choices;

  /// The size `name`, else `fallback`.
  std::uint64_t size(std::string_view name, std::uint64_t fallback) const;
  /// The choice `name`, else `fallback`.
  std::string choice(std::string_view name, std::string_view fallback) const;
};

/// One shipped op, as a tool sees it.
struct ShippedOp {
  std::string name;     ///< the op's tuner name: what the cache, the report and `tune` call it
  std::string summary;  ///< what it computes, one line: "C = A * B, ..."
  std::vector<SizeParameter> sizes;
  std::vector<ChoiceParameter> choices;
  /// Throws AutotuneError when buffers of these sizes cannot exist for the kernels (32-bit
  /// indexing), before any device is opened.
  std::function<void(const OpArguments&)> check;
  /// Runs the op once on random inputs of these sizes on `client` (tuning its key on a miss,
  /// loading it from the persistent cache on a hit), waits for the device, and returns every
  /// tuning of the op's tuner on this device.
  std::function<std::vector<TuningReport>(cl::Client&, const OpArguments&)> tune;
};

/// Every shipped op, in the order a tool lists them.
const std::vector<ShippedOp>& shipped_ops();

/// The shipped op called `name`, or null.
const ShippedOp* find_shipped_op(std::string_view name);

}  // namespace tunekit::ops
