// RedisStore in a build without hiredis (TUNEKIT_WITH_REDIS off): it cannot be made.
#include "tunekit/error.hpp"
#include "tunekit/redis_store.hpp"

namespace tunekit {

struct RedisStore::Impl {};

bool redis_store_built() noexcept { return false; }

RedisStore::RedisStore(StoreAddress address) : RedisStore(std::move(address), Options{}) {}
RedisStore::RedisStore(StoreAddress address, Options) {
  throw AutotuneError(ErrorKind::settings,
                      "this tunekit was built without its Redis store (hiredis was not found: "
                      "install libhiredis-dev and rebuild with -DTUNEKIT_WITH_REDIS=ON), so " +
                          address.url() + " cannot be used");
}
// Never reached: no RedisStore exists in this build.
RedisStore::~RedisStore() = default;
std::optional<StoredResult> RedisStore::load(const EntryId&) { return std::nullopt; }
void RedisStore::save(const EntryId&, const StoredResult&) {}
std::unique_ptr<TuningLock> RedisStore::lock_for_tuning(const EntryId&) { return nullptr; }
TuningLockAttempt RedisStore::try_lock_for_tuning(const EntryId&,
                                                  std::chrono::steady_clock::time_point) {
  return {};
}
std::vector<CacheEntry> RedisStore::entries() const { return {}; }
std::vector<CacheEntry> RedisStore::entries(std::string_view) const { return {}; }
std::vector<std::string> RedisStore::ops() const { return {}; }
std::size_t RedisStore::save_entries(const std::vector<CacheEntry>&, ImportMode) { return 0; }
std::size_t RedisStore::export_to(const std::filesystem::path&) const { return 0; }
std::size_t RedisStore::import_from(const std::filesystem::path&, ImportMode) { return 0; }
std::size_t RedisStore::clear() { return 0; }
std::size_t RedisStore::clear(std::string_view) { return 0; }
bool RedisStore::reachable() const { return false; }
std::size_t RedisStore::pending() const { return 0; }
const StoreAddress& RedisStore::address() const noexcept {
  static const StoreAddress none;
  return none;
}

}  // namespace tunekit
