// The Halide float32 kernels of grid_sample (SPEC §12; 4-D, forward, grad_input and
// grad_grid) against the double reference: the fixed-seed edge-aimed corpus by the per-element
// error bound of SPEC §9 (compare/float_compare.h), then hand cases with known answers: every
// mode, padding and align_corners on a row whose values tell pixels apart, nearest's ties
// (half to even: the first OpenCL run read 0.5 as pixel 1), bicubic taps padded one by one,
// positions sharing pixels (the scatter's atomics), and the same for 5-D input (trilinear and
// nearest, on a volume whose values are linear in the voxel index, so every answer is hand
// derivable). Every Halide backend that can run here runs them (halide-opencl runs the GPU
// schedules on any OpenCL device).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <random>

#include "cli/builtin_backends.h"
#include "compare/float_compare.h"
#include "fuzz/generators.h"
#include "halide/glue/grid_sample_path.h"
#include "halide/halide_backend.h"
#include "tests/halide_backends.h"
#include "tests/halide_corpus.h"

namespace oplab {
namespace {

constexpr uint64_t kSeed = 17;
constexpr int kCases = 200;

Backend& ref() { return *builtin_backends().find("ref"); }

class HalideGridSampleCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(HalideGridSampleCorpus, WithinBoundForwardAndBackward) {
  Backend* b = runnable_backend(GetParam(), "grid_sample");
  if (!b) GTEST_SKIP() << GetParam() << " cannot run here";
  // The kernels unnormalise, pad and floor in double with the reference's operations: on the
  // float32-rounded case every decision is the reference's (check_corpus's default).
  CorpusOptions opt;
  opt.tally = [](const Case& c, std::map<std::string, int>& count) { ++count[c.in("input").rank() == 5 ? "5-D" : "4-D"]; };
  const CorpusCounts r = check_corpus(*b, "grid_sample", kCases, kSeed, "grid_sample", opt);
  // Both ranks are drawn, or half the kernels would go unchecked.
  EXPECT_GT(r.count.count("4-D") ? r.count.at("4-D") : 0, kCases / 10);
  EXPECT_GT(r.count.count("5-D") ? r.count.at("5-D") : 0, kCases / 10);
}

std::vector<std::string> backend_names() {
  std::vector<std::string> v;
  for (HalideDevice d : kHalideDevices) v.push_back(halide_backend_name(d));
  return v;
}

INSTANTIATE_TEST_SUITE_P(Backends, HalideGridSampleCorpus, ::testing::ValuesIn(backend_names()),
                         [](const auto& info) { return test_name_of(info.param); });

// ---------------------------------------------------------------- hand cases

Case row_case(const std::vector<double>& row, const std::vector<double>& xs, const std::string& mode,
              const std::string& pad, bool ac) {
  Case c;
  c.op = "grid_sample";
  c.params = {{"mode", mode}, {"padding_mode", pad}, {"align_corners", ac}};
  Tensor x(Shape{1, 1, 1, int64_t(row.size())});
  x.data = row;
  Tensor g(Shape{1, 1, int64_t(xs.size()), 2});
  for (size_t k = 0; k < xs.size(); ++k) g.data[2 * k] = xs[k];
  c.inputs["input"] = x;
  c.inputs["grid"] = g;
  c.grad_output = Tensor(Shape{1, 1, 1, int64_t(xs.size())}, 1.0);
  return c;
}

TEST(HalideGridSample, HandValuesEveryModeAndPadding) {
  // The reference's hand-derived values (tests/test_ref_grid_sample.cpp), row 1, 2, 4, 8:
  // exact in float32 (quarters and eighths), so the kernels must give them to rounding.
  const std::vector<double> row = {1, 2, 4, 8};
  struct Want {
    const char* mode;
    const char* pad;
    bool ac;
    std::vector<double> xs, out, gx;
  };
  const std::vector<Want> wants = {
      {"bilinear", "zeros", false, {-1, 0, 1, 0.25, 1.5}, {0.5, 3, 4, 4, 0}, {2, 4, -16, 8, 0}},
      {"bilinear", "border", false, {1, -1, 0.25, -0.75}, {8, 1, 4, 1}, {0, 0, 8, 0}},
      {"bilinear", "reflection", false, {-1.375, 1.375, -1.25, 3.625}, {1.25, 7, 1, 1.75}, {-2, -8, 0, 2}},
      {"bilinear", "zeros", true, {-1, 1, 0}, {1, 8, 3}, {1.5, -12, 3}},
      {"bilinear", "reflection", true, {1.5, -1.5}, {5, 1.75}, {-6, -1.5}},
      {"nearest", "zeros", false, {-0.5, 0.5, 0, -1, 1}, {1, 4, 4, 1, 0}, {0, 0, 0, 0, 0}},
      {"nearest", "border", false, {1}, {8}, {0}},
      {"bicubic", "zeros", false, {-1}, {0.40625}, {1.875}},
      {"bicubic", "border", false, {-1}, {0.90625}, {-0.375}},
      {"bicubic", "reflection", false, {-1}, {0.8125}, {0}},
  };
  for (Backend* b : runnable_halide_backends("grid_sample")) {
    for (const Want& w : wants) {
      const Result r = evaluate(*b, row_case(row, w.xs, w.mode, w.pad, w.ac));
      const std::string what = b->name() + " " + w.mode + " " + w.pad + (w.ac ? " aligned" : "");
      ASSERT_EQ(r.outputs.at("output").data.size(), w.out.size()) << what;
      for (size_t k = 0; k < w.out.size(); ++k) {
        EXPECT_NEAR(r.outputs.at("output").data[k], w.out[k], 1e-5) << what << " output " << k;
        EXPECT_NEAR(r.grads.at("grid").data[2 * k], w.gx[k], 1e-4) << what << " grad x " << k;
      }
    }
  }
}

TEST(HalideGridSample, SharedPixelsAccumulateInTheScatter) {
  // 64 positions, all at the centre of a 2 x 2 image (g = 0): each hands gout / 4 to every
  // pixel, so each pixel's gradient is 64 * 1 / 4 = 16 exactly. Concurrent adds on the GPU
  // schedules must all land (atomics), as must the CPU's per-plane tasks.
  Case c;
  c.op = "grid_sample";
  c.params = {{"mode", "bilinear"}, {"padding_mode", "zeros"}, {"align_corners", false}};
  c.inputs["input"] = Tensor(Shape{2, 3, 2, 2}, 1.0);
  c.inputs["grid"] = Tensor(Shape{2, 8, 8, 2}, 0.0);
  c.grad_output = Tensor(Shape{2, 3, 8, 8}, 1.0);
  for (Backend* b : runnable_halide_backends("grid_sample")) {
    const Result r = evaluate(*b, c);
    for (double v : r.grads.at("input").data) EXPECT_EQ(v, 16.0) << b->name();
    for (double v : r.outputs.at("output").data) EXPECT_EQ(v, 1.0) << b->name();
  }
}

TEST(HalideGridSample, EmptyCases) {
  for (Backend* b : runnable_halide_backends("grid_sample")) {
    Case c = row_case({1, 2}, {0}, "bilinear", "zeros", false);
    c.inputs["grid"] = Tensor(Shape{1, 0, 3, 2});
    c.grad_output = Tensor(Shape{1, 1, 0, 3});
    const Result r = evaluate(*b, c);
    EXPECT_EQ(r.outputs.at("output").shape, (Shape{1, 1, 0, 3})) << b->name();
    EXPECT_EQ(r.grads.at("input").data, (std::vector<double>{0, 0})) << b->name();
    Case five;
    five.op = "grid_sample";
    five.inputs["input"] = Tensor(Shape{1, 1, 2, 2, 2}, 1.0);
    five.inputs["grid"] = Tensor(Shape{1, 0, 1, 1, 3});
    five.grad_output = Tensor(Shape{1, 1, 0, 1, 1});
    const Result r5 = evaluate(*b, five);
    EXPECT_EQ(r5.outputs.at("output").shape, (Shape{1, 1, 0, 1, 1})) << b->name();
    EXPECT_EQ(r5.grads.at("input").data, std::vector<double>(8, 0.0)) << b->name();
  }
}

// ---------------------------------------------------------------- 5-D hand cases

// A 2 x 2 x 2 volume holding v(d, h, w) = 1 + w + 2h + 4d, sampled at `points` (x, y, z): inside
// the volume trilinear reads 1 + cx + 2 cy + 4 cz exactly, and its gradient along the grid is
// (1, 2, 4) times the unnormalise factor (1/2 aligned, 1 not, for S = 2) times the padding's slope.
Case volume_case(const std::vector<std::array<double, 3>>& points, const std::string& mode, const std::string& pad,
                 bool ac) {
  Case c;
  c.op = "grid_sample";
  c.params = {{"mode", mode}, {"padding_mode", pad}, {"align_corners", ac}};
  Tensor x(Shape{1, 1, 2, 2, 2});
  for (size_t i = 0; i < 8; ++i) x.data[i] = 1.0 + double(i);  // i = w + 2h + 4d
  Tensor g(Shape{1, 1, 1, int64_t(points.size()), 3});
  for (size_t k = 0; k < points.size(); ++k)
    for (size_t a = 0; a < 3; ++a) g.data[3 * k + a] = points[k][a];
  c.inputs["input"] = x;
  c.inputs["grid"] = g;
  c.grad_output = Tensor(Shape{1, 1, 1, 1, int64_t(points.size())}, 1.0);
  return c;
}

TEST(HalideGridSample, FiveDHandValues) {
  const double nan = std::nan("");
  struct Want {
    const char* mode;
    const char* pad;
    bool ac;
    std::vector<std::array<double, 3>> points;
    std::vector<double> out;
    std::vector<std::array<double, 3>> grad;
  };
  const std::vector<Want> wants = {
      // Aligned centre: c = 0.5 on every axis, 1 + 0.5 + 1 + 2; border clamps x to 1 and y to 0
      // (slope 0), z = 0.75.
      {"bilinear", "border", true, {{0, 0, 0}, {2, -3, 0.5}}, {4.5, 5}, {{0.5, 1, 2}, {0, 0, 2}}},
      // Not aligned, c = g + 0.5: x = -0.5 blends pixel -1 (reads 0) and pixel 0 by halves.
      {"bilinear", "zeros", false, {{0, 0, 0}, {-1, 0, 0}, {nan, 0, 0}}, {4.5, 2, 0}, {{1, 2, 4}, {4, 1, 2}, {0, 0, 0}}},
      // Aligned reflection: x = -0.25 folds to 0.25 with slope -1.
      {"bilinear", "reflection", true, {{-1.5, 0, 0}}, {4.25}, {{-0.5, 1, 2}}},
      // nearest: c = (0.75, 0.25, 1.25) rounds to (1, 0, 1); the tie 0.5 rounds to even 0.
      {"nearest", "zeros", false, {{0.25, -0.25, 0.75}, {0, 0, 0}}, {6, 1}, {{0, 0, 0}, {0, 0, 0}}},
  };
  for (Backend* b : runnable_halide_backends("grid_sample")) {
    for (const Want& w : wants) {
      const Result r = evaluate(*b, volume_case(w.points, w.mode, w.pad, w.ac));
      const std::string what = b->name() + " 5-D " + w.mode + " " + w.pad + (w.ac ? " aligned" : "");
      ASSERT_EQ(r.outputs.at("output").data.size(), w.out.size()) << what;
      for (size_t k = 0; k < w.out.size(); ++k) {
        EXPECT_NEAR(r.outputs.at("output").data[k], w.out[k], 1e-5) << what << " output " << k;
        for (size_t a = 0; a < 3; ++a)
          EXPECT_NEAR(r.grads.at("grid").data[3 * k + a], w.grad[k][a], 1e-4) << what << " grad " << a << " of " << k;
      }
    }
  }
}

TEST(HalideGridSample, FiveDSharedVoxelsAccumulateInTheScatter) {
  // 64 positions at the centre of a 2 x 2 x 2 volume: each hands gout / 8 to every voxel, so
  // each voxel's gradient is 64 / 8 = 8 exactly.
  Case c;
  c.op = "grid_sample";
  c.params = {{"mode", "bilinear"}, {"padding_mode", "zeros"}, {"align_corners", false}};
  c.inputs["input"] = Tensor(Shape{2, 3, 2, 2, 2}, 1.0);
  c.inputs["grid"] = Tensor(Shape{2, 4, 4, 4, 3}, 0.0);
  c.grad_output = Tensor(Shape{2, 3, 4, 4, 4}, 1.0);
  for (Backend* b : runnable_halide_backends("grid_sample")) {
    const Result r = evaluate(*b, c);
    for (double v : r.grads.at("input").data) EXPECT_EQ(v, 8.0) << b->name();
    for (double v : r.outputs.at("output").data) EXPECT_EQ(v, 1.0) << b->name();
  }
}

TEST(HalideGridSample, FiveDTapsOutsideReadNothingBesideNonFiniteVoxels) {
  // zeros padding, not aligned, S = 2: g = -2 puts c at -1.5 (taps -2 and -1) and g = 2 at 2.5
  // (taps 2 and 3), all outside, so the output is exactly 0 whatever the volume holds. A
  // kernel that reads the clamped voxel for such a tap and zeroes only its weight gets
  // 0 * Inf = NaN: the face x = 0 holds +Inf, x = 1 NaN, and the other two axes sit at the
  // centre, reading both faces. The CPU's channels-last kernel sends such a tap to a plane of
  // zeros past the end of its axis rather than masking it (grid_sample3d_generator.cpp).
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  Case c = volume_case({{-2, 0, 0}, {2, 0, 0}, {0, -2, 0}, {0, 2, 0}, {0, 0, -2}, {0, 0, 2}, {0, 0, 0}}, "bilinear",
                       "zeros", false);
  for (size_t i = 0; i < 8; ++i) c.inputs["input"].data[i] = i % 2 == 0 ? inf : nan;  // i = w + 2h + 4d
  // The same case with 16 channels (one full channels-last block on the CPU), and with 3.
  for (int64_t C : {1, 3, 16}) {
    Case cc = c;
    Tensor x(Shape{1, C, 2, 2, 2});
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = c.inputs["input"].data[i % 8];
    cc.inputs["input"] = x;
    cc.grad_output = Tensor(Shape{1, C, 1, 1, 7}, 1.0);
    for (Backend* b : runnable_halide_backends("grid_sample")) {
      const Result r = evaluate(*b, cc);
      const std::vector<double>& out = r.outputs.at("output").data;
      ASSERT_EQ(out.size(), size_t(7 * C)) << b->name();
      for (int64_t ch = 0; ch < C; ++ch) {
        for (size_t k = 0; k < 6; ++k)
          EXPECT_EQ(out[size_t(ch) * 7 + k], 0.0) << b->name() << " C " << C << " channel " << ch << " position " << k;
        EXPECT_TRUE(std::isnan(out[size_t(ch) * 7 + 6])) << b->name() << " C " << C << ": the centre reads NaN";
      }
    }
  }
}

TEST(HalideGridSample, ManyChannelsFillWholeVectorsAndATail) {
  // The CPU grad_input gives each vector lane a channel, 8 channels a task: 19 channels are
  // two full groups and a tail of 3. Random float32 cases, 4-D and 5-D, every padding, against ref.
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> grid_u(-1.2, 1.2), val_u(-1, 1);
  auto fill = [&](Tensor t, std::uniform_real_distribution<double>& u) {
    for (double& v : t.data) v = u(rng);
    return t;
  };
  for (Backend* b : runnable_halide_backends("grid_sample"))
    for (int rank : {4, 5})
      for (const char* mode : {"bilinear", "nearest"})
        for (const char* pad : {"zeros", "border", "reflection"}) {
          Case c;
          c.op = "grid_sample";
          c.params = {{"mode", mode}, {"padding_mode", pad}, {"align_corners", rank == 5}};
          const bool five = rank == 5;
          c.inputs["input"] = fill(Tensor(five ? Shape{2, 19, 3, 4, 5} : Shape{2, 19, 5, 6}), val_u);
          c.inputs["grid"] = fill(Tensor(five ? Shape{2, 2, 3, 7, 3} : Shape{2, 3, 7, 2}), grid_u);
          c.grad_output = fill(Tensor(five ? Shape{2, 19, 2, 3, 7} : Shape{2, 19, 3, 7}), val_u);
          const compare::FloatOutcome o = compare::compare_float_backend(ref(), *b, compare::float_rounded_case(c));
          EXPECT_EQ(o.verdict, compare::Verdict::Agree)
              << b->name() << " " << rank << "-D " << mode << " " << pad << ": " << compare::verdict_name(o.verdict)
              << ": " << o.detail;
        }
}

// The CPU's channels-last kernels copy blocks of 16 channels of an image to channels-last
// order (64 bytes per pixel and block), which Halide cannot allocate past 2^31 - 1 bytes: one
// block of 33554431 pixels fits (2147483584 bytes), of 2^25 pixels not; four blocks (64
// channels, the 2-D kernels copy them all at once) of 8388607 pixels fit (2147483392 bytes),
// of 2^23 not. Sparse grids (under 1/64 position per pixel) skip the copy.
TEST(HalideGridSample, ChannelsLastChoice) {
  using halide_glue::grid_sample_blocks;
  using halide_glue::grid_sample_channels_last;
  EXPECT_TRUE(grid_sample_channels_last(128 * 128, 128 * 128, 1));
  EXPECT_TRUE(grid_sample_channels_last(16 * 16, 64 * 64, 1));  // 1/16
  EXPECT_TRUE(grid_sample_channels_last(64, 64 * 64, 4));       // 1/64
  EXPECT_FALSE(grid_sample_channels_last(63, 64 * 64, 1));
  EXPECT_FALSE(grid_sample_channels_last(1, 1000, 1));
  EXPECT_TRUE(grid_sample_channels_last(int64_t(1) << 25, (int64_t(1) << 25) - 1, 1));
  EXPECT_FALSE(grid_sample_channels_last(int64_t(1) << 25, int64_t(1) << 25, 1));
  EXPECT_TRUE(grid_sample_channels_last(int64_t(1) << 23, (int64_t(1) << 23) - 1, 4));
  EXPECT_FALSE(grid_sample_channels_last(int64_t(1) << 23, int64_t(1) << 23, 4));
  EXPECT_TRUE(grid_sample_channels_last(int64_t(1) << 23, int64_t(1) << 23, 3));
  EXPECT_EQ(grid_sample_blocks(1), 1);
  EXPECT_EQ(grid_sample_blocks(16), 1);
  EXPECT_EQ(grid_sample_blocks(17), 2);
  EXPECT_EQ(grid_sample_blocks(64), 4);
}

// 4097 x 8192 pixels (2^25 + 8192): its block would be past 2^31 bytes, Halide's limit (the
// forward failed with an allocation error), and the grid's 513 x 1024 positions are more than
// 1/64 of the pixels, so only the size sends it to the plain gather. By hand: every row is the
// same, X[h][w] = (w mod 1000) / 1000, and each x sits on a pixel centre, (2w + 1) / 8192 - 1
// (exact in float32), so whatever y, bilinear reads X[.][w] with weights 1 along x and weights
// summing to 1 along y (forward only: 128 MiB of float32 input, 256 MiB as the case's doubles).
TEST(HalideGridSample, InputPastTheChannelsLastLimit) {
  Backend* b = runnable_backend("halide-cpu", "grid_sample");
  if (!b) GTEST_SKIP() << "halide-cpu cannot run here";
  const int64_t H = 4097, W = 8192, P = 513 * 1024;
  ASSERT_FALSE(halide_glue::grid_sample_channels_last(P, H * W, 1));
  ASSERT_GE(P * 64, H * W);  // the ratio alone would copy
  Case c;
  c.op = "grid_sample";
  c.params = {{"mode", "bilinear"}, {"padding_mode", "zeros"}, {"align_corners", false}};
  Tensor x(Shape{1, 1, H, W});
  for (int64_t h = 0; h < H; ++h)
    for (int64_t w = 0; w < W; ++w) x.data[size_t(h * W + w)] = double(w % 1000) / 1000.0;
  Tensor g(Shape{1, 513, 1024, 2});
  std::vector<int64_t> col(static_cast<size_t>(P));
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int64_t> wu(0, W - 1);
  std::uniform_real_distribution<double> yu(-0.99, 0.99);
  for (int64_t k = 0; k < P; ++k) {
    col[size_t(k)] = wu(rng);
    g.data[size_t(2 * k)] = double(2 * col[size_t(k)] + 1) / double(W) - 1.0;
    g.data[size_t(2 * k + 1)] = yu(rng);
  }
  c.inputs["input"] = std::move(x);
  c.inputs["grid"] = std::move(g);
  const Result r = evaluate(*b, c);
  const Tensor& out = r.outputs.at("output");
  ASSERT_EQ(out.numel(), P);
  double worst = 0;
  for (int64_t k = 0; k < P; ++k) {
    const double want = double(float(double(col[size_t(k)] % 1000) / 1000.0));
    worst = std::max(worst, std::fabs(out.data[size_t(k)] - want));
  }
  EXPECT_LE(worst, 4e-7);  // two float32 products and a sum of values below 1
}

// Bicubic at an exact integer coordinate: x = -1/3 on 4 pixels (align_corners) is c = 1 in
// double, where the taps 0 and 2 weigh W(1) = 0 (and 3 weighs W(2) = 0): with the values
// [1e6, 0, 1e6, 0] the output is exactly 0 from terms that are all 0. float32 rounds x to
// -0.33333334, c = 1 - 1.5e-8, and the taps 0 and 2 weigh about +-0.75 x 1.5e-8: terms of
// +-0.011 that cancel, each rounded by the kernel. Its error is float32 rounding of terms the
// case's own taps weigh 0, so the bound's A must come from the float32-rounded case's taps too
// (without them A = 0 and the kernel is a finding).
TEST(HalideGridSample, BicubicBoundCountsTheTapsFloat32Moves) {
  Case c = row_case({1e6, 0.0, 1e6, 0.0}, {-1.0 / 3.0}, "bicubic", "zeros", true);
  c.grad_output.reset();
  ASSERT_NE(double(float(-1.0 / 3.0)), -1.0 / 3.0);
  ASSERT_EQ(evaluate(ref(), c).outputs.at("output").data[0], 0.0);
  for (Backend* b : runnable_halide_backends("grid_sample")) {
    const compare::FloatOutcome o = compare::compare_float_backend(ref(), *b, c);
    EXPECT_EQ(o.verdict, compare::Verdict::Agree) << b->name() << ": " << compare::verdict_name(o.verdict) << " " << o.detail;
  }
}

// bicubic merges the taps that padding sends to one pixel (halide/generators/grid_sample_taps.h);
// the reference sums them one by one, so an Inf pixel gives NaN where two merged weights have
// opposite signs or one is 0 (found by the fuzz generator once it drew non-finite pixels). By
// hand, align_corners, coordinate 0.5 on both axes: the taps -1, 0, 1, 2 weigh -0.09375,
// 0.59375, 0.59375, -0.09375 (cubic convolution, A = -0.75).
//  * 2 x 2 image (the channels-last forward: 1 position for 4 pixels), Inf at (0, 0), grid 0:
//    zeros reads taps 0 and 1 only: 0.59375^2 * Inf = +Inf; border clamps taps -1, 0 to pixel 0
//    (-0.09375 and 0.59375: NaN); reflection about [0, 1] sends taps 0 and 2 to pixel 0 (NaN).
//  * 9 x 9 image (the plain gather: 1 position for 81 pixels), Inf at (0, 0), grid -0.875:
//    zeros +Inf as above; border merges taps -1 and 0 into pixel 0 (NaN); reflection about
//    [0, 8] sends tap -1 to pixel 1 and leaves pixel 0 to tap 0 alone: +Inf, no NaN.
// grad_grid along x: dw of tap 0 times w of tap 0 times Inf: -Inf (zeros), and NaN or not
// exactly as the output.
TEST(HalideGridSample, NonFinitePixelsThroughMergedBicubicTaps) {
  struct Want {
    int64_t side;
    double g;
    const char* pad;
    bool nan;  // else +Inf (output), -Inf (grad x)
  };
  const std::vector<Want> wants = {{2, 0.0, "zeros", false},    {2, 0.0, "border", true},
                                   {2, 0.0, "reflection", true}, {9, -0.875, "zeros", false},
                                   {9, -0.875, "border", true},  {9, -0.875, "reflection", false}};
  std::vector<Backend*> backends = runnable_halide_backends("grid_sample");
  backends.insert(backends.begin(), &ref());
  for (const Want& w : wants) {
    Case c;
    c.op = "grid_sample";
    c.params = {{"mode", "bicubic"}, {"padding_mode", w.pad}, {"align_corners", true}};
    Tensor x(Shape{1, 1, w.side, w.side}, 1.0);
    x.data[0] = INFINITY;
    c.inputs["input"] = x;
    c.inputs["grid"] = Tensor(Shape{1, 1, 1, 2}, w.g);
    c.grad_output = Tensor(Shape{1, 1, 1, 1}, 1.0);
    EXPECT_EQ(halide_glue::grid_sample_channels_last(1, w.side * w.side, 1), w.side == 2);
    for (Backend* b : backends) {
      const Result r = evaluate(*b, c);
      const std::string what = b->name() + " " + w.pad + " " + std::to_string(w.side) + "x" + std::to_string(w.side);
      const double out = r.outputs.at("output").data[0], gx = r.grads.at("grid").data[0];
      if (w.nan) {
        EXPECT_TRUE(std::isnan(out)) << what << " output " << out;
        EXPECT_TRUE(std::isnan(gx)) << what << " grad x " << gx;
      } else {
        EXPECT_EQ(out, INFINITY) << what << " output";
        EXPECT_EQ(gx, -INFINITY) << what << " grad x";
      }
    }
  }
}

// A far bicubic weight at |d| just under 2 is all cancellation: its double is rounding noise,
// and its sign decides the sign of an Inf pixel it reads. A fuzz case: 5 x 6 image, Inf at
// row 4, column 1; border; the grid at x = -1 (c = -0.5: column 1 is tap 3, weight
// cubic(1.5) = -0.09375) and y = 1e-9 as float32 (c = 2 + 2.5e-9: row 4 is tap 3 at
// d = -(2 - 2.5e-9)). The reference reads +Inf there, as torch's CPU grid_sample does in
// float64 (in float32 it reads NaN); the kernels formed c with a fused multiply-add, an ulp
// from the reference's c, and read -Inf. Each Halide backend must take the reference's sign.
TEST(HalideGridSample, BicubicFarWeightTakesTheReferenceSignAtAnInfPixel) {
  Case c;
  c.op = "grid_sample";
  c.params = {{"mode", "bicubic"}, {"padding_mode", "border"}, {"align_corners", false}};
  Tensor x(Shape{1, 1, 5, 6}, 0.0);
  x.data[4 * 6 + 1] = INFINITY;
  c.inputs["input"] = x;
  Tensor g(Shape{1, 1, 1, 2});
  g.data = {-1.0, double(1e-9f)};
  c.inputs["grid"] = g;
  const double want = evaluate(ref(), c).outputs.at("output").data[0];
  ASSERT_EQ(want, INFINITY);
  for (Backend* b : runnable_halide_backends("grid_sample"))
    EXPECT_EQ(evaluate(*b, c).outputs.at("output").data[0], want) << b->name();
}

}  // namespace
}  // namespace oplab
