// The Halide antialias kernel (SPEC §16; generators/interpolate_antialias_generator.cpp) on
// every Halide backend that runs here: hand-derived values, the backward as the transposed
// tables, and the padding of the tables (a position with fewer taps than the longest reads
// nothing more: a NaN elsewhere stays out of its sum). The campaigns judge it on drawn cases.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/backend.h"
#include "tests/halide_backends.h"

namespace oplab {
namespace {

Case row_case(const std::string& mode, std::vector<double> x, int64_t out) {
  Case c;
  c.op = "interpolate";
  c.params = {{"mode", mode}, {"antialias", true}, {"size", {1, out}}};
  Tensor t(Shape{1, 1, 1, int64_t(x.size())});
  t.data = std::move(x);
  c.inputs["input"] = t;
  return c;
}

TEST(HalideInterpolateAntialias, EightToTwoBilinearMatchesHandDerivation) {
  // tests/test_ref_interpolate_antialias.cpp: output 0 reads weights 0.625 .. 0.125 over 3.5.
  for (Backend* b : runnable_halide_backends("aa")) {
    Case c = row_case("bilinear", {0, 0, 0, 1, 0, 0, 0, 0}, 2);
    Tensor g(Shape{1, 1, 1, 2});
    g.data = {1, 0};
    c.grad_output = g;
    const Result r = evaluate(*b, c);
    EXPECT_NEAR(r.outputs.at("output").data[0], 0.625 / 3.5, 1e-7) << b->name();
    EXPECT_NEAR(r.outputs.at("output").data[1], 0.375 / 3.5, 1e-7) << b->name();
    const std::vector<double> w{0.625, 0.875, 0.875, 0.625, 0.375, 0.125, 0, 0};
    for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(r.grads.at("input").data[i], w[i] / 3.5, 1e-7) << b->name() << " " << i;
  }
}

TEST(HalideInterpolateAntialias, ShortTapListsReadNothingMore) {
  // 8 -> 2 bilinear: output 0 reads inputs 0..5, output 1 inputs 2..7. Transposed, inputs 0 and
  // 1 are read by output 0 alone and 6, 7 by output 1 alone (one tap where others have two).
  // A NaN gradient at output 0 reaches inputs 0..5 only; inputs 6 and 7 get output 1's weights.
  // In the forward, a NaN at input 7 reaches output 1 only.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (Backend* b : runnable_halide_backends("aa")) {
    Case c = row_case("bilinear", {0, 0, 0, 0, 0, 0, 0, nan}, 2);
    Tensor g(Shape{1, 1, 1, 2});
    g.data = {nan, 1};
    c.grad_output = g;
    const Result r = evaluate(*b, c);
    EXPECT_EQ(r.outputs.at("output").data[0], 0.0) << b->name();
    EXPECT_TRUE(std::isnan(r.outputs.at("output").data[1])) << b->name();
    const Tensor& gi = r.grads.at("input");
    for (int i = 0; i < 6; ++i) EXPECT_TRUE(std::isnan(gi.data[size_t(i)])) << b->name() << " " << i;
    // Output 1: centre 6, args (i - 5.5) / 4: input 6 -> 0.875, input 7 -> 0.625, over 3.5.
    EXPECT_NEAR(gi.data[6], 0.875 / 3.5, 1e-7) << b->name();
    EXPECT_NEAR(gi.data[7], 0.625 / 3.5, 1e-7) << b->name();
  }
}

TEST(HalideInterpolateAntialias, BandsReadOnlyTheirOwnTaps) {
  // 72 -> 18 bilinear (scale 4, support 4): output o has centre 4o + 2 and reads inputs
  // max(4o - 2, 0) .. min(4o + 5, 71), weights 1 - |i - 4o - 1.5| / 4. On the CPU the outputs go
  // in bands of 16 that read one span: outputs 0..15 read inputs 0..65 (66 taps), so outputs
  // 16..17 read 66 inputs from 6 (moved back from 62 to stay inside), which include input 8. A
  // NaN there reaches outputs 1 and 2 only; a one at input 69 reaches output 16 with 0.125 / 4
  // and output 17 (inputs 66..71) with 0.875 / 3.5. Backward, bands of inputs: a NaN gradient
  // at output 1 reaches inputs 2..9 only.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (Backend* b : runnable_halide_backends("aa")) {
    std::vector<double> x(72, 0.0);
    x[8] = nan;
    x[69] = 1;
    Case c = row_case("bilinear", x, 18);
    Tensor g(Shape{1, 1, 1, 18});
    g.data.assign(18, 0.0);
    g.data[1] = nan;
    g.data[17] = 1;
    c.grad_output = g;
    const Result r = evaluate(*b, c);
    const Tensor& out = r.outputs.at("output");
    for (int o = 0; o < 18; ++o) {
      EXPECT_EQ(std::isnan(out.data[size_t(o)]), o == 1 || o == 2) << b->name() << " output " << o;
      if (o != 1 && o != 2 && o < 16) EXPECT_EQ(out.data[size_t(o)], 0.0) << b->name() << " output " << o;
    }
    EXPECT_NEAR(out.data[16], 0.125 / 4, 1e-7) << b->name();
    EXPECT_NEAR(out.data[17], 0.875 / 3.5, 1e-7) << b->name();
    const Tensor& gi = r.grads.at("input");
    for (int i = 0; i < 72; ++i) {
      EXPECT_EQ(std::isnan(gi.data[size_t(i)]), i >= 2 && i <= 9) << b->name() << " input " << i;
      if (i >= 10 && i < 66) EXPECT_EQ(gi.data[size_t(i)], 0.0) << b->name() << " input " << i;
    }
    // Output 17 reads 66..71 with 0.125, 0.375, 0.625, 0.875, 0.875, 0.625 over 3.5.
    EXPECT_NEAR(gi.data[66], 0.125 / 3.5, 1e-7) << b->name();
    EXPECT_NEAR(gi.data[71], 0.625 / 3.5, 1e-7) << b->name();
  }
}

