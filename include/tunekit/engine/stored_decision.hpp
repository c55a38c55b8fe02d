// The decision a store holds for a key, once it may serve: a winner from elsewhere (a shared
// store, an imported bundle) must first give an output the set's validator accepts on this
// machine, once per process, so that a forged or foreign entry cannot make a program wrong
// (issue 30, R3; docs/cache.md). A winner that passes is adopted (a shared store's entry then
// reaches the local cache); one that does not is said, and the key is tuned, its result
// replacing the entry.
#pragma once

#include <optional>
#include <string>

#include "tunekit/device_id.hpp"
#include "tunekit/engine/decision.hpp"
#include "tunekit/engine/persistence.hpp"
#include "tunekit/engine/tuning_run.hpp"
#include "tunekit/log.hpp"
#include "tunekit/settings.hpp"

namespace tunekit::detail {

/// `records.load(id, ...)`'s decision for `key` of `set`, when it may serve: stored here, or from
/// elsewhere and right on the key's benchmark inputs (checked with the tuner's `op`, `device` and
/// `settings` on `client`). Nothing when there is none or it is wrong here (said). Throws the
/// caller's failures (input generator, validator) as a tuning does (TuningRun::check_one).
template <class Key, class Client, class Set, class... Inputs>
std::optional<Decision> stored_decision(Persistence& records, const EntryId& id,
                                        bool report_mismatch, const std::string& op,
                                        const DeviceId& device, const Settings& settings,
                                        Client& client, const Set& set, const Key& key,
                                        Inputs&... inputs) {
  auto stored = records.load(id, NamesOf(set), report_mismatch);
  if (!stored || !stored->from_elsewhere || stored->failed()) return stored;
  TuningRun<Key, Client, Set, Inputs...> run(op, device.identity(), settings, client, set, key, {},
                                             0, inputs...);
  if (auto wrong = run.check_one(stored->index)) {
    warn(about(op, id.key) + "the " + std::string(stored->source) + " names '" +
         set.name(stored->index) + "', which gives a wrong output here (" + wrong->message() +
         "); tuning the key instead");
    records.reject(id);
    return std::nullopt;
  }
  records.adopt(id);
  return stored;
}

}  // namespace tunekit::detail
