// Calling a candidate, in one place: where it lives in a set (CandidateLocation), calling its
// callable with or without the client (invoke_tunable), the result type every candidate of a set
// shares (common_call_result_t), and calling it as execute() does, a tunekit::Result unwrapped
// (call_unwrapped). The set's own table of calls is TunableSet::call (tunable_set.hpp). Also
// calling the user's input generator and validator with or without the client.
#pragma once

#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>

#include "tunekit/result.hpp"

namespace tunekit {

/// Where a candidate lives in a set: which `.with(...)` entry, and which variant inside it.
struct CandidateLocation {
  std::uint32_t entry = 0;
  std::uint32_t variant = 0;
};

namespace detail {

/// Calls a tunable with the client first when it takes it, else with the inputs alone.
template <class Fn, class Client, class... Args>
decltype(auto) invoke_tunable(const Fn& fn, Client& client, Args&... args) {
  if constexpr (std::is_invocable_v<const Fn&, Client&, Args&...>) {
    return std::invoke(fn, client, args...);
  } else {
    static_assert(std::is_invocable_v<const Fn&, Args&...>,
                  "a tunable cannot be called with the benchmark inputs (nor with the client "
                  "followed by them): check its parameters against the input generator's result");
    return std::invoke(fn, args...);
  }
}

// What a call through the set returns: the tunables' common return type, or Result<T> when some
// return T and others Result<T>.
struct mismatched_results {};
template <class... R>
struct common_call_result {
  using type = mismatched_results;
};
template <class R>
struct common_call_result<R> {
  using type = R;
};
template <class R0, class R1, class... Rest>
struct common_call_result<R0, R1, Rest...> {
  using type = std::conditional_t<
      (std::is_same_v<R0, R1> && ... && std::is_same_v<R0, Rest>), R0,
      std::conditional_t<(std::is_same_v<unwrapped_result_t<R0>, unwrapped_result_t<R1>> && ... &&
                          std::is_same_v<unwrapped_result_t<R0>, unwrapped_result_t<Rest>>),
                         Result<unwrapped_result_t<R0>>, mismatched_results>>;
};
template <class... R>
using common_call_result_t = typename common_call_result<R...>::type;

/// `fn` can be called as fn(args...) or, failing that, as fn(client, args...).
template <class Fn, class Client, class... Args>
concept InvocableMaybeClient =
    std::is_invocable_v<const Fn&, Args...> || std::is_invocable_v<const Fn&, Client&, Args...>;

/// fn(args...) when `fn` takes that (what it always took: existing input generators and
/// validators keep their meaning, generic ones included), else fn(client, args...), so that an
/// OpenCL op's generator can allocate its buffers through the client.
template <class Fn, class Client, class... Args>
requires InvocableMaybeClient<Fn, Client, Args...>
decltype(auto) invoke_maybe_client(const Fn& fn, Client& client, Args&&... args) {
  if constexpr (std::is_invocable_v<const Fn&, Args...>) {
    return std::invoke(fn, std::forward<Args>(args)...);
  } else {
    return std::invoke(fn, client, std::forward<Args>(args)...);
  }
}

template <class Fn, class Client, class... Args>
using maybe_client_result_t = decltype(invoke_maybe_client(
    std::declval<const Fn&>(), std::declval<Client&>(), std::declval<Args>()...));

}  // namespace detail

/// What a call through `set` returns once a tunekit::Result is unwrapped.
template <class Set, class Client, class... Inputs>
using execute_result_t = unwrapped_result_t<decltype(std::declval<const Set&>().call(
    CandidateLocation{}, std::declval<Client&>(), std::declval<Inputs&>()...))>;

namespace detail {

/// Calls candidate `where` of `set`; a failed tunekit::Result is thrown as its error.
template <class Client, class Set, class... Args>
execute_result_t<Set, Client, Args...> call_unwrapped(CandidateLocation where, Client& client,
                                                      const Set& set, Args&... args) {
  using Raw = decltype(set.call(where, client, args...));
  if constexpr (is_result_v<Raw>) {
    Raw result = set.call(where, client, args...);
    if (!result) throw result.error();
    if constexpr (!std::is_void_v<typename Raw::value_type>) return std::move(result).value();
  } else {
    return set.call(where, client, args...);
  }
}

}  // namespace detail
}  // namespace tunekit
