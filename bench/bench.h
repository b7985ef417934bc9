#pragma once
// The performance method of the project: standard shapes, warm-up then the median of several
// runs, equal thread counts for both sides, the peer timed in the same run (so every figure
// is a ratio), and achieved bandwidth against the copy bandwidth measured in the same run.
#include <functional>
#include <string>
#include <vector>

#include "core/case.h"

namespace oplab::bench {

struct BenchShape {
  std::string name;       // e.g. "roi_align sr2"
  Case c;                 // full case with data (the Halide side needs real buffers)
  json peer_request;      // the same case for the peer's bench verb, big inputs drawn there
  double bytes = 0;       // compulsory traffic of the forward: every input read once, output written
  double flops = 0;       // arithmetic of the forward, where it is the bound (deform_conv2d)
};

// DESIGN.md's standard shapes; `reduced` scales them down for the main job (a few minutes).
std::vector<BenchShape> standard_shapes(bool reduced);

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  std::vector<double> runs_ms;
  // (max - min) / median: how far apart this machine's runs of the same call landed.
  double spread() const { return median_ms > 0 ? (max_ms - min_ms) / median_ms : 0; }
};
// The milliseconds one call of `call` takes (steady clock).
double ms_of(const std::function<void()>& call);
Timing time_call(const std::function<void()>& call, int warmup, int repeats);
Timing timing_of(std::vector<double> runs_ms);  // the figures of runs measured elsewhere

// Several sides timed in alternation, run by run (A B A B ...), rather than one block after the
// other, so that a slow phase of a noisy machine falls on every side alike. Each side is a
// function that does one run and returns its time in ms (a peer reports the time it measured
// itself); `warmup` untimed rounds first. Returns one Timing per side.
std::vector<Timing> time_alternating(const std::vector<std::function<double()>>& sides, int warmup, int repeats);

// True when the two sides' [min, max] ranges overlap: their ratio is then within the noise.
bool ranges_overlap(const Timing& a, const Timing& b);

// Copy bandwidth with `threads` threads: bytes read + written per second, in GB/s.
double copy_bandwidth_gbs(int threads);

// FMA throughput with `threads` threads, float32, the widest vector FMA the CPU has: the best of
// three runs, in GFLOP/s (an FMA counts 2). gflops 0 and isa empty where no FMA is available.
struct FmaPeak {
  double gflops = 0;
  std::vector<double> runs_gflops;
  std::string isa;
};
FmaPeak fma_peak_gflops(int threads);

}  // namespace oplab::bench
