// The library's warnings on stderr (private): warn() is declared for users in log.hpp.
#pragma once

#include <string>

namespace tunekit {

void warn(const std::string& message);
/// warn(), but each distinct message once per process, however often it is met (a bad cache
/// file read by every lookup, a binary that cannot be stored).
void warn_once(const std::string& message);

}  // namespace tunekit
