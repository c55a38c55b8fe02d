// Calling one candidate of a set as execute() does: a tunekit::Result it returns is unwrapped
// (its error thrown), so the tuner and the tuning run see a value or an exception.
#pragma once

#include <type_traits>
#include <utility>

#include "tunekit/result.hpp"
#include "tunekit/tunable_set.hpp"

namespace tunekit {

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
