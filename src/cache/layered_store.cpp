// LayeredStore: the local file store in front, a shared (Redis) store behind it.
#include <set>

#include "../warnings.hpp"
#include "shared_store.hpp"
#include "tunekit/error.hpp"
#include "tunekit/redis_store.hpp"
#include "tunekit/settings.hpp"

namespace tunekit {
namespace {

/// Both stores' locks, released in the reverse order of taking.
class BothLocks final : public TuningLock {
 public:
  BothLocks(std::unique_ptr<TuningLock> local, std::unique_ptr<TuningLock> remote)
      : local_(std::move(local)), remote_(std::move(remote)) {}
  ~BothLocks() override { remote_.reset(); }

 private:
  std::unique_ptr<TuningLock> local_;
  std::unique_ptr<TuningLock> remote_;
};

/// Every live layered store, for LayeredStore::flush_all().
// Never destroyed: stores held by static tuners unregister in their destructors at exit, after
// a static set would already be gone.
std::mutex& registry_mutex = *new std::mutex;
std::set<LayeredStore*>& registry() {
  static auto& stores = *new std::set<LayeredStore*>;
  return stores;
}

}  // namespace

LayeredStore::LayeredStore(std::shared_ptr<ResultStore> local, std::shared_ptr<ResultStore> remote)
    : local_(std::move(local)), remote_(std::move(remote)) {
  std::lock_guard lock(registry_mutex);
  registry().insert(this);
}

void LayeredStore::flush() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return to_keep_.empty() && !writing_; });
}

void LayeredStore::flush_all() {
  // Under the registry's lock: no store is destroyed while it is flushed.
  std::lock_guard lock(registry_mutex);
  for (LayeredStore* store : registry()) store->flush();
}

std::optional<StoredResult> LayeredStore::load(const EntryId& id) {
  if (local_) {
    {
      // Adopted a moment ago and not written yet: a second lookup does not ask the server again.
      std::lock_guard lock(mutex_);
      for (const auto& entry : to_keep_) {
        if (entry.id.op == id.op && entry.id.device == id.device && entry.id.key == id.key &&
            entry.id.checksum == id.checksum) {
          return entry.result;
        }
      }
    }
    if (auto found = local_->load(id)) return found;
  }
  if (!remote_) return std::nullopt;
  // Not kept locally yet: another machine's entry is kept once its winner validated here
  // (adopt), so that a forged one never reaches this machine's disk.
  return remote_->load(id);
}

void LayeredStore::adopt(const EntryId& id, const StoredResult& result) {
  // Kept locally, the next process on this machine starts from its own disk; written by a
  // thread, as the local store's writes are synced (fsync) and this caller waits for its op.
  if (!local_) return;
  try {
    StoredResult kept = result;
    kept.shared = false;
    kept.source.clear();
    keep_locally(id, kept);
  } catch (const std::exception&) {  // no memory for the copy: the next process fetches it again
  }
}

void LayeredStore::keep_locally(const EntryId& id, const StoredResult& result) {
  std::lock_guard lock(mutex_);
  to_keep_.push_back(CacheEntry{id, result});
  if (!keeper_.joinable()) {
    keeper_ = std::thread([this] {
      std::unique_lock lock(mutex_);
      for (;;) {
        wake_.wait(lock, [this] { return stopping_ || !to_keep_.empty(); });
        if (to_keep_.empty()) return;  // stopping, nothing left
        const CacheEntry entry = std::move(to_keep_.front());
        to_keep_.pop_front();
        writing_ = true;
        lock.unlock();
        local_->save(entry.id, entry.result);  // never throws: reports a failure itself
        lock.lock();
        writing_ = false;
        if (to_keep_.empty()) idle_.notify_all();
      }
    });
  }
  wake_.notify_one();
}

LayeredStore::~LayeredStore() {
  {
    std::lock_guard lock(registry_mutex);
    registry().erase(this);
  }
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (keeper_.joinable()) keeper_.join();  // what was fetched is on disk before the exit
}

std::vector<AutotuneOutcome> LayeredStore::load_progress(const EntryId& id) {
  return local_ ? local_->load_progress(id) : std::vector<AutotuneOutcome>{};
}

void LayeredStore::save_progress(const EntryId& id, const std::vector<AutotuneOutcome>& outcomes) {
  if (local_) local_->save_progress(id, outcomes);
}

void LayeredStore::drop_progress(const EntryId& id) {
  if (local_) local_->drop_progress(id);
}

void LayeredStore::save(const EntryId& id, const StoredResult& result) {
  if (local_) local_->save(id, result);
  if (remote_) remote_->save(id, result);
}

std::unique_ptr<TuningLock> LayeredStore::lock_for_tuning(const EntryId& id) {
  // This machine's processes first (they share the local directory), then the fleet's: always
  // in this order, so that two holders never wait for each other.
  std::unique_ptr<TuningLock> local = local_ ? local_->lock_for_tuning(id) : nullptr;
  std::unique_ptr<TuningLock> remote = remote_ ? remote_->lock_for_tuning(id) : nullptr;
  return std::make_unique<BothLocks>(std::move(local), std::move(remote));
}

TuningLockAttempt LayeredStore::try_lock_for_tuning(
    const EntryId& id, std::chrono::steady_clock::time_point waiting_since) {
  // The same order as lock_for_tuning; a local lock taken is let go while the lease is busy.
  TuningLockAttempt local, remote;
  if (local_) local = local_->try_lock_for_tuning(id, waiting_since);
  if (local.busy) return local;
  if (remote_) remote = remote_->try_lock_for_tuning(id, waiting_since);
  if (remote.busy) return remote;
  return {std::make_unique<BothLocks>(std::move(local.lock), std::move(remote.lock)), false};
}

std::vector<std::string> LayeredStore::winners(const std::string& device, const std::string& op,
                                               std::uint64_t checksum) {
  // A hint for where a new key's search starts: the local index is enough (results fetched
  // from the shared store are kept locally, so it knows them too).
  return local_ ? local_->winners(device, op, checksum) : std::vector<std::string>{};
}

std::shared_ptr<ResultStore> detail::with_shared_store(const Settings& settings,
                                                       std::shared_ptr<ResultStore> local) {
  if (settings.store.empty()) return local;
  try {
    RedisStore::Options options;
    options.password = settings.store_password;
    auto remote = std::make_shared<RedisStore>(parse_store_url(settings.store, "Settings::store"),
                                               std::move(options));
    return std::make_shared<LayeredStore>(std::move(local), std::move(remote));
  } catch (const AutotuneError& e) {
    warn_once("tunekit: " + e.message() + "; using the local cache only");
    return local;
  }
}

}  // namespace tunekit
