// Calling the user's input generator and validator with or without the client.
#pragma once

#include <functional>
#include <type_traits>
#include <utility>

namespace tunekit::detail {

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

}  // namespace tunekit::detail
