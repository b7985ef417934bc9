#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "bench/bench.h"

namespace oplab::bench {

Timing timing_of(std::vector<double> runs_ms) {
  Timing t;
  t.runs_ms = runs_ms;
  std::sort(runs_ms.begin(), runs_ms.end());
  if (runs_ms.empty()) return t;
  t.median_ms = runs_ms[runs_ms.size() / 2];
  t.min_ms = runs_ms.front();
  t.max_ms = runs_ms.back();
  return t;
}

double ms_of(const std::function<void()>& call) {
  const auto t0 = std::chrono::steady_clock::now();
  call();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

Timing time_call(const std::function<void()>& call, int warmup, int repeats) {
  return time_alternating({[&] { return ms_of(call); }}, warmup, repeats).front();
}

std::vector<Timing> time_alternating(const std::vector<std::function<double()>>& sides, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i)
    for (const auto& side : sides) (void)side();
  std::vector<std::vector<double>> runs(sides.size());
  for (int i = 0; i < repeats; ++i)
    for (size_t k = 0; k < sides.size(); ++k) runs[k].push_back(sides[k]());
  std::vector<Timing> out;
  for (auto& r : runs) out.push_back(timing_of(std::move(r)));
  return out;
}

bool ranges_overlap(const Timing& a, const Timing& b) {
  return !a.runs_ms.empty() && !b.runs_ms.empty() && a.min_ms <= b.max_ms && b.min_ms <= a.max_ms;
}

double copy_bandwidth_gbs(int threads) {
  // 256 MiB each way: far beyond the caches, so this is memory bandwidth.
  const size_t bytes = size_t(256) << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  auto copy = [&] {
    std::vector<std::thread> pool;
    const size_t chunk = bytes / size_t(threads);
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { std::memcpy(dst.data() + size_t(t) * chunk, src.data() + size_t(t) * chunk, chunk); });
    for (auto& th : pool) th.join();
  };
  const Timing t = time_call(copy, 1, 5);
  return 2.0 * double(bytes) / (t.median_ms * 1e-3) / 1e9;
}

}  // namespace oplab::bench
