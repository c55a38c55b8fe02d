// Moved to tunekit/detail/call.hpp, the one home of calling a candidate; kept for code that
// includes it here.
#pragma once

#include "tunekit/detail/call.hpp"
