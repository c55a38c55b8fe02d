// Moved to tunekit/engine/tuning_run.hpp with the rest of the engine (the code the API runs on);
// kept for code that includes it here.
#pragma once

#include "tunekit/engine/tuning_run.hpp"
