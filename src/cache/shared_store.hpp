// How make_result_store (file_store.cpp) adds the shared store that Settings::store names.
#pragma once

#include <memory>

#include "tunekit/result_store.hpp"

namespace tunekit {
struct Settings;
namespace detail {

/// `local` alone when `settings.store` is empty; else a LayeredStore of `local` in front of
/// that store. A store that cannot be used (bad URL, a build without Redis) is reported once
/// and left out: tuning goes on with `local`.
std::shared_ptr<ResultStore> with_shared_store(const Settings& settings,
                                               std::shared_ptr<ResultStore> local);

}  // namespace detail
}  // namespace tunekit
