// The hot path (winner already known) allocates nothing: counted with a replaced operator new.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <new>
#include <tunekit/tunekit.hpp>

#include "../support.hpp"

namespace {
std::atomic<long> allocations{0};
}

// Replacing the global allocation functions is the point here; GCC cannot see that they pair.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// Every other unaligned form too: with only the two above replaced, memory from the library's own
// nothrow or array new (Catch2 uses `new (std::nothrow)`) reached the free() above, an
// alloc-dealloc mismatch that AddressSanitizer reported at exit of every core test.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

using namespace tunekit;
using test::SizeKey;

TEST_CASE("a cached execute allocates nothing", "[hot path]") {
  LocalTuner<SizeKey> tuner("no allocations", test::test_settings());
  HostClient host;
  auto key_of = [](const std::uint64_t& n) { return SizeKey{n}; };
  const auto& set = tuner.init([&] {
    return TunableSet{key_of, CloneInputs{}}
        .with(Tunable{"add", [](std::uint64_t& n) { return n + 1; }})
        .with(Tunable{"add too", [](std::uint64_t& n) { return n + 1; }});
  });
  for (std::uint64_t n = 1; n <= 1024; n *= 2) tuner.execute(host.id(), host, set, n);  // tune
  const long before = allocations.load();
  std::uint64_t sum = 0;
  for (int i = 0; i < 10000; ++i) {
    sum += tuner.execute(host.id(), host, set, std::uint64_t{1} << (i % 11));
  }
  CHECK(allocations.load() - before == 0);
  CHECK(sum > 0);
}
