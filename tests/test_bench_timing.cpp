// The benchmark's timing method (bench/bench.h): sides alternate run by run, figures carry
// their spread, and a ratio whose sides' ranges overlap is told apart. Nothing here is timed:
// the sides report made-up times and record the order they ran in.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/bench.h"

namespace oplab {
namespace {

TEST(BenchTiming, SidesAlternateRunByRunAfterTheWarmup) {
  std::string order;
  std::vector<double> a_ms = {9, 9, 4, 6, 5}, b_ms = {9, 1, 3, 2};  // first entries: the warm-up round
  size_t ai = 0, bi = 0;
  const auto t = bench::time_alternating({[&] { order += 'A'; return a_ms[ai++]; },
                                          [&] { order += 'B'; return b_ms[bi++]; }},
                                         1, 3);
  EXPECT_EQ(order, "ABABABAB");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].runs_ms, (std::vector<double>{9, 4, 6}));  // the warm-up's 9 is not among them
  EXPECT_EQ(t[0].median_ms, 6);
  EXPECT_EQ(t[0].min_ms, 4);
  EXPECT_EQ(t[0].max_ms, 9);
  EXPECT_DOUBLE_EQ(t[0].spread(), 5.0 / 6.0);
  EXPECT_EQ(t[1].median_ms, 2);
}

TEST(BenchTiming, OverlappingRangesAreTold) {
  EXPECT_TRUE(bench::ranges_overlap(bench::timing_of({1, 2, 3}), bench::timing_of({3, 4})));
  EXPECT_FALSE(bench::ranges_overlap(bench::timing_of({1, 2, 2.9}), bench::timing_of({3, 4})));
  EXPECT_FALSE(bench::ranges_overlap(bench::timing_of({}), bench::timing_of({3, 4})));
}

TEST(BenchTiming, TheFmaPeakIsMeasuredWhereTheCpuHasFma) {
  const bench::FmaPeak p = bench::fma_peak_gflops(1);
  if (p.isa.empty()) GTEST_SKIP() << "no vector FMA on this CPU";
  EXPECT_EQ(p.runs_gflops.size(), 3u);
  EXPECT_GT(p.gflops, 1.0);  // any FMA unit does more than a GFLOP/s
  for (double r : p.runs_gflops) EXPECT_LE(r, p.gflops);
}

}  // namespace
}  // namespace oplab
