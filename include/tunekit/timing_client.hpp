// TimingClient: where a candidate runs and how long it took. The core measures through this
// concept only; HostClient (steady clock) and cl::Client (OpenCL profiling events) model it.
#pragma once

#include <chrono>
#include <concepts>
#include <cstddef>
#include <string>

#include "tunekit/detail/function_ref.hpp"
#include "tunekit/device_id.hpp"

namespace tunekit {

/// Concept: runs `work` `batch` times and returns the elapsed time of the whole batch in
/// seconds, as the device saw it; says which device it is and how fine its timer is.
template <class C>
concept TimingClient = requires(C& client, const C& cclient, FunctionRef<void()> work,
                                std::size_t batch) {
  { client.measure(work, batch) } -> std::convertible_to<double>;
  { cclient.timer_resolution() } -> std::convertible_to<double>;
  { cclient.id() } -> std::convertible_to<const DeviceId&>;
};

/// What the measuring code (benchmark.hpp, compiled once in src/benchmark.cpp) sees of a
/// TimingClient: its measure() and timer_resolution(), type-erased. It refers to the client,
/// which must outlive it.
class Timer {
 public:
  template <TimingClient Client>
  explicit Timer(Client& client) noexcept
      : client_(&client),
        measure_([](void* c, FunctionRef<void()> work, std::size_t batch) -> double {
          return static_cast<Client*>(c)->measure(work, batch);
        }),
        resolution_([](const void* c) -> double {
          return static_cast<const Client*>(c)->timer_resolution();
        }) {}

  /// The client's measure(work, batch): seconds for the whole batch.
  double measure(FunctionRef<void()> work, std::size_t batch) const {
    return measure_(client_, work, batch);
  }
  /// The client's timer_resolution().
  double resolution() const { return resolution_(client_); }

 private:
  void* client_;
  double (*measure_)(void*, FunctionRef<void()>, std::size_t);
  double (*resolution_)(const void*);
};

/// A client whose work runs asynchronously and can be waited for (cl::Client): the tuner waits
/// before a validator reads a candidate's output.
template <class C>
concept AsynchronousClient = requires(C& client) {
  client.finish();
};

/// Waits for `client`'s work where it runs asynchronously; nothing to do otherwise.
template <class C>
void wait_for(C& client) {
  if constexpr (AsynchronousClient<C>) client.finish();
}

/// Runs candidates on the host and times them with std::chrono::steady_clock.
class HostClient {
 public:
  HostClient();
  explicit HostClient(DeviceId id) : id_(std::move(id)) {}

  const DeviceId& id() const noexcept { return id_; }

  double measure(FunctionRef<void()> work, std::size_t batch) {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < batch; ++i) work();
    const auto stop = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(stop - start).count();
  }

  /// Finer than this, a single sample is mostly clock overhead: the runner batches instead.
  double timer_resolution() const noexcept { return 1e-6; }

 private:
  DeviceId id_;
};

}  // namespace tunekit
