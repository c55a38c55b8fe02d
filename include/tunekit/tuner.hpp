// Moved to tunekit/engine/tuner.hpp with the rest of the engine (the code the API runs on); kept
// for code that includes it here.
#pragma once

#include "tunekit/engine/tuner.hpp"
