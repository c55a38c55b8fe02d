// LocalTuner declared, not defined: what a header that only names an op's LocalTuner (the shipped
// ops' *_tuner()) needs, without the engine it is defined over (local_tuner.hpp).
#pragma once

#include "tunekit/key.hpp"

namespace tunekit {

template <AutotuneKey Key>
class LocalTuner;

}  // namespace tunekit
