// The library's messages to a person: one sink (stderr), one line format ("tunekit: <op>
// [<key>]: ..." where a tuning is concerned), lines from threads kept whole.
#pragma once

#include <string>

namespace tunekit {

/// Writes a warning line to stderr; the library's single place for it.
void warn(const std::string& message);

}  // namespace tunekit
