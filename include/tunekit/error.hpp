// AutotuneError: why a candidate, or a whole tuning, failed.
#pragma once

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

/// What went wrong. Candidate-level kinds make that candidate lose; the others are the caller's.
enum class ErrorKind {
  build,                ///< a kernel did not compile (the message holds the build log)
  launch,               ///< the runtime refused the launch (bad work-group size, bad argument, ...)
  out_of_resources,     ///< too much local memory, registers or work-items for the device
  allocation,           ///< a device or host allocation failed
  runtime,              ///< the candidate threw or returned an error while running
  wrong_output,         ///< validation found the output differs from the reference
  invalid_measurement,  ///< the timer gave a time that cannot be true (zero, negative, NaN)
  skipped,              ///< not measured (negative priority, or the search did not reach it)
  no_valid_candidate,   ///< every candidate failed: the error lists each one's reason
  settings,             ///< a setting or environment variable has a bad value
  cache,                ///< the persistent cache could not be read or written
  device,               ///< no usable device (e.g. no OpenCL platform)
  invalid_key,          ///< the key cannot identify a tuning (a NaN field, a size out of range)
                        ///< (the last: error_kind_named() walks the kinds up to it)
};

/// "build", "out of resources", ...
std::string_view to_string(ErrorKind kind);
/// The kind whose to_string() is `text` (as a cache entry or a build helper writes it), if any.
std::optional<ErrorKind> error_kind_named(std::string_view text);

/// A failed candidate or a failed tuning: a kind, the tunable's name, and a message a person
/// understands. `no_valid_candidate` errors carry every candidate's own error, whole, in
/// `causes()`; their what() shows each distinct failure once (see group_failures).
class AutotuneError : public std::runtime_error {
 public:
  AutotuneError(ErrorKind kind, std::string message, std::string tunable = {},
                std::vector<AutotuneError> causes = {});

  ErrorKind kind() const noexcept { return kind_; }
  /// Name of the failed tunable; empty for errors that are not a candidate's.
  const std::string& tunable() const noexcept { return tunable_; }
  /// The reason alone, without kind or name; whole (a build error holds the whole build log).
  const std::string& message() const noexcept { return message_; }
  /// The message's first line, what a table row shows: past 240 bytes it ends at the last space
  /// before them with " ..." (never inside a path or a word). A build error's first line names
  /// the source file and line of the first compiler error.
  std::string summary() const;
  const std::vector<AutotuneError>& causes() const noexcept { return causes_; }

  /// The same error, attributed to `tunable` (kept if already named).
  AutotuneError named(std::string tunable) const;

  /// Whether the candidate refused the call's inputs before anything ran (unsupported_inputs).
  bool refused_inputs() const noexcept { return refused_inputs_; }
  /// Whether the candidate failed after it had changed the call's outputs in place
  /// (outputs_changed): no other candidate may serve the call.
  bool changed_outputs() const noexcept { return changed_outputs_; }
  /// Whether the device's limits rule the candidate out (device_limit): a lasting failure, where
  /// the same kind from a driver may be a shortage of the moment.
  bool beyond_device_limits() const noexcept { return beyond_device_limits_; }

 private:
  friend AutotuneError unsupported_inputs(std::string message, std::string tunable);
  friend AutotuneError outputs_changed(AutotuneError failure);
  friend AutotuneError device_limit(std::string message, std::string tunable);

  ErrorKind kind_;
  std::string message_;
  std::string tunable_;
  std::vector<AutotuneError> causes_;
  bool refused_inputs_ = false;
  bool changed_outputs_ = false;
  bool beyond_device_limits_ = false;
};

/// What a candidate throws (or returns through a Failure) for inputs it does not take, checked
/// before anything runs: a size past its kernels' 32-bit indices, a shape it needs whole tiles
/// of. Its kind is `launch`, and a tuning counts it as that candidate's failure; at dispatch the
/// call falls back to the next-ranked candidate as on any failure, but the winner gets no strike
/// towards its demotion: the inputs, not the candidate, are at fault, and the key's other calls
/// keep their winner.
AutotuneError unsupported_inputs(std::string message, std::string tunable = {});

/// What a candidate throws when it fails after it had already changed outputs that it also reads
/// (a GEMM's C under beta != 0, updated by a first kernel before a second one failed): `failure`,
/// marked so. At dispatch no other candidate serves that call, which fails with it: the next
/// would start from the changed outputs and hand back a wrong result. (A candidate checks what
/// it can before its first write, so that this stays the rare failure of a driver.)
AutotuneError outputs_changed(AutotuneError failure);

/// What a check of a candidate against the device's limits gives (a work-group past the largest
/// the device or kernel takes, more local memory than it has: a space's limits rule,
/// `cl::Client::check_launch`): kind `out_of_resources`, marked as the device's limit. Unlike the
/// same kind from a driver (NVIDIA says it of memory that others hold for the moment), it comes
/// back on every try: a key that the limits rule out entirely fails for good, remembered.
AutotuneError device_limit(std::string message, std::string tunable = {});

/// The AutotuneError an exception in flight stands for: an AutotuneError keeps its kind,
/// std::bad_alloc is an allocation failure, anything else a runtime failure with its what().
AutotuneError error_from_current_exception(const std::string& tunable);
/// The AutotuneError an exception_ptr stands for (see error_from_current_exception).
AutotuneError error_from_exception(std::exception_ptr failure, const std::string& tunable);

/// `errors` grouped by failure, each group in the order of its first member: two errors are the
/// same failure when their kind and summary() are equal (the 8 configurations of a space that hit
/// one compiler error are one group, whatever their build options). The indices are into
/// `errors`; a null pointer is in no group.
std::vector<std::vector<std::size_t>> group_failures(
    const std::vector<const AutotuneError*>& errors);

}  // namespace tunekit
