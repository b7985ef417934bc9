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
  double median_ms = 0;
  std::vector<double> runs_ms;
};
Timing time_call(const std::function<void()>& call, int warmup, int repeats);

// Copy bandwidth with `threads` threads: bytes read + written per second, in GB/s.
double copy_bandwidth_gbs(int threads);

}  // namespace oplab::bench
