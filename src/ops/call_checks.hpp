// Checks of a shipped op's call that need the client, made before its tuner sees the call (the
// key generators see the inputs only): every buffer belongs to the client's OpenCL context, and
// no output is also an input, nor shares bytes with one through a sub-buffer. Either mistake would
// otherwise fail every candidate, and that failure would be remembered on disk for the key (or,
// aliased, give a wrong result silently).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "tunekit/cl/client.hpp"

namespace tunekit::ops::detail {

/// A buffer of a call and the name the error gives it.
struct CallBuffer {
  const ::cl::Buffer& buffer;
  const char* name;
};

/// The memory a buffer covers: its parent (itself when it is no sub-buffer) and the byte range
/// in it. OpenCL has no sub-buffers of sub-buffers: one level is all there is.
struct BufferRange {
  cl_mem parent = nullptr;
  std::size_t offset = 0;
  std::size_t size = 0;
};

inline BufferRange buffer_range(cl_mem buffer) {
  BufferRange range{buffer, 0, 0};
  cl_mem associated = nullptr;
  if (::clGetMemObjectInfo(buffer, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof associated, &associated,
                           nullptr) == CL_SUCCESS &&
      associated != nullptr) {
    range.parent = associated;
    (void)::clGetMemObjectInfo(buffer, CL_MEM_OFFSET, sizeof range.offset, &range.offset, nullptr);
  }
  (void)::clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof range.size, &range.size, nullptr);
  return range;
}

/// Whether two buffers share a byte: the same buffer, or (sub-)buffers of one parent whose
/// ranges overlap.
inline bool overlap(cl_mem a, cl_mem b) {
  if (a == nullptr || b == nullptr) return false;
  if (a == b) return true;
  const BufferRange x = buffer_range(a), y = buffer_range(b);
  if (x.parent != y.parent) return false;
  if (x.size == 0 || y.size == 0) return true;  // a size unknown: assume the worst
  return x.offset < y.offset + y.size && y.offset < x.offset + x.size;
}

inline void check_call(cl::Client& client, const char* op, std::initializer_list<CallBuffer> inputs,
                       std::initializer_list<CallBuffer> outputs) {
  const cl_context own = client.context()();
  const auto check_context = [&](const CallBuffer& b) {
    if (b.buffer() == nullptr) return;  // the key generator says so
    cl_context made_in = nullptr;
    if (::clGetMemObjectInfo(b.buffer(), CL_MEM_CONTEXT, sizeof made_in, &made_in, nullptr) ==
            CL_SUCCESS &&
        made_in != own) {
      throw std::invalid_argument(std::string(op) + ": " + b.name +
                                  " was made in another OpenCL context than the client's; make "
                                  "it with this client (or its context)");
    }
  };
  for (const auto& input : inputs) check_context(input);
  for (const auto& output : outputs) {
    check_context(output);
    for (const auto& input : inputs) {
      if (output.buffer() != nullptr && output.buffer() == input.buffer()) {
        throw std::invalid_argument(std::string(op) + ": " + output.name + " is also " +
                                    input.name +
                                    ": the kernels would overwrite what they still read; give "
                                    "the output a buffer of its own");
      }
      if (overlap(output.buffer(), input.buffer())) {
        throw std::invalid_argument(std::string(op) + ": " + output.name + " overlaps " +
                                    input.name +
                                    " (sub-buffers of one buffer sharing bytes): the kernels "
                                    "would overwrite what they still read; give the output "
                                    "memory of its own");
      }
    }
  }
}

}  // namespace tunekit::ops::detail
