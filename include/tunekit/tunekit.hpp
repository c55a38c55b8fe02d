// tunekit: pick the fastest implementation of an op for this device and problem size, remember
// it, and dispatch to it at near-zero cost. The core; the OpenCL runtime is in tunekit/cl.hpp.
#pragma once

#include "tunekit/anchor.hpp"
#include "tunekit/benchmark.hpp"
#include "tunekit/call_report.hpp"
#include "tunekit/device_id.hpp"
#include "tunekit/dtype.hpp"
#include "tunekit/error.hpp"
#include "tunekit/key.hpp"
#include "tunekit/local_tuner.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/result.hpp"
#include "tunekit/result_store.hpp"
#include "tunekit/search.hpp"
#include "tunekit/settings.hpp"
#include "tunekit/space.hpp"
#include "tunekit/static_space.hpp"
#include "tunekit/timing_client.hpp"
#include "tunekit/tunable.hpp"
#include "tunekit/tunable_set.hpp"
#include "tunekit/tuner.hpp"
