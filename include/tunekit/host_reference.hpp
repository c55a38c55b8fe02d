// HostReference: a validator whose reference is computed on the host from the benchmark inputs,
// instead of being the output of the first candidate that runs. With it, a wrong first
// candidate cannot become the standard every other candidate is judged by.
#pragma once

#include <functional>
#include <type_traits>
#include <utility>

namespace tunekit {

/// `.validate_with(HostReference{expected, check})`: `expected(inputs...)` (or
/// `expected(client, inputs...)`) computes on the host, from a candidate's benchmark inputs, what
/// every candidate must return (for candidates returning void: the inputs tuple as it must be
/// after the call); `check(expected, candidate)` (or with the client first) compares, as a
/// validate_with check does. `expected` may return any type its check takes (a sample of the
/// output, say, so that validation reads no more than it compares). It must not change the
/// inputs: with share_inputs(), they are the ones the candidates run on.
template <class Expected, class Check>
struct HostReference {
  Expected expected;
  Check check;

  /// The comparison: the set calls its validator as it calls any check.
  template <class... Args>
  requires std::is_invocable_v<const Check&, Args...>
  decltype(auto) operator()(Args&&... args) const {
    return std::invoke(check, std::forward<Args>(args)...);
  }
};

template <class Expected, class Check>
HostReference(Expected, Check) -> HostReference<Expected, Check>;

namespace detail {
template <class V>
inline constexpr bool is_host_reference_v = false;
template <class Expected, class Check>
inline constexpr bool is_host_reference_v<HostReference<Expected, Check>> = true;
}  // namespace detail

}  // namespace tunekit
