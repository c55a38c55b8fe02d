// The library's warnings (private): warn() and the rest of the sink are in tunekit/log.hpp.
#pragma once

#include <string>

#include "tunekit/log.hpp"

namespace tunekit {

/// warn(), but each distinct message once per process, however often it is met (a bad cache
/// file read by every lookup, a binary that cannot be stored).
void warn_once(const std::string& message);

}  // namespace tunekit
