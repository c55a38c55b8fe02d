// The library's messages to a person, in one place: warnings on stderr (std::cerr), and what a
// LogLevel of info or debug asks for (a tuning's table, where a winner came from) on std::clog.
// Lines written by several threads stay whole. Every message starts with "tunekit: "; one about
// a key of an op starts with about(op, key).
#pragma once

#include <string>
#include <string_view>

namespace tunekit {

/// Writes a warning line to stderr; the library's single place for it.
void warn(const std::string& message);

/// Writes `text` (one or more whole lines) to std::clog: what Settings::log = info or debug
/// asks for.
void inform(const std::string& text);

/// "tunekit: <op> [<key>]: ", the start of every message about one key of one op.
std::string about(std::string_view op, std::string_view key);

}  // namespace tunekit
