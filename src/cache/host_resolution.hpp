// A store's host name resolved within a deadline (redis_store.cpp): getaddrinfo blocks for as
// long as the system's resolver takes (5 s a try and more: resolv.conf, RES_OPTIONS) and cannot
// be cancelled. Internal; the tests give a resolver that does not answer.
#pragma once

#include <netdb.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace tunekit::detail {

struct AddressListDeleter {
  void operator()(addrinfo* list) const noexcept { ::freeaddrinfo(list); }
};
/// What getaddrinfo found.
using AddressList = std::unique_ptr<addrinfo, AddressListDeleter>;

/// getaddrinfo, or one that gives what it gives (a list freeaddrinfo frees).
using Resolver = int (*)(const char* host, const char* service, const addrinfo* hints,
                         addrinfo** found);

/// The TCP addresses of `host`:`port` by `deadline`, or null with `why` set. A literal address
/// is taken at once, without the resolver; a name is resolved by `resolver` on a thread of its
/// own, waited for until `deadline`: one still busy then is left to end alone (and free what it
/// found), and `why` is "could not resolve HOST within N ms".
AddressList resolve_within(const std::string& host, std::uint16_t port,
                           std::chrono::steady_clock::time_point deadline, std::string& why,
                           Resolver resolver = ::getaddrinfo);

}  // namespace tunekit::detail
