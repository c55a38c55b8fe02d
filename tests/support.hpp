// Test support: a client whose clock is driven by the candidates themselves, so that timings are
// exact and tests are deterministic.
#pragma once

#include <atomic>
#include <cstddef>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <tunekit/tunekit.hpp>

#include "../bench/worse_error.hpp"

namespace tunekit::test {

/// Each candidate "costs" what it adds with spend(); measure() returns the sum over the batch,
/// optionally with multiplicative noise and rare outliers. Calls from several threads are safe
/// (a background tuning measures while the caller's calls run), though their costs then add up.
class VirtualClient {
 public:
  explicit VirtualClient(std::string name = "virtual device") : id_(std::move(name)) {}
  // As a client must (background.hpp): no background tuning outlives it.
  ~VirtualClient() { stop_background_tunings_using(this); }
  VirtualClient(const VirtualClient&) = delete;
  VirtualClient& operator=(const VirtualClient&) = delete;
  const DeviceId& id() const noexcept { return id_; }
  double timer_resolution() const noexcept { return 1e-9; }

  double measure(FunctionRef<void()> work, std::size_t batch) {
    elapsed_ = 0;
    for (std::size_t i = 0; i < batch; ++i) work();
    ++measurements_;
    double t = elapsed_.load();
    if (noise_ > 0) t *= 1 + std::uniform_real_distribution<double>(-noise_, noise_)(rng_);
    if (outlier_rate_ > 0 && std::bernoulli_distribution(outlier_rate_)(rng_)) t *= 10;
    return t;
  }

  void spend(double seconds) { elapsed_.fetch_add(seconds); }
  void set_noise(double relative, double outlier_rate = 0, unsigned seed = 1) {
    noise_ = relative;
    outlier_rate_ = outlier_rate;
    rng_.seed(seed);
  }
  std::size_t measurements() const noexcept { return measurements_; }

 private:
  DeviceId id_;
  std::atomic<double> elapsed_ = 0;
  double noise_ = 0;
  double outlier_rate_ = 0;
  std::atomic<std::size_t> measurements_ = 0;
  std::mt19937 rng_{1};
};

// A virtual device with a slow phase: its measurements number `from` to `to` (counted from 1)
// take `factor` times longer, as when another process takes the machine for a second.
class DriftingClient : public VirtualClient {
 public:
  DriftingClient(std::size_t from, std::size_t to, double factor)
      : from_(from), to_(to), factor_(factor) {}
  double measure(FunctionRef<void()> work, std::size_t batch) {
    const double t = VirtualClient::measure(work, batch);
    const std::size_t number = measurements();
    return number >= from_ && number <= to_ ? t * factor_ : t;
  }

 private:
  std::size_t from_, to_;
  double factor_;
};

/// Settings for tests: no persistent cache, quiet, small sample counts.
inline Settings test_settings() {
  Settings s;
  s.persistent_cache = false;
  s.log = LogLevel::quiet;
  BenchmarkSettings b;
  b.warmup_runs = 1;
  b.min_samples = 3;
  b.max_samples = 10;
  b.min_sample_seconds = 0;
  s.benchmark = b;
  return s;
}

/// test_settings() for tests that count tunings by the input generator's calls (one per
/// candidate measured): no interleaved confirmation of the best, which generates inputs again.
inline Settings counting_settings() {
  Settings s = test_settings();
  s.benchmark->confirm_contenders = 0;
  return s;
}

/// A key with one anchored size.
struct SizeKey {
  BOOST_HANA_DEFINE_STRUCT(SizeKey, (tunekit::Anchored<std::uint64_t>, n));
};

/// A set's key generator over one int (its size), and its input generator (the key's size).
inline constexpr auto size_key = [](const int& n) {
  return SizeKey{static_cast<std::uint64_t>(n)};
};
inline constexpr auto size_inputs = [](const SizeKey& key, const int&) {
  return std::tuple<int>(static_cast<int>(key.n.value()));
};

/// A candidate of `Client` (a VirtualClient-like one) that costs `seconds` a call.
template <class Client>
auto costs(double seconds) {
  return [=](Client& client, int&) { client.spend(seconds); };
}

/// A candidate of `Client` that returns its input plus `offset` (0: right, else wrong) and costs
/// `seconds` a call.
template <class Client>
auto adds(int offset, double seconds) {
  return [=](Client& client, int& n) {
    client.spend(seconds);
    return n + offset;
  };
}

/// The larger of two errors, NaN counted as infinite (its owner: bench/worse_error.hpp).
using tunekit::bench::worse_error;

/// How many times `what` occurs in `text` (overlapping ones counted).
inline std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

/// Captures what the library writes to std::cerr (tunekit::warn) while it lives.
class CapturedWarnings {
 public:
  CapturedWarnings() : old_(std::cerr.rdbuf(buffer_.rdbuf())) {}
  ~CapturedWarnings() { std::cerr.rdbuf(old_); }
  CapturedWarnings(const CapturedWarnings&) = delete;
  CapturedWarnings& operator=(const CapturedWarnings&) = delete;
  std::string text() const { return buffer_.str(); }
  /// How many lines contain `needle`.
  int count(const std::string& needle) const {
    std::istringstream lines(buffer_.str());
    int n = 0;
    for (std::string line; std::getline(lines, line);) n += line.find(needle) != std::string::npos;
    return n;
  }
  int lines() const { return count(""); }

 private:
  std::ostringstream buffer_;
  std::streambuf* old_;
};

}  // namespace tunekit::test