TEST(HalideInterpolateAntialias, EveryRowOfAManyPlaneBatchIsResampledOnce) {
  // The CPU runs the output's rows of all planes in tasks of max(8, rows / 128) rows: 2605
  // planes of one row, 8 -> 2 bilinear, make tasks of 20 rows and a last one of 5. Each plane
  // holds its own values, and each output is checked against the weights of
  // EightToTwoBilinearMatchesHandDerivation (output 1 mirrors output 0), forward and backward.
  const int64_t planes = 2605;
  const double w0[] = {0.625, 0.875, 0.875, 0.625, 0.375, 0.125, 0, 0};
  for (Backend* b : runnable_halide_backends("aa")) {
    Case c;
    c.op = "interpolate";
    c.params = {{"mode", "bilinear"}, {"antialias", true}, {"size", {1, 2}}};
    Tensor x(Shape{1, planes, 1, 8}), g(Shape{1, planes, 1, 2});
    for (int64_t p = 0; p < planes; ++p) {
      for (int i = 0; i < 8; ++i) x.data[size_t(p * 8 + i)] = double(p % 97) + 0.25 * i;
      g.data[size_t(p * 2)] = double(p % 5);
      g.data[size_t(p * 2 + 1)] = 1.0;
    }
    c.inputs["input"] = x;
    c.grad_output = g;
    const Result r = evaluate(*b, c);
    const Tensor& out = r.outputs.at("output");
    const Tensor& gi = r.grads.at("input");
    for (int64_t p = 0; p < planes; ++p) {
      double o0 = 0, o1 = 0;
      for (int i = 0; i < 8; ++i) {
        o0 += w0[i] * x.data[size_t(p * 8 + i)];
        o1 += w0[7 - i] * x.data[size_t(p * 8 + i)];
        const double want = (g.data[size_t(p * 2)] * w0[i] + w0[7 - i]) / 3.5;
        ASSERT_NEAR(gi.data[size_t(p * 8 + i)], want, 1e-5) << b->name() << " plane " << p << " input " << i;
      }
      ASSERT_NEAR(out.data[size_t(p * 2)], o0 / 3.5, 1e-4) << b->name() << " plane " << p;
      ASSERT_NEAR(out.data[size_t(p * 2 + 1)], o1 / 3.5, 1e-4) << b->name() << " plane " << p;
    }
  }
}

TEST(HalideInterpolateAntialias, BicubicUpscaleCutsTheFilterAtTheEdge) {
  // 2 -> 4 on [0, 1]: output 0 is -0.0703125 / 0.796875 (tests/test_ref_interpolate_antialias.cpp).
  for (Backend* b : runnable_halide_backends("aa"))
    EXPECT_NEAR(evaluate(*b, row_case("bicubic", {0, 1}, 4)).outputs.at("output").data[0], -0.0703125 / 0.796875, 1e-7)
        << b->name();
}

}  // namespace
}  // namespace oplab
