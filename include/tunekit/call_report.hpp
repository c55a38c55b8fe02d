// What the last execute() on this thread did: dispatched a known winner, loaded one from the
// persistent cache, tuned, fell back to another candidate, or failed.
#pragma once

#include <cstdint>
#include <string_view>

namespace tunekit {

/// How a call was served.
enum class CallPath : std::uint8_t {
  none,         ///< no execute() on this thread yet
  dispatched,   ///< the winner was known in memory (or decided by another thread meanwhile)
  loaded,       ///< the winner was read from the persistent cache, then run
  tuned,        ///< this call tuned the key, then ran the winner
  fell_back,    ///< the winner failed on these inputs and another working candidate served them
  failed,       ///< the call threw (a remembered failure, every candidate failed, or the inputs)
  provisional,  ///< the key is being tuned in the background (Settings::tuning): a provisional
                ///< candidate served the call
};

/// "dispatched", "loaded", ...
constexpr std::string_view to_string(CallPath path) noexcept {
  switch (path) {
    case CallPath::none:
      return "none";
    case CallPath::dispatched:
      return "dispatched";
    case CallPath::loaded:
      return "loaded";
    case CallPath::tuned:
      return "tuned";
    case CallPath::fell_back:
      return "fell back";
    case CallPath::failed:
      return "failed";
    case CallPath::provisional:
      return "provisional";
  }
  return "?";
}

/// One call: its op (valid while its LocalTuner lives), how it was served and which candidate
/// (set index) ran last: the winner, or the one that served a fallback.
struct CallReport {
  std::string_view op;
  CallPath path = CallPath::none;
  std::uint32_t candidate = 0;
  const void* tuner = nullptr;  ///< the Tuner that served it (LocalTuner::last_call filters on it)
  /// Where the result that served it came from (valid while its LocalTuner lives): "computed"
  /// (tuned in this process), "local cache DIR", "shared store redis://HOST:PORT/DB...",
  /// "bundle FILE, in the ..." (imported with `tunekit cache import`), "provisional" (a
  /// background tuning is running), "the only candidate"; empty before the first call.
  std::string_view source = {};
};

namespace detail {
inline thread_local CallReport this_thread_call;  // trivially constructed: no guard on access

inline void note_call(const void* tuner, std::string_view op, CallPath path,
                      std::uint32_t candidate, std::string_view source = {}) noexcept {
  this_thread_call = CallReport{op, path, candidate, tuner, source};
}
}  // namespace detail

/// What the last execute() of any op did on this thread. Costs the hot path one thread-local
/// store; nothing is allocated.
inline const CallReport& last_call() noexcept { return detail::this_thread_call; }

}  // namespace tunekit
