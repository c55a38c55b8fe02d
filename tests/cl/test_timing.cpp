// Client::measure: the device's busy time over everything a candidate enqueued (all its kernels
// and copies, not only the last; not the host's stalls between them), batches, and the
// fallbacks for work outside the client.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <thread>

#include "support_cl.hpp"

namespace tunekit::test {

namespace {
constexpr std::size_t elements = 1 << 14;

// One launch of `busy`, `iterations` per element.
void launch_busy(cl::Client& client, ::cl::Kernel& kernel, const ::cl::Buffer& data,
                 int iterations) {
  client.launch_with(kernel, ::cl::NDRange(elements), ::cl::NDRange(64), data, iterations);
}
}  // namespace

TEST_CASE("Client models TimingClient", "[opencl][timing]") {
  STATIC_REQUIRE(TimingClient<cl::Client>);
}

TEST_CASE("a candidate enqueuing three kernels is timed over all three", "[opencl][timing]") {
  auto& client = shared_client();
  auto kernel = client.kernel(test_kernel("busy"));
  const auto input = ramp(elements);
  auto data = client.upload(input);
  const int work[3] = {600, 900, 1200};

  double alone[3];
  for (int k = 0; k < 3; ++k) {
    alone[k] = min_time(client, [&] { launch_busy(client, kernel, data, work[k]); });
    CHECK(client.last_measure_source() == cl::MeasureSource::events);
    CHECK(client.last_measure_events() == 1);
  }
  const double sum = alone[0] + alone[1] + alone[2];
  client.write(data, input.data(), input.size() * sizeof(float));
  const auto three = [&] {
    for (int k = 0; k < 3; ++k) launch_busy(client, kernel, data, work[k]);
  };
  const double together = client.measure(three, 1);
  CHECK(client.last_measure_events() == 3);
  // The host's result after one run of the candidate: the three kernels in order.
  std::vector<float> want(input);
  for (float& x : want)
    x = busy_reference(busy_reference(busy_reference(x, work[0]), work[1]), work[2]);
  CHECK(max_error(client.download<float>(data, elements), want) < 1e-4);

  (void)together;
  // All three, not the last one's 1200/2700 (44%) of it: timed over the three, the candidate
  // takes about 2700/1200 = 2.25 times the last kernel alone; the last one's event would give
  // about 1. Measured in interleaved pairs, so that a change in the machine's load (a CPU device
  // shares it with the build and other tests) moves both sides of a ratio; the median of five.
  std::vector<double> ratios;
  for (int round = 0; round < 5; ++round) {
    const double last = client.measure([&] { launch_busy(client, kernel, data, work[2]); }, 1);
    const double all = client.measure(three, 1);
    ratios.push_back(all / last);
  }
  std::sort(ratios.begin(), ratios.end());
  INFO("alone " << alone[0] << " " << alone[1] << " " << alone[2] << " (sum " << sum
                << "), ratios to the last alone " << ratios[0] << " .. " << ratios[4]);
  CHECK(ratios[2] > 1.5);
  // Device time, without the host's: never more than the wall time around the measurement.
  const auto started = std::chrono::steady_clock::now();
  const double timed = client.measure(three, 1);
  CHECK(timed <= std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
}

TEST_CASE("command_times: the span of the intervals, and their busy time", "[timing]") {
  using cl::detail::command_times;
  using cl::detail::CommandInterval;
  const auto times = [](std::vector<CommandInterval> intervals) {
    const auto t = command_times(intervals);
    return std::pair{t.span, t.busy};
  };
  using Times = std::pair<std::uint64_t, std::uint64_t>;
  CHECK(times({}) == Times{0, 0});
  CHECK(times({{100, 130}}) == Times{30, 30});
  // Launches with gaps between them (given out of order): only the launches are busy.
  CHECK(times({{80, 90}, {0, 10}, {92, 102}, {12, 22}}) == Times{102, 40});
  // Overlapping and nested intervals count once.
  CHECK(times({{0, 100}, {50, 150}, {60, 70}}) == Times{150, 150});
  // An interval that ends before it starts is empty (a driver's bad timestamps).
  CHECK(times({{0, 10}, {40, 20}}) == Times{40, 10});
}

TEST_CASE("a stall of the host between a candidate's commands is left out of its time",
          "[opencl][timing]") {
  auto& client = shared_client();
  auto kernel = client.kernel(test_kernel("busy"));
  auto data = client.upload(ramp(elements));
  const auto once = [&] { launch_busy(client, kernel, data, 10); };
  client.measure(once, 1);  // built and launched once: no first-launch work inside the times
  // Four launches; the second has ended before the host enqueues the third, 60 ms later: the
  // device waits for the host in between, as it does for an enqueue a busy host delays.
  const auto with_stall = [&] {
    once();
    once();
    client.finish();
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    once();
    once();
  };
  const double busy = client.measure(with_stall, 1);
  const double span = client.last_measure_span();
  CHECK(client.last_measure_events() == 4);
  INFO("busy " << busy << " s, span " << span << " s");
  CHECK(span >= 0.06);
  CHECK(busy > 0);
  CHECK(busy <= span - 0.05);
}

TEST_CASE("a batch is timed over every call's commands", "[opencl][timing]") {
  auto& client = shared_client();
  auto kernel = client.kernel(test_kernel("busy"));
  auto data = client.upload(ramp(elements));
  const auto once = [&] { launch_busy(client, kernel, data, 300); };
  const auto started = std::chrono::steady_clock::now();
  const double batch = client.measure(once, 8);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  CHECK(client.last_measure_events() == 8);
  CHECK(batch <= wall);  // the busy time is device time, within the wall time
  // A time of only the last call would be about one single call; over all 8 it is several,
  // even where a CPU device runs back-to-back calls faster than a lone one (warm caches, no
  // launch gap: a loaded 2-core CI machine measured 5.6x). Measured in interleaved pairs, so
  // that a change in the machine's load moves both sides of a ratio; the median of five (one
  // lone pair under ctest -j2 once gave less than 4).
  std::vector<double> ratios;
  for (int round = 0; round < 5; ++round) {
    const double single = client.measure(once, 1);
    ratios.push_back(client.measure(once, 8) / single);
  }
  std::sort(ratios.begin(), ratios.end());
  INFO("batch of 8 / single, sorted: " << ratios[0] << " " << ratios[2] << " " << ratios[4]);
  CHECK(ratios[2] > 3);
}

TEST_CASE("copies, fills and reads enqueued through the client are part of the time",
          "[opencl][timing]") {
  auto& client = shared_client();
  const std::size_t bytes = 8 << 20;
  auto a = client.allocate(bytes);
  auto b = client.allocate(bytes);
  std::vector<float> host(bytes / sizeof(float));
  client.measure(
      [&] {
        client.fill(a, 1.5f, bytes / sizeof(float));
        client.copy(a, b, bytes);
        client.read(b, host.data(), bytes);
      },
      1);
  CHECK(client.last_measure_source() == cl::MeasureSource::events);
  CHECK(client.last_measure_events() == 3);
  CHECK(std::all_of(host.begin(), host.end(), [](float x) { return x == 1.5f; }));
}

TEST_CASE("a fill of 2^31 patterns or more is enqueued in pieces below 2^31 patterns",
          "[opencl][timing]") {
  using cl::detail::fill_pieces;
  using cl::detail::FillPiece;
  constexpr std::size_t gib = std::size_t{1} << 30;
  // 2^31 floats (8 GiB): the fill that killed NVIDIA's queue, as two pieces of 2^30 floats.
  CHECK(fill_pieces(4, 0, 8 * gib) == std::vector<FillPiece>{{0, 4 * gib}, {4 * gib, 4 * gib}});
  // Bytes past 2^31, from an offset: the rest in a last piece.
  CHECK(fill_pieces(1, 100, 2 * gib + 5) ==
        std::vector<FillPiece>{{100, gib}, {100 + gib, gib}, {100 + 2 * gib, 5}});
  for (std::size_t pattern : {1, 2, 4, 8, 16, 128}) {
    const std::size_t bytes = pattern * ((std::size_t{1} << 33) + 3);
    const auto pieces = fill_pieces(pattern, 64, bytes);
    std::size_t next = 64;
    for (const auto& piece : pieces) {
      CHECK(piece.offset == next);
      CHECK(piece.bytes / pattern < (std::size_t{1} << 31));
      CHECK(piece.bytes % pattern == 0);
      next += piece.bytes;
    }
    CHECK(next == 64 + bytes);
  }
  // Small fills are one call, as before (an empty one too).
  CHECK(fill_pieces(4, 8, 4096) == std::vector<FillPiece>{{8, 4096}});
  CHECK(fill_pieces(4, 0, 0) == std::vector<FillPiece>{{0, 0}});
  CHECK(fill_pieces(4, 8, 40, 3) == std::vector<FillPiece>{{8, 12}, {20, 12}, {32, 12}, {44, 4}});
}

TEST_CASE("work enqueued on the raw queue is timed with markers around it", "[opencl][timing]") {
  auto& client = shared_client();
  auto kernel = client.kernel(test_kernel("busy"));
  const auto input = ramp(elements);
  auto data = client.upload(input);
  cl::set_args(kernel, data, 800);
  const auto raw = [&] {
    REQUIRE(client.queue().enqueueNDRangeKernel(kernel, ::cl::NullRange, ::cl::NDRange(elements),
                                                ::cl::NDRange(64)) == CL_SUCCESS);
  };
  const double through_markers = client.measure(raw, 1);
  CHECK(client.last_measure_source() == cl::MeasureSource::markers);
  std::vector<float> want(input);
  for (float& x : want) x = busy_reference(x, 800);
  CHECK(max_error(client.download<float>(data, elements), want) < 1e-4);
  // Each way's best of 5, taken in turns: a busy moment of the host (a sanitizer's run beside
  // other tests) then meets both ways, not only the one measured in it (once 2x apart).
  double with_events = std::numeric_limits<double>::infinity(), best_markers = through_markers;
  for (int turn = 0; turn < 5; ++turn) {
    with_events =
        std::min(with_events, min_time(
                                  client, [&] { launch_busy(client, kernel, data, 800); }, 1, 1));
    best_markers = std::min(best_markers, min_time(client, raw, 1, 1));
  }
  INFO("markers " << best_markers << ", events " << with_events);
  // Markers must span the kernel (not read ~0); the bound leaves room for a loaded machine.
  CHECK(best_markers > 0.5 * with_events);

  // An event handed over with record() joins the measurement.
  client.measure(
      [&] {
        ::cl::Event event;
        REQUIRE(client.queue().enqueueNDRangeKernel(kernel, ::cl::NullRange,
                                                    ::cl::NDRange(elements), ::cl::NDRange(64),
                                                    nullptr, &event) == CL_SUCCESS);
        client.record(event);
      },
      1);
  CHECK(client.last_measure_source() == cl::MeasureSource::events);
  CHECK(client.last_measure_events() == 1);
}

TEST_CASE("an event record()ed from another queue is waited for and timed", "[opencl][timing]") {
  // measure() finishes the client's queue only: the other queue's kernel may still run when the
  // events are read, and was skipped (timed by the empty queue's markers, about 0 s).
  auto& client = shared_client();
  ::cl::CommandQueue other(client.context(), client.device().device, CL_QUEUE_PROFILING_ENABLE);
  auto kernel = client.kernel(test_kernel("busy"));
  auto data = client.upload(ramp(elements));
  cl::set_args(kernel, data, 5000);
  client.measure(
      [&] {
        ::cl::Event event;
        REQUIRE(other.enqueueNDRangeKernel(kernel, ::cl::NullRange, ::cl::NDRange(elements),
                                           ::cl::NDRange(64), nullptr, &event) == CL_SUCCESS);
        REQUIRE(other.flush() == CL_SUCCESS);
        client.record(event);
      },
      1);
  other.finish();
  CHECK(client.last_measure_source() == cl::MeasureSource::events);
  CHECK(client.last_measure_events() == 1);
}

TEST_CASE("outside a measurement, enqueues record nothing", "[opencl][timing]") {
  auto& client = shared_client();
  auto kernel = client.kernel(test_kernel("add"));
  auto data = client.upload(ramp(64));
  client.launch_with(kernel, ::cl::NDRange(64), ::cl::NDRange(64), data, 1.0f);
  // An empty measurement: nothing recorded from before it, so the markers time it.
  client.measure([] {}, 1);
  CHECK(client.last_measure_source() == cl::MeasureSource::markers);
  CHECK(client.last_measure_events() == 0);
}

TEST_CASE("a candidate throwing in the middle of a measurement leaves the client usable",
          "[opencl][timing]") {
  auto& client = shared_client();
  auto kernel = client.kernel(test_kernel("add"));
  auto data = client.upload(ramp(64));
  CHECK_THROWS_AS(client.measure(
                      [&] {
                        client.launch_with(kernel, ::cl::NDRange(64), ::cl::NDRange(64), data,
                                           1.0f);
                        throw std::runtime_error("candidate failed");
                      },
                      1),
                  std::runtime_error);
  client.measure(
      [&] { client.launch_with(kernel, ::cl::NDRange(64), ::cl::NDRange(64), data, 1.0f); }, 1);
  CHECK(client.last_measure_events() == 1);
  auto want = ramp(64);
  for (float& x : want) x += 2.0f;
  CHECK(max_error(client.download<float>(data, 64), want) < 1e-6);
}

}  // namespace tunekit::test

namespace tunekit::test {

// The peaks behind throughput bounds: plausible on any device (no bound on how fast it is), the
// same for every client of one device, and a declared one is used as declared.
TEST_CASE("a device's peak is measured once per process, and can be declared",
          "[opencl][timing][peak]") {
  STATIC_REQUIRE(HasDevicePeak<cl::Client>);
  auto& client = shared_client();
  const DevicePeak measured = client.peak();
  if (client.device().is_cpu()) {
    CHECK(measured.flops_per_second == 0);  // unknown: what a CPU compiler's vectors make of it
  } else {
    CHECK(measured.flops_per_second > 1e6);  // a megaflop: any device that runs OpenCL
  }
  CHECK(measured.bytes_per_second > 1e6);
  CHECK(std::isfinite(measured.flops_per_second));
  CHECK(std::isfinite(measured.bytes_per_second));
  cl::Client other(client.device());
  const DevicePeak again = other.peak();  // not measured again: the same figures
  CHECK(again.flops_per_second == measured.flops_per_second);
  CHECK(again.bytes_per_second == measured.bytes_per_second);
  CHECK(again.read_bytes_per_second == measured.read_bytes_per_second);
  CHECK(std::isfinite(measured.read_bytes_per_second));
  CHECK(measured.read_bytes_per_second > 1e6);
  other.declare_peak({2e12, 3e11});
  CHECK(client.peak().flops_per_second == 2e12);
  CHECK(client.peak().bytes_per_second == 3e11);
  client.declare_peak(measured);  // as it was, for the tests that follow
  // The roofline: the slower of arithmetic and traffic.
  CHECK(least_seconds({2e12, 0}, {2e12, 3e11}) == Approx(1.0));
  CHECK(least_seconds({2e12, 6e11}, {2e12, 3e11}) == Approx(2.0));
  CHECK(least_seconds({1, 1}, {}) == 0);  // unknown peak: no bound
  // Traffic that may stay in a 1 MB cache is not bound by the memory peaks; beyond it, it is.
  CHECK(least_seconds({0, 2e6}, {1e12, 1e9, 1e6}) == 0);
  CHECK(least_seconds({0, 3e6}, {1e12, 1e9, 1e6}) == Approx(3e-3));
}

// Reads at the read rate, writes at the rate a copy's time implies: a reduction's bound is the
// read kernel's, a copy-like op's stays the copy's.
TEST_CASE("the memory roofline counts reads and writes at their own rates", "[timing][peak]") {
  const DevicePeak peak{1e12, 1e9, 0, 1.25e9};  // copy 1 GB/s (read + written), reads 1.25 GB/s
  CHECK(least_seconds({0, 1e9, 0}, peak) == Approx(0.8));    // read only
  CHECK(least_seconds({0, 2e9, 1e9}, peak) == Approx(2.0));  // a copy's traffic: its time
  // Written alone: the implied write rate (2 / 1e9 - 1 / 1.25e9 s per byte) would give 1.2 s,
  // above every byte at the copy's rate: the copy's bound stands (the model only loosens it).
  CHECK(least_seconds({0, 1e9, 1e9}, peak) == Approx(1.0));
  CHECK(least_seconds({0, 1e9, 1e9}, {1e12, 1e9, 0, 1e16}) == Approx(1.0));  // a planted rate
  CHECK(least_seconds({0, 1e9, 5e9}, peak) == Approx(1.0));   // never more written than moved
  CHECK(least_seconds({0, 1e9, -1e9}, peak) == Approx(0.8));  // nor less than nothing
  CHECK(least_seconds({0, 1e9, std::nan("")}, peak) == Approx(0.8));  // unknown: all read
  // Three quarters read, a quarter written: 0.75 / 1.25 + 0.25 * 1.2 s.
  CHECK(least_seconds({0, 1e9, 0.25e9}, peak) == Approx(0.9));
  // No read figure, or one below the copy's: every byte at the copy's rate, as before.
  CHECK(least_seconds({0, 1e9, 0}, {1e12, 1e9}) == Approx(1.0));
  CHECK(least_seconds({0, 1e9, 0}, {1e12, 1e9, 0, 5e8}) == Approx(1.0));
  CHECK(least_seconds({0, 2e9, 1e9}, {1e12, 1e9, 0, 5e8}) == Approx(2.0));
  // The slower of arithmetic and traffic still bounds.
  CHECK(least_seconds({3e12, 1e9, 0}, peak) == Approx(3.0));
}

// The read rate of the memory roofline comes from peak_read: a kernel that skipped loads would
// report a rate no candidate reaches, and a reduction's tuning would never stop near it.
TEST_CASE("peak.cl's read kernel sums every float4 of both buffers", "[opencl][timing][peak]") {
  auto& client = shared_client();
  constexpr std::size_t readers = 64;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(0.25f, 1.0f);  // never zero: a skipped load shows
  // The loop's step is eight strides: one whole step, two, a step and a part of the next
  // (whole strides and a part of one), and fewer vectors than work-items.
  for (const std::size_t vectors :
       {readers * 8, readers * 16, readers * 11 + 3, readers * 7 + 5, readers / 2}) {
    CAPTURE(vectors);
    std::vector<float> a(vectors * 4), b(vectors * 4);
    for (float& x : a) x = value(rng);
    for (float& x : b) x = value(rng);
    std::vector<float> want(readers);
    for (std::size_t item = 0; item < readers; ++item) {
      double sum = 0;  // float4s item, item + readers, ... of both, all four lanes
      for (std::size_t v = item; v < vectors; v += readers) {
        for (std::size_t lane = 0; lane < 4; ++lane)
          sum += double{a[v * 4 + lane]} + b[v * 4 + lane];
      }
      want[item] = static_cast<float>(sum);
    }
    auto in_a = client.upload(a), in_b = client.upload(b);
    auto out = client.upload(std::vector<float>(readers, -1.0f));
    auto kernel = client.kernel(cl::KernelSpec::embedded("peak.cl", "", "peak_read"));
    client.launch_with(kernel, ::cl::NDRange(readers), ::cl::NDRange(16), in_a, in_b, out,
                       static_cast<cl_uint>(vectors));
    CHECK(max_error(client.download<float>(out, readers), want) < 1e-5);
  }
}

}  // namespace tunekit::test
