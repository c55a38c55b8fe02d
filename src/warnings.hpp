// The library's warnings (private): warn() and the rest of the sink are in tunekit/log.hpp.
#pragma once

#include <string>

#include "tunekit/log.hpp"

namespace tunekit {

/// warn(), but each distinct message once per process, however often it is met (a bad cache
/// file read by every lookup, a binary that cannot be stored).
void warn_once(const std::string& message);

/// Draws a status line (the progress line) on stderr: `in_place` (a terminal) over the one
/// drawn before, else as a line of its own. warn() and inform() clear a line drawn in place
/// before they write, and so does the process's exit.
void draw_status_line(const std::string& line, bool in_place);
/// Clears the status line drawn in place, if there is one.
void clear_status_line();

}  // namespace tunekit
