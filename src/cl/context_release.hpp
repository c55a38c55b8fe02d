// What holds a Client's context past the Client: caches keyed by a context (the ops' scratch
// buffers, kept between calls) hold buffers, and a buffer keeps its context alive. Each such
// cache registers a hook here; a Client's end calls them with its context, and they drop what
// they hold for it, so that the context and its device memory go with the Client (a program
// that makes a client per job kept every job's context and scratch before).
#pragma once

#include <cstddef>
#include <functional>

#include "tunekit/cl/opencl.hpp"

namespace tunekit::cl::detail {

/// Registers `drop`, called with each context whose Client ends (on that Client's thread, with
/// no lock of this registry's held while it runs); the handle removes it.
std::size_t on_context_release(std::function<void(cl_context)> drop);
/// Removes a hook (its owner ends); after it returns, the hook is not running and never runs.
void forget_context_release(std::size_t handle);
/// Calls every hook with `context` (Client's destructor).
void context_released(cl_context context);

}  // namespace tunekit::cl::detail
