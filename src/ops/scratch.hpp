// Device buffers kept between calls of a shipped op (allocating them on every call costs more
// than a small reduction or product): `Count` buffers per context and thread, grown on demand,
// dropped when the client of their context ends (context_release.hpp).
// Calls from one thread run in queue order, so reusing its buffers is safe; another thread gets
// its own.
// A shipped op's statics that its candidates use (these buffers, kernel specs, the input
// sources) are never destroyed (`static auto& s = *new T`): made during a background tuning,
// they would be destroyed at exit before the handler that stops the tuning runs, and the tuning
// goes on during its grace (docs/settings.md, "Background tuning").
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "../cl/context_release.hpp"
#include "tunekit/cl/client.hpp"

namespace tunekit::ops::detail {

template <std::size_t Count>
class Scratch {
 public:
  enum class Contents { any, zeros };
  /// `zeros`: each buffer is filled with zero bytes when it is made (through the caller's queue,
  /// ahead of what the caller enqueues next): for counts that every use leaves zero again.
  explicit Scratch(Contents contents = Contents::any)
      : contents_(contents),
        release_(cl::detail::on_context_release([this](cl_context context) { drop(context); })) {}
  ~Scratch() { cl::detail::forget_context_release(release_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  /// `Count` buffers of at least `bytes` bytes each.
  std::array<::cl::Buffer, Count> buffers(cl::Client& client, std::size_t bytes) {
    std::lock_guard lock(mutex_);
    auto& slot = slots_[{client.context()(), std::this_thread::get_id()}];
    if (slot.bytes < bytes) {
      // All made before the slot says so: an allocation that fails (past the device's largest)
      // leaves the slot as it was, not claiming a size its buffers do not have.
      const std::size_t size = std::max<std::size_t>(bytes, 1);
      std::array<::cl::Buffer, Count> made;
      for (auto& buffer : made) {
        buffer = client.allocate(size);
        if (contents_ == Contents::zeros) client.fill(buffer, std::uint8_t{0}, size);
      }
      slot.buffers = std::move(made);
      slot.bytes = size;
    }
    return slot.buffers;
  }

 private:
  // A client's context ends with the client: its buffers go, with every thread's.
  void drop(cl_context context) {
    std::lock_guard lock(mutex_);
    std::erase_if(slots_, [&](const auto& slot) { return slot.first.first == context; });
  }

  struct Slot {
    std::size_t bytes = 0;
    std::array<::cl::Buffer, Count> buffers;
  };
  Contents contents_;
  std::size_t release_;  // the hook that drops a context's buffers
  std::mutex mutex_;
  std::map<std::pair<cl_context, std::thread::id>, Slot> slots_;
};

}  // namespace tunekit::ops::detail
