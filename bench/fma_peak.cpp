// The machine's arithmetic limit, measured the way the copy bandwidth is: a loop of independent
// vector FMAs on the same threads as the kernels, so that a compute-bound shape's GFLOP/s can
// be read as a fraction of what these cores do. The widest FMA the CPU has is picked at run
// time (the project is not built with -march=native); the loop keeps 12 independent
// accumulators, more than FMA latency x FMA ports on current x86 cores, so it is throughput-bound.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "bench/bench.h"

namespace oplab::bench {

namespace {

constexpr int kChains = 12;

#if defined(__x86_64__) && defined(__GNUC__)
typedef float v16f __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));

// a = a * b + c stays near 1 (b < 1, c = 1 - b), so no value overflows or goes subnormal.
// Written out in each function so that it is compiled for that function's target.
#define OPLAB_FMA_CHAINS                      \
  for (int64_t it = 0; it < iters; ++it)      \
    for (int k = 0; k < kChains; ++k) a[k] = a[k] * b + c;

__attribute__((target("avx512f"))) float run_avx512(int64_t iters) {
  v16f a[kChains], b, c;
  for (int i = 0; i < 16; ++i) b[i] = 0.999f, c[i] = 0.001f;
  for (int k = 0; k < kChains; ++k) a[k] = b + float(k) * 1e-3f;
  OPLAB_FMA_CHAINS
  float s = 0;
  for (int k = 0; k < kChains; ++k) s += a[k][0];
  return s;  // used, so the loop is not removed
}

__attribute__((target("avx2,fma"))) float run_avx2(int64_t iters) {
  v8f a[kChains], b, c;
  for (int i = 0; i < 8; ++i) b[i] = 0.999f, c[i] = 0.001f;
  for (int k = 0; k < kChains; ++k) a[k] = b + float(k) * 1e-3f;
  OPLAB_FMA_CHAINS
  float s = 0;
  for (int k = 0; k < kChains; ++k) s += a[k][0];
  return s;
}
#endif

struct Isa {
  const char* name;
  int lanes;
  float (*run)(int64_t);
};

Isa pick_isa() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"avx512 fma (16 x float32)", 16, run_avx512};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {"avx2 fma (8 x float32)", 8, run_avx2};
#endif
  return {nullptr, 0, nullptr};
}

}  // namespace

FmaPeak fma_peak_gflops(int threads) {
  const Isa isa = pick_isa();
  if (!isa.run) return {};
  const int64_t iters = 20'000'000;  // ~0.1-0.2 s per thread at a few GHz
  auto once = [&] {
    std::vector<std::thread> pool;
    std::vector<float> kept(static_cast<size_t>(threads));
    const auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { kept[size_t(t)] = isa.run(iters); });
    for (auto& th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return 2.0 * kChains * isa.lanes * double(iters) * threads / s / 1e9;
  };
  FmaPeak p;
  p.isa = isa.name;
  for (int i = 0; i < 3; ++i) p.runs_gflops.push_back(once());
  p.gflops = *std::max_element(p.runs_gflops.begin(), p.runs_gflops.end());
  return p;
}

}  // namespace oplab::bench
