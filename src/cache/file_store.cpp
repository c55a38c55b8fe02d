// Placeholder until the file store lands (issue 4): no persistence yet.
#include "tunekit/result_store.hpp"
#include "tunekit/settings.hpp"

namespace tunekit {
std::shared_ptr<ResultStore> make_result_store(const Settings&) { return nullptr; }
}  // namespace tunekit
