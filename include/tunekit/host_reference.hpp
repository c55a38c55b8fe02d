// HostReference: a validator whose reference is computed on the host from the benchmark inputs,
// instead of being the output of the first candidate that runs. With it, a wrong first
// candidate cannot become the standard every other candidate is judged by.
#pragma once

#include <functional>
#include <type_traits>
#include <utility>

namespace tunekit {

/// A HostReference without a clear step (its third member by default).
struct NoClear {};

/// `.validate_with(HostReference{expected, check})`: `expected(inputs...)` (or
/// `expected(client, inputs...)`) computes on the host, from a candidate's benchmark inputs, what
/// every candidate must return (for candidates returning void: the inputs tuple as it must be
/// after the call); `check(expected, candidate)` (or with the client first) compares, as a
/// validate_with check does. `expected` may return any type its check takes (a sample of the
/// output, say, so that validation reads no more than it compares). It must not change the
/// inputs: with share_inputs(), they are the ones the candidates run on.
///
/// `HostReference{expected, check, clear}`: for candidates returning void on shared inputs
/// (share_inputs()), `clear(inputs...)` (or `clear(client, inputs...)`) overwrites the outputs
/// with what no candidate leaves there by computing it (NaN, say) before each candidate is
/// validated: the shared outputs otherwise hold the previous candidate's right answer, which a
/// candidate that skips some of its writes would pass as its own. Without it, each candidate is
/// validated on freshly generated inputs instead (right, but one more input set per candidate).
template <class Expected, class Check, class Clear = NoClear>
struct HostReference {
  Expected expected;
  Check check;
  Clear clear{};

  /// The comparison: the set calls its validator as it calls any check.
  template <class... Args>
  requires std::is_invocable_v<const Check&, Args...>
  decltype(auto) operator()(Args&&... args) const {
    return std::invoke(check, std::forward<Args>(args)...);
  }
};

template <class Expected, class Check>
HostReference(Expected, Check) -> HostReference<Expected, Check>;
template <class Expected, class Check, class Clear>
HostReference(Expected, Check, Clear) -> HostReference<Expected, Check, Clear>;

namespace detail {
template <class V>
inline constexpr bool is_host_reference_v = false;
template <class Expected, class Check, class Clear>
inline constexpr bool is_host_reference_v<HostReference<Expected, Check, Clear>> = true;
/// Whether validator V clears the shared outputs before each candidate's validation.
template <class V>
inline constexpr bool clears_outputs_v = false;
template <class Expected, class Check, class Clear>
inline constexpr bool clears_outputs_v<HostReference<Expected, Check, Clear>> =
    !std::is_same_v<Clear, NoClear>;
}  // namespace detail

}  // namespace tunekit
