#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "bench/bench.h"

namespace oplab::bench {

Timing time_call(const std::function<void()>& call, int warmup, int repeats) {
  for (int i = 0; i < warmup; ++i) call();
  Timing t;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    t.runs_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::vector<double> sorted = t.runs_ms;
  std::sort(sorted.begin(), sorted.end());
  t.median_ms = sorted.empty() ? 0 : sorted[sorted.size() / 2];
  return t;
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
