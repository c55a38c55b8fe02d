// The compile-time check that every candidate of a set can be called with the op's inputs, made
// so that the compiler's first error names the candidate that cannot.
#pragma once

#include <cstddef>
#include <type_traits>

namespace tunekit {

/// How candidates are called: with these argument types, the client (the first one) optional.
template <class... Args>
struct called_as;

/// Never defined: the error a misfit candidate gives. Its text names the candidate's position
/// among the set's `.with(...)` entries (`Index`, from 0), its type (for a lambda, its parameter
/// list, constness included) and the call it was expected to accept (`CalledAs`).
template <std::size_t Index, class Candidate, class CalledAs>
struct candidate_cannot_be_called_with;

namespace detail {

template <class Fn, class Client, class... Args>
inline constexpr bool fits_call =
    std::is_invocable_v<const Fn&, Client&, Args&...> || std::is_invocable_v<const Fn&, Args&...>;

/// True when candidate `Fn` (entry `Index`) fits; otherwise a compile error whose first line is
/// "invalid application of 'sizeof' to incomplete type
/// 'tunekit::candidate_cannot_be_called_with<1, <lambda(const float&)>, called_as<Client&,
/// int&>>'".
template <std::size_t Index, class Fn, class Client, class... Args>
constexpr bool check_candidate() {
  if constexpr (fits_call<Fn, Client, Args...>) {
    return true;
  } else {
    return sizeof(candidate_cannot_be_called_with<Index, Fn, called_as<Client&, Args&...>>) == 0;
  }
}

}  // namespace detail
}  // namespace tunekit
