// Device buffers kept between calls of a shipped op (allocating them on every call costs more
// than a small reduction or product): `Count` buffers per context and thread, grown on demand.
// Calls from one thread run in queue order, so reusing its buffers is safe; another thread gets
// its own.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "tunekit/cl/client.hpp"

namespace tunekit::ops::detail {

template <std::size_t Count>
class Scratch {
 public:
  enum class Contents { any, zeros };
  /// `zeros`: each buffer is filled with zero bytes when it is made (through the caller's queue,
  /// ahead of what the caller enqueues next): for counts that every use leaves zero again.
  explicit Scratch(Contents contents = Contents::any) : contents_(contents) {}

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
  struct Slot {
    std::size_t bytes = 0;
    std::array<::cl::Buffer, Count> buffers;
  };
  Contents contents_;
  std::mutex mutex_;
  std::map<std::pair<cl_context, std::thread::id>, Slot> slots_;
};

}  // namespace tunekit::ops::detail
