// The Halide float32 kernels of ms_deform_attn (SPEC §13; forward, grad_value and the point
// gradients) against the double reference: the fixed-seed edge-aimed corpus by the
// per-element error bound of SPEC §9 (compare/float_compare.h), where a boundary flip must
// vanish once the inputs are rounded to float32 (the kernels form every pixel coordinate and
// floor in double from the float32 location, as the reference does); then hand cases whose
// every value is exact in float32, which must come out exactly: pixel centres, the corner of
// the map, half outside, the cut-offs, two levels, a non-finite location, and a batch, heads
// and channels that read their own slices (vector tails on the CPU, the scatter's atomics on
// the GPU schedules). Every Halide backend that can run here runs them.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <random>

#include "cli/builtin_backends.h"
#include "compare/float_compare.h"
#include "core/msda_levels.h"
#include "fuzz/generators.h"
#include "halide/halide_backend.h"
#include "tests/halide_backends.h"
#include "tests/halide_corpus.h"

namespace oplab {
namespace {

constexpr uint64_t kSeed = 17;
constexpr int kCases = 200;

Backend& ref() { return *builtin_backends().find("ref"); }

class HalideMsdaCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(HalideMsdaCorpus, WithinBoundForwardAndBackward) {
  Backend* b = runnable_backend(GetParam(), "msda");
  if (!b) GTEST_SKIP() << GetParam() << " cannot run here";
  const CorpusCounts r = check_corpus(*b, "ms_deform_attn", kCases, kSeed, "msda");
  EXPECT_GE(r.count.count("agree") ? r.count.at("agree") : 0, kCases / 2);
}

INSTANTIATE_TEST_SUITE_P(Backends, HalideMsdaCorpus, ::testing::Values("halide-cpu", "halide-cuda", "halide-opencl"),
                         [](const auto& info) { return test_name_of(info.param); });

// ---------------------------------------------------------------- exact hand cases

// N images, Lq queries, M heads, Dh channels, one point per level at (x, y) with weight a,
// on levels of power-of-two sizes; value and grad_output small integers (exact in float32,
// and so is every product and sum below).
Case hand_case(int64_t N, int64_t Lq, int64_t M, int64_t Dh, const std::vector<std::pair<int64_t, int64_t>>& levels,
               const std::vector<std::array<double, 3>>& points) {
  const int64_t L = int64_t(levels.size());
  Case c;
  c.op = "ms_deform_attn";
  const MsdaLevels lv = msda_levels(levels);
  const Tensor &shapes = lv.spatial_shapes, &starts = lv.level_start_index;
  const int64_t S = lv.S;
  Tensor value(Shape{N, S, M, Dh}), loc(Shape{N, Lq, M, L, 1, 2}), aw(Shape{N, Lq, M, L, 1}), g(Shape{N, Lq, M * Dh});
  for (size_t i = 0; i < value.data.size(); ++i) value.data[i] = double(int64_t(i * 7 % 13) - 6);
  for (size_t i = 0; i < g.data.size(); ++i) g.data[i] = double(int64_t(i * 5 % 7) - 3);
  for (size_t i = 0; i < aw.data.size(); ++i) {
    const auto& pt = points[i % size_t(L)];
    loc.data[2 * i] = pt[0], loc.data[2 * i + 1] = pt[1];
    aw.data[i] = pt[2] * double(1 + int64_t(i % 3));
  }
  c.inputs = {{"value", value}, {"spatial_shapes", shapes}, {"level_start_index", starts},
              {"sampling_locations", loc}, {"attention_weights", aw}};
  c.grad_output = g;
  return c;
}

void expect_exact(Backend& b, const Case& c, const std::string& what) {
  const Result want = ref().run(c), got = b.run(c);
  for (const auto& [k, t] : want.outputs) EXPECT_EQ(got.outputs.at(k).data, t.data) << b.name() << " " << what << " output";
  for (const auto& [k, t] : want.grads) EXPECT_EQ(got.grads.at(k).data, t.data) << b.name() << " " << what << " grad " << k;
}

TEST(HalideMsda, ExactOnDyadicEdges) {
  const double inf = std::numeric_limits<double>::infinity();
  for (Backend* b : runnable_halide_backends("msda")) {
    // Pixel centre (1, 2) of a 2x4 level; the map's corner (0, 0); half outside the last
    // column; the cut-off x = -1 and y = H; a NaN and an infinite location (nothing sampled).
    expect_exact(*b, hand_case(1, 1, 1, 1, {{2, 4}}, {{0.625, 0.75, 2}}), "pixel centre");
    expect_exact(*b, hand_case(1, 1, 1, 1, {{2, 4}}, {{0.0, 0.0, 4}}), "corner");
    expect_exact(*b, hand_case(1, 1, 1, 1, {{2, 4}}, {{1.0, 0.25, 1}}), "half outside");
    expect_exact(*b, hand_case(1, 1, 1, 1, {{2, 4}}, {{-0.125, 0.25, 3}}), "x = -1");
    expect_exact(*b, hand_case(1, 1, 1, 1, {{2, 4}}, {{0.625, 1.25, 3}}), "y = H");
    expect_exact(*b, hand_case(1, 1, 1, 1, {{2, 4}}, {{std::nan(""), 0.5, 1}}), "NaN location");
    expect_exact(*b, hand_case(1, 1, 1, 1, {{2, 4}}, {{inf, 0.5, 1}}), "inf location");
    // Two levels, then a batch of 3 (an odd batch), 5 queries, 3 heads and 11 channels (a
    // vector tail), every point on a dyadic position, so the scatter's sums are exact in any order.
    expect_exact(*b, hand_case(1, 1, 1, 1, {{2, 4}, {1, 2}}, {{0.4375, 0.5, 2}, {0.5, 0.5, 0.5}}), "two levels");
    expect_exact(*b, hand_case(3, 5, 3, 11, {{4, 8}, {2, 2}, {1, 1}}, {{0.3125, 0.625, 0.5}, {0.75, 0.25, 1}, {0.5, 0.5, 2}}),
                 "batch, heads, channels");
  }
}

}  // namespace
}  // namespace oplab
