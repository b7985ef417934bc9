// Tests of the interpolate reference (SPEC §6) against values derived by hand (the formula
// rows of SPEC §8) and an adjoint test <J x, y> == <x, J^T y> for every mode and rank.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>

#include "reference/reference.h"

namespace oplab {
namespace {

using ref::interpolate_backward;
using ref::interpolate_forward;

// Axis given by `size`: the kernel scale is in/out.
InterpAxis sized(int64_t in, int64_t out) { return InterpAxis{in, out, std::nullopt}; }

// Axis given by `scale_factor` without recompute: out = floor(in * sf) in double, kernel scale 1/sf.
InterpAxis scaled(int64_t in, double sf) { return InterpAxis{in, int64_t(std::floor(double(in) * sf)), sf}; }

InterpParams params(InterpMode mode, int64_t N, int64_t C, std::vector<InterpAxis> axes, bool align_corners = false) {
  InterpParams p;
  p.mode = mode;
  p.N = N;
  p.C = C;
  p.axes = std::move(axes);
  p.align_corners = align_corners;
  return p;
}

Shape input_shape(const InterpParams& p) {
  Shape s{p.N, p.C};
  for (const auto& a : p.axes) s.push_back(a.in);
  return s;
}

Tensor tensor(Shape shape, std::vector<double> data) {
  Tensor t(std::move(shape));
  EXPECT_EQ(t.data.size(), data.size());
  t.data = std::move(data);
  return t;
}

// 0, 1, 2, ... : the value read tells the source index.
Tensor iota(Shape shape) {
  Tensor t(std::move(shape));
  for (size_t e = 0; e < t.data.size(); ++e) t.data[e] = double(e);
  return t;
}

// ---------------------------------------------------------------------------------------------
// SPEC §8 rows that concern the formula.

TEST(RefInterpolate, Bilinear2x2To1x1IsTheMean) {
  const auto p = params(InterpMode::Bilinear, 1, 1, {sized(2, 1), sized(2, 1)});
  const Tensor out = interpolate_forward(p, tensor({1, 1, 2, 2}, {1, 2, 3, 4}));
  // scale = 2/1; src = 2 * (0 + 0.5) - 0.5 = 0.5 on both axes: i0 = 0, i1 = 1, lambda = 0.5.
  // out = 0.25 * (1 + 2 + 3 + 4) = 2.5 (not 1.0 as in older PyTorch / ONNX pytorch_half_pixel).
  ASSERT_EQ(out.shape, (Shape{1, 1, 1, 1}));
  EXPECT_DOUBLE_EQ(out.data[0], 2.5);
  // Backward with gout = 1: each input gets its weight 0.25.
  const Tensor gi = interpolate_backward(p, tensor({1, 1, 2, 2}, {1, 2, 3, 4}), tensor({1, 1, 1, 1}, {1}));
  for (double v : gi.data) EXPECT_DOUBLE_EQ(v, 0.25);
}

TEST(RefInterpolate, Area5To3OverlappingBins) {
  const auto p = params(InterpMode::Area, 1, 1, {sized(5, 3)});
  const Tensor x = tensor({1, 1, 5}, {1, 2, 3, 4, 5});
  const Tensor out = interpolate_forward(p, x);
  // Bins: a = 0: [0*5/3, ceil(5/3)) = [0, 2) -> (1+2)/2 = 1.5
  //       a = 1: [floor(5/3), ceil(10/3)) = [1, 4) -> (2+3+4)/3 = 3
  //       a = 2: [floor(10/3), 5) = [3, 5) -> (4+5)/2 = 4.5
  ASSERT_EQ(out.shape, (Shape{1, 1, 3}));
  EXPECT_DOUBLE_EQ(out.data[0], 1.5);
  EXPECT_DOUBLE_EQ(out.data[1], 3.0);
  EXPECT_DOUBLE_EQ(out.data[2], 4.5);
  // Backward with gout = 1: inputs 1 and 3 sit in two bins: 1/2 + 1/3; input 2 only in the middle: 1/3.
  const Tensor gi = interpolate_backward(p, x, tensor({1, 1, 3}, {1, 1, 1}));
  const double want[] = {0.5, 0.5 + 1.0 / 3, 1.0 / 3, 1.0 / 3 + 0.5, 0.5};
  for (int e = 0; e < 5; ++e) EXPECT_NEAR(gi.data[size_t(e)], want[e], 1e-15) << e;
}

TEST(RefInterpolate, Nearest6To34UsesFloat32Scale) {
  const auto p = params(InterpMode::Nearest, 1, 1, {sized(6, 34)});
  const Tensor out = interpolate_forward(p, iota({1, 1, 6}));
  // scale = float(6)/float(34) = 0.176470592... (above 6/34 = 0.1764705882...); 17 * scale =
  // 3.0000000745 rounds to 3.0f -> index 3. OpenCV computes the scale as 1/(34/6) in double,
  // 0.17647058823529410, and 17 * that = 2.9999999999999996 -> index 2 (the SPEC §8 row).
  EXPECT_EQ(int64_t(std::floor(17.0 * (1.0 / (34.0 / 6.0)))), 2);  // OpenCV's index, not ours
  EXPECT_EQ(out.data[17], 3.0);
  // Neighbours: 16 * 0.17647 = 2.82 -> 2; 33 * 0.17647 = 5.82 -> 5.
  EXPECT_EQ(out.data[16], 2.0);
  EXPECT_EQ(out.data[33], 5.0);
}

TEST(RefInterpolate, NearestIndexIsComputedInFloat32) {
  // 14 -> 46: float(14)/float(46) = 0.30434781 lies below 14/46 = 0.30434782608..., and at
  // dst 23 the float product 23 * 0.30434781 = 6.9999995 -> index 6, whereas exact (and double)
  // arithmetic gives 23 * 14 / 46 = 7. PyTorch computes in float32, so the reference reads 6.
  const auto p = params(InterpMode::Nearest, 1, 1, {sized(14, 46)});
  const Tensor out = interpolate_forward(p, iota({1, 1, 14}));
  EXPECT_EQ(int64_t(std::floor(23.0 * (14.0 / 46.0))), 7);  // the double result we must not get
  EXPECT_EQ(out.data[23], 6.0);
  EXPECT_EQ(out.data[22], 6.0);  // 22 * 0.3043 = 6.70 -> 6
  EXPECT_EQ(out.data[24], 7.0);  // 24 * 0.3043 = 7.30 -> 7
  // With a scale factor the rounding goes the other way: in 11, sf 3.7 -> out 40, scale
  // float(1/3.7) = 0.27027026; at dst 37 the exact product 9.99999955 rounds to 10.0f -> index 10,
  // while the double 37 * (1/3.7) = 9.999999999999998 -> 9.
  const auto q = params(InterpMode::Nearest, 1, 1, {scaled(11, 3.7)});
  ASSERT_EQ(q.axes[0].out, 40);
  EXPECT_EQ(int64_t(std::floor(37.0 * (1.0 / 3.7))), 9);
  EXPECT_EQ(interpolate_forward(q, iota({1, 1, 11})).data[37], 10.0);
}

TEST(RefInterpolate, NearestExact2To1ReadsIndex1) {
  const auto p = params(InterpMode::NearestExact, 1, 1, {sized(2, 1)});
  const Tensor out = interpolate_forward(p, tensor({1, 1, 2}, {10, 20}));
  // scale = 2; floor((0 + 0.5) * 2) = 1, min(1, 2 - 1) = 1 -> 20 (OpenCV 4.6 reads index 0).
  EXPECT_EQ(out.data[0], 20.0);
}

TEST(RefInterpolate, NearestScaleFactor2Point1FollowsTheFormula) {
  // in = 5, sf = 2.1: out = floor(10.5) = 10 = 2 * in, but the reference does NOT take
  // PyTorch's CPU shortcut dst >> 1. scale = float(1/2.1) = 0.47619..., src = floor(dst * scale):
  // 0, 0.48, 0.95, 1.43, 1.90, 2.38, 2.86, 3.33, 3.81, 4.29 -> 0,0,0,1,1,2,2,3,3,4.
  const std::vector<double> want = {0, 0, 0, 1, 1, 2, 2, 3, 3, 4};
  const auto p1 = params(InterpMode::Nearest, 1, 1, {scaled(5, 2.1)});
  ASSERT_EQ(p1.axes[0].out, 10);
  EXPECT_EQ(interpolate_forward(p1, iota({1, 1, 5})).data, want);
  // Same per axis in 2-D (rows: H = 1 -> 1 reads row 0): the 2-D CPU kernel would give 0,0,1,1,...
  const auto p2 = params(InterpMode::Nearest, 1, 1, {sized(1, 1), scaled(5, 2.1)});
  EXPECT_EQ(interpolate_forward(p2, iota({1, 1, 1, 5})).data, want);
}

TEST(RefInterpolate, AlignCornersSameSizeIsIdentity) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  struct Mode {
    InterpMode mode;
    std::vector<InterpAxis> axes;
  };
  // align_corners: scale = (in-1)/(out-1) = 1, src = dst, lambda = 0 (last index: i1 = i0);
  // bicubic: t = 0 gives weights W(1), W(0), W(1), W(2) = 0, 1, 0, 0.
  const std::vector<Mode> modes = {
      {InterpMode::Linear, {sized(5, 5)}},
      {InterpMode::Bilinear, {sized(3, 3), sized(4, 4)}},
      {InterpMode::Bicubic, {sized(3, 3), sized(4, 4)}},
      {InterpMode::Trilinear, {sized(2, 2), sized(3, 3), sized(4, 4)}},
  };
  for (const auto& m : modes) {
    const auto p = params(m.mode, 2, 3, m.axes, /*align_corners=*/true);
    Tensor x(input_shape(p));
    for (double& v : x.data) v = u(rng);
    const Tensor out = interpolate_forward(p, x);
    EXPECT_EQ(out.data, x.data) << interp_mode_name(m.mode);
  }
}

TEST(RefInterpolate, BicubicHandValuesAndWeightsSumToOne) {
  // H: 1 -> 1 (src = 0, t = 0: reads row 0 with weight W(0) = 1); W: 4 -> 8, scale 0.5.
  const auto p = params(InterpMode::Bicubic, 1, 1, {sized(1, 1), sized(4, 8)});
  const Tensor out = interpolate_forward(p, tensor({1, 1, 1, 4}, {1, 2, 3, 4}));
  // W(d) = 1.25|d|^3 - 2.25 d^2 + 1 (|d| <= 1); -0.75|d|^3 + 3.75 d^2 - 6|d| + 3 (1 < |d| < 2):
  //   W(0.25) = 0.87890625, W(0.75) = 0.26171875, W(1.25) = -0.10546875, W(1.75) = -0.03515625.
  // dst 0: src = 0.5 * 0.5 - 0.5 = -0.25 (not clamped), i = -1, t = 0.75; taps -2, -1, 0, 1 ->
  //   clamped 0, 0, 0, 1 with W(1.75), W(0.75), W(0.25), W(1.25):
  //   (-0.03515625 + 0.26171875 + 0.87890625) * 1 - 0.10546875 * 2 = 0.89453125.
  EXPECT_DOUBLE_EQ(out.data[0], 0.89453125);
  // dst 3: src = 0.5 * 3.5 - 0.5 = 1.25, i = 1, t = 0.25; taps 0..3 with W(1.25), W(0.25), W(0.75),
  //   W(1.75): -0.10546875 * 1 + 0.87890625 * 2 + 0.26171875 * 3 - 0.03515625 * 4 = 2.296875
  //   (A = -0.75 does not reproduce linear data: linear would give 2.25).
  EXPECT_DOUBLE_EQ(out.data[3], 2.296875);

  // Weights sum to 1 for every t: a constant input stays constant, at many fractional positions
  // (in 7 -> 23 and 9 -> 4, both align_corners settings).
  for (bool ac : {false, true}) {
    for (auto axes : {std::vector<InterpAxis>{sized(7, 23), sized(9, 4)}, {scaled(5, 1.7), scaled(6, 0.7)}}) {
      const auto q = params(InterpMode::Bicubic, 1, 2, axes, ac);
      const Tensor o = interpolate_forward(q, Tensor(input_shape(q), 3.25));
      for (double v : o.data) EXPECT_NEAR(v, 3.25, 1e-14);
    }
  }
}

TEST(RefInterpolate, SameSizeWithScaleFactorIsNotIdentity) {
  // bicubic, W = 5, sf = 1.1: out = floor(5.5) = 5 but scale = 1/1.1, so src != dst.
  // PyTorch's CPU nearest/linear take the identity here; the reference follows the formula.
  {
    const auto p = params(InterpMode::Bicubic, 1, 1, {sized(1, 1), scaled(5, 1.1)});
    ASSERT_EQ(p.axes[1].out, 5);
    const Tensor x = iota({1, 1, 1, 5});
    EXPECT_NE(interpolate_forward(p, x).data, x.data);
  }
  {
    const auto p = params(InterpMode::Linear, 1, 1, {scaled(5, 1.1)});
    const Tensor out = interpolate_forward(p, iota({1, 1, 5}));
    // dst 0: src = 0.5/1.1 - 0.5 < 0 -> clamped to 0 -> 0.
    // dst 4: src = 4.5/1.1 - 0.5 = 3.5909...: i0 = 3, lambda = 0.5909... -> value = src.
    EXPECT_EQ(out.data[0], 0.0);
    EXPECT_NEAR(out.data[4], 4.5 / 1.1 - 0.5, 1e-14);
  }
}

TEST(RefInterpolate, LinearScaleFactorVersusRecompute) {
  // W = 5, sf = 1.5: out 7. Without recompute scale = 1/1.5 = 2/3; with it (axis given by size)
  // scale = 5/7. On x = 0..4 (linear data) the output is the source coordinate itself.
  const auto p_sf = params(InterpMode::Linear, 1, 1, {scaled(5, 1.5)});
  const auto p_rc = params(InterpMode::Linear, 1, 1, {sized(5, 7)});
  ASSERT_EQ(p_sf.axes[0].out, 7);
  const Tensor x = iota({1, 1, 5});
  // dst 1: 2/3 * 1.5 - 0.5 = 0.5;  5/7 * 1.5 - 0.5 = 4/7 = 0.571428...
  EXPECT_NEAR(interpolate_forward(p_sf, x).data[1], 0.5, 1e-15);
  EXPECT_NEAR(interpolate_forward(p_rc, x).data[1], 4.0 / 7.0, 1e-15);
}

TEST(RefInterpolate, LinearHandValues) {
  const Tensor x = tensor({1, 1, 2}, {0, 10});
  // 2 -> 4, half-pixel: scale 0.5, src = 0.5 dst - 0.25 = -0.25 (clamped to 0), 0.25, 0.75, 1.25.
  // dst 3: i0 = min(1, 1) = 1, i1 = 1 (last index), lambda = 0.25 on the same element -> 10.
  const Tensor a = interpolate_forward(params(InterpMode::Linear, 1, 1, {sized(2, 4)}), x);
  EXPECT_EQ(a.data, (std::vector<double>{0, 2.5, 7.5, 10}));
  // align_corners: scale = 1/3, src = dst/3 -> 0, 10/3, 20/3, 10.
  const Tensor b = interpolate_forward(params(InterpMode::Linear, 1, 1, {sized(2, 4)}, true), x);
  EXPECT_NEAR(b.data[1], 10.0 / 3, 1e-14);
  EXPECT_NEAR(b.data[2], 20.0 / 3, 1e-14);
  EXPECT_DOUBLE_EQ(b.data[3], 10.0);
  // align_corners with out = 1: scale 0, reads index 0.
  const Tensor c = interpolate_forward(params(InterpMode::Linear, 1, 1, {sized(2, 1)}, true), x);
  EXPECT_EQ(c.data[0], 0.0);
}

TEST(RefInterpolate, TrilinearAndAreaBoxes) {
  // 2x2x2 -> 1x1x1: src = 0.5 on each axis, weight 1/8 each: mean of 0..7 = 3.5.
  const Tensor x = iota({1, 1, 2, 2, 2});
  EXPECT_DOUBLE_EQ(
      interpolate_forward(params(InterpMode::Trilinear, 1, 1, {sized(2, 1), sized(2, 1), sized(2, 1)}), x).data[0],
      3.5);
  EXPECT_DOUBLE_EQ(
      interpolate_forward(params(InterpMode::Area, 1, 1, {sized(2, 1), sized(2, 1), sized(2, 1)}), x).data[0], 3.5);
  // Area 2-D 4x4 -> 2x2 on 0..15: block means. Top-left {0,1,4,5} -> 2.5; bottom-right
  // {10,11,14,15} -> 12.5.
  const Tensor y = interpolate_forward(params(InterpMode::Area, 1, 1, {sized(4, 2), sized(4, 2)}), iota({1, 1, 4, 4}));
  EXPECT_DOUBLE_EQ(y.data[0], 2.5);
  EXPECT_DOUBLE_EQ(y.data[3], 12.5);
  // Area upsampling 2 -> 3: bins [0,1), [0,2), [1,2) -> 0, 0.5, 1 on {0, 1}.
  const Tensor z = interpolate_forward(params(InterpMode::Area, 1, 1, {sized(2, 3)}), iota({1, 1, 2}));
  EXPECT_EQ(z.data, (std::vector<double>{0, 0.5, 1}));
}

TEST(RefInterpolate, ZeroElementCases) {
  for (auto [N, C] : {std::pair<int64_t, int64_t>{0, 3}, {2, 0}}) {
    const auto p = params(InterpMode::Bilinear, N, C, {sized(3, 5), sized(4, 2)});
    const Tensor x(input_shape(p));
    const Tensor out = interpolate_forward(p, x);
    EXPECT_EQ(out.shape, (Shape{N, C, 5, 2}));
    EXPECT_EQ(out.numel(), 0);
    const Tensor gi = interpolate_backward(p, x, Tensor(p.output_shape()));
    EXPECT_EQ(gi.shape, x.shape);
    EXPECT_EQ(gi.numel(), 0);
  }
}

TEST(RefInterpolate, NaNSpreadsThroughZeroWeightTap) {
  // Linear 3 -> 3 with align_corners: dst 0 reads index 0 with 1 and index 1 with weight 0;
  // 0 * NaN = NaN, as PyTorch's kernel multiplies both taps.
  const auto p = params(InterpMode::Linear, 1, 1, {sized(3, 3)}, true);
  const Tensor out = interpolate_forward(p, tensor({1, 1, 3}, {1, std::numeric_limits<double>::quiet_NaN(), 3}));
  EXPECT_TRUE(std::isnan(out.data[0]));
  EXPECT_EQ(out.data[2], 3.0);  // last index: both taps on index 2
}

// ---------------------------------------------------------------------------------------------
// Adjoint test: <forward(x), y> == <x, backward(y)> for every mode and rank, on shapes that
// up- and downsample, with and without align_corners where it applies.

struct AdjointCase {
  InterpMode mode;
  std::vector<InterpAxis> axes;
  bool align_corners;
};

TEST(RefInterpolate, BackwardIsTheAdjointOfForward) {
  const std::vector<AdjointCase> cases = {
      {InterpMode::Nearest, {sized(5, 11)}, false},
      {InterpMode::Nearest, {sized(7, 3), scaled(4, 2.6)}, false},
      {InterpMode::Nearest, {sized(3, 5), sized(6, 4), scaled(5, 0.6)}, false},
      {InterpMode::NearestExact, {sized(5, 11)}, false},
      {InterpMode::NearestExact, {sized(7, 3), scaled(4, 2.6)}, false},
      {InterpMode::NearestExact, {sized(3, 5), sized(6, 4), scaled(5, 0.6)}, false},
      {InterpMode::Area, {sized(7, 3)}, false},
      {InterpMode::Area, {sized(5, 3), sized(3, 7)}, false},
      {InterpMode::Area, {sized(4, 3), sized(3, 5), sized(6, 4)}, false},
      {InterpMode::Linear, {sized(5, 13)}, false},
      {InterpMode::Linear, {scaled(9, 0.45)}, true},
      {InterpMode::Bilinear, {sized(4, 9), scaled(7, 0.6)}, false},
      {InterpMode::Bilinear, {sized(4, 9), sized(7, 3)}, true},
      {InterpMode::Bicubic, {sized(4, 9), scaled(7, 0.6)}, false},
      {InterpMode::Bicubic, {sized(5, 2), sized(3, 8)}, true},
      {InterpMode::Trilinear, {sized(3, 5), scaled(4, 1.7), sized(6, 4)}, false},
      {InterpMode::Trilinear, {sized(3, 5), sized(4, 2), sized(6, 1)}, true},
  };
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  for (const auto& c : cases) {
    const auto p = params(c.mode, 2, 3, c.axes, c.align_corners);
    Tensor x(input_shape(p)), y(p.output_shape());
    for (double& v : x.data) v = u(rng);
    for (double& v : y.data) v = u(rng);
    const Tensor jx = interpolate_forward(p, x);
    const Tensor jty = interpolate_backward(p, x, y);
    ASSERT_EQ(jx.shape, y.shape);
    ASSERT_EQ(jty.shape, x.shape);
    double lhs = 0, rhs = 0, scale = 0;
    for (size_t e = 0; e < y.data.size(); ++e) {
      lhs += jx.data[e] * y.data[e];
      scale += std::abs(jx.data[e] * y.data[e]);
    }
    for (size_t e = 0; e < x.data.size(); ++e) rhs += x.data[e] * jty.data[e];
    EXPECT_NEAR(lhs, rhs, 1e-12 * std::max(1.0, scale))
        << interp_mode_name(c.mode) << " rank " << c.axes.size() << " align_corners " << c.align_corners;
    EXPECT_GT(scale, 0.0);  // a non-trivial product, not 0 == 0
  }
}

// The backward of a linear map is its transposed Jacobian; check it column by column against
// forward on unit vectors, so an error shared by the adjoint pair cannot hide.
TEST(RefInterpolate, BackwardEqualsJacobianTranspose) {
  const std::vector<AdjointCase> cases = {
      {InterpMode::Bicubic, {sized(3, 5), scaled(4, 1.3)}, false},
      {InterpMode::Area, {sized(5, 3), sized(2, 3)}, false},
      {InterpMode::Bilinear, {sized(3, 4), sized(2, 5)}, true},
      {InterpMode::NearestExact, {sized(4, 7)}, false},
  };
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> u(-1, 1);
  for (const auto& c : cases) {
    const auto p = params(c.mode, 1, 1, c.axes, c.align_corners);
    Tensor x(input_shape(p)), y(p.output_shape());
    for (double& v : y.data) v = u(rng);
    const Tensor jty = interpolate_backward(p, x, y);
    for (size_t e = 0; e < x.data.size(); ++e) {
      Tensor unit(x.shape);
      unit.data[e] = 1.0;
      const Tensor col = interpolate_forward(p, unit);  // column e of J
      double want = 0;
      for (size_t o = 0; o < y.data.size(); ++o) want += col.data[o] * y.data[o];
      EXPECT_NEAR(jty.data[e], want, 1e-14) << interp_mode_name(c.mode) << " element " << e;
    }
  }
}

}  // namespace
}  // namespace oplab
