// Checks of a shipped op's call that need the client, made before its tuner sees the call (the
// key generators see the inputs only): every buffer belongs to the client's OpenCL context, and
// no output is also an input. Either mistake would otherwise fail every candidate, and that
// failure would be remembered on disk for the key (or, aliased, give a wrong result silently).
#pragma once

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
    }
  }
}

}  // namespace tunekit::ops::detail
