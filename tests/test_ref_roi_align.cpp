// Hand-derived cases for the roi_align reference (SPEC §4), avg and max modes, and a
// finite-difference check of its backward pass.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "reference/reference.h"

namespace oplab {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// [1,1,4,4] ramp X[y][x] = 4y + x (0..15). Bilinear interpolation inside the image is exact
// on a ramp, so an in-image sample at (y, x) reads 4y + x.
Tensor ramp4(double sign = 1.0, double shift = 0.0) {
  Tensor t(Shape{1, 1, 4, 4});
  for (int64_t y = 0; y < 4; ++y)
    for (int64_t x = 0; x < 4; ++x) t.at(0, 0, y, x) = sign * (4.0 * double(y) + double(x)) + shift;
  return t;
}

Tensor rois_of(const std::vector<std::vector<double>>& rows) {
  Tensor t(Shape{int64_t(rows.size()), 5});
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t j = 0; j < 5; ++j) t.at(int64_t(r), int64_t(j)) = rows[r][j];
  return t;
}

RoiAlignParams params(const Tensor& in, const Tensor& rois, int64_t PH, int64_t PW, double s, int64_t sr,
                      bool aligned, PoolMode mode = PoolMode::Avg) {
  RoiAlignParams p;
  p.N = in.dim(0), p.C = in.dim(1), p.H = in.dim(2), p.W = in.dim(3), p.K = rois.dim(0);
  p.PH = PH, p.PW = PW;
  p.spatial_scale = s;
  p.sampling_ratio = sr;
  p.aligned = aligned;
  p.mode = mode;
  return p;
}

// 1x1 output of one roi on one plane.
double one(const Tensor& in, std::vector<double> roi, double s, int64_t sr, bool aligned,
           PoolMode mode = PoolMode::Avg) {
  const Tensor rois = rois_of({roi});
  return ref::roi_align_forward(params(in, rois, 1, 1, s, sr, aligned, mode), in, rois).data.at(0);
}

Tensor grad_one(const Tensor& in, std::vector<double> roi, int64_t sr, bool aligned, PoolMode mode, double g) {
  const Tensor rois = rois_of({roi});
  Tensor gout(Shape{1, 1, 1, 1}, g);
  return ref::roi_align_backward(params(in, rois, 1, 1, 1.0, sr, aligned, mode), in, rois, gout);
}

// Expects grad to be 0 everywhere except at the listed (y, x) -> value entries.
void expect_grad(const Tensor& grad, const std::vector<std::tuple<int64_t, int64_t, double>>& nonzero) {
  Tensor want(grad.shape);
  for (auto [y, x, v] : nonzero) want.at(0, 0, y, x) += v;
  ASSERT_EQ(grad.shape, want.shape);
  for (size_t i = 0; i < grad.data.size(); ++i) EXPECT_NEAR(grad.data[i], want.data[i], 1e-14) << "flat index " << i;
}

// ---------------------------------------------------------------- avg

TEST(RefRoiAlignAvg, LegacyBoxOnRamp) {
  // Box (0,0)-(2,2), s=1, not aligned: sx=sy=0, rw=rh=2, grid 2x2.
  // Samples y,x in {0.5, 1.5}: 2.5, 3.5, 6.5, 7.5 -> mean 5.0.
  EXPECT_DOUBLE_EQ(one(ramp4(), {0, 0, 0, 2, 2}, 1.0, 2, false), 5.0);
}

TEST(RefRoiAlignAvg, AlignedShiftsHalfPixel) {
  // Same box aligned: sx=sy=-0.5, rw=2, samples at {0, 1}: 0, 1, 4, 5 -> mean 2.5.
  EXPECT_DOUBLE_EQ(one(ramp4(), {0, 0, 0, 2, 2}, 1.0, 2, true), 2.5);
  // spatial_scale 0.5 on a box (0,0)-(4,4) is the same box in feature coordinates.
  EXPECT_DOUBLE_EQ(one(ramp4(), {0, 0, 0, 4, 4}, 0.5, 2, true), 2.5);
}

TEST(RefRoiAlignAvg, LegacyClampsSmallBoxToOnePixel) {
  // Box (1,1)-(1.2,1.2). Not aligned: rw = max(0.2,1) = 1, grid 2: samples 1.25, 1.75,
  // mean coordinate 1.5 on both axes -> 4*1.5 + 1.5 = 7.5.
  EXPECT_DOUBLE_EQ(one(ramp4(), {0, 1, 1, 1.2, 1.2}, 1.0, 2, false), 7.5);
  // Aligned: sx = 0.5, rw = 0.2 (no clamp), samples 0.55, 0.65, mean 0.6 -> 5*0.6 = 3.0.
  EXPECT_NEAR(one(ramp4(), {0, 1, 1, 1.2, 1.2}, 1.0, 2, true), 3.0, 1e-14);
}

TEST(RefRoiAlignAvg, AdaptiveGridOnDelta) {
  // A delta at (1,1): bilinear reads t(y)*t(x), t(c) = max(0, 1-|c-1|).
  Tensor d(Shape{1, 1, 4, 4});
  d.at(0, 0, 1, 1) = 1.0;
  // Box (0,0)-(3,3) not aligned, rw = 3.
  // Adaptive: grid ceil(3/1) = 3, samples 0.5, 1.5, 2.5, t = .5, .5, 0 -> (1.0)^2 / 9.
  EXPECT_DOUBLE_EQ(one(d, {0, 0, 0, 3, 3}, 1.0, 0, false), 1.0 / 9.0);
  EXPECT_DOUBLE_EQ(one(d, {0, 0, 0, 3, 3}, 1.0, -1, false), 1.0 / 9.0);
  // Fixed 1: one sample at 1.5, t = .5 -> 0.25.
  EXPECT_DOUBLE_EQ(one(d, {0, 0, 0, 3, 3}, 1.0, 1, false), 0.25);
  // Fixed 2: samples 0.75, 2.25, t = .75, 0 -> 0.5625 / 4 = 0.140625.
  EXPECT_DOUBLE_EQ(one(d, {0, 0, 0, 3, 3}, 1.0, 2, false), 0.140625);
}

TEST(RefRoiAlignAvg, ReversedAlignedBox) {
  // Box (3,3)-(1,1) aligned: sx = 2.5, ex = 0.5, rw = rh = -2.
  // Adaptive: grid ceil(-2) = -2 on both axes, count = max(4,1) = 4, but no sample is taken -> 0.
  EXPECT_EQ(one(ramp4(), {0, 3, 3, 1, 1}, 1.0, 0, true), 0.0);
  // Only one axis reversed: grid -2 x 2, no samples -> 0.
  EXPECT_EQ(one(ramp4(), {0, 1, 3, 3, 1}, 1.0, 0, true), 0.0);
  // Fixed grid 2: bin = -2, samples 2.5 + 0.5*(-2)/2 = 2.0 and 2.5 + 1.5*(-2)/2 = 1.0:
  // the mirrored box (1,1)-(3,3), samples {1,2}^2 -> mean coordinate 1.5 -> 7.5.
  EXPECT_DOUBLE_EQ(one(ramp4(), {0, 3, 3, 1, 1}, 1.0, 2, true), 7.5);
  EXPECT_DOUBLE_EQ(one(ramp4(), {0, 1, 1, 3, 3}, 1.0, 2, true), 7.5);
}

TEST(RefRoiAlignAvg, SampleAtMinusOneReadsRowZero) {
  // Box y from -1.5 to -0.5 (rh = 1), x from 1 to 2, grid 1: sample (y,x) = (-1, 1.5).
  // y = -1 exactly is in range, clamps to 0: row 0 at x = 1.5 -> 1.5.
  EXPECT_DOUBLE_EQ(one(ramp4(), {0, 1, -1.5, 2, -0.5}, 1.0, 1, false), 1.5);
  // y = -1 - 1e-9 is out of range -> 0.
  EXPECT_EQ(one(ramp4(), {0, 1, -1.5 - 1e-9, 2, -0.5 - 1e-9}, 1.0, 1, false), 0.0);
  // Same on x: x = -1 exactly, y = 1.5 -> column 0 at y = 1.5 -> 6.0.
  EXPECT_DOUBLE_EQ(one(ramp4(), {0, -1.5, 1, -0.5, 2}, 1.0, 1, false), 6.0);
  // y = -0.5 (inside the replicated band) also reads row 0.
  EXPECT_DOUBLE_EQ(one(ramp4(), {0, 1, -1, 2, 0}, 1.0, 1, false), 1.5);
}

TEST(RefRoiAlignAvg, SampleAtHReadsLastRow) {
  // Box y from 3.5 to 4.5, grid 1: sample y = 4 = H, clamped to row 3; x = 1.5 -> 12 + 1.5.
  EXPECT_DOUBLE_EQ(one(ramp4(), {0, 1, 3.5, 2, 4.5}, 1.0, 1, false), 13.5);
  // y = H + 1e-9 -> 0.
  EXPECT_EQ(one(ramp4(), {0, 1, 3.5 + 1e-9, 2, 4.5 + 1e-9}, 1.0, 1, false), 0.0);
}

TEST(RefRoiAlignAvg, ZeroWeightCornerStillPropagatesInf) {
  // Sample at (y,x) = (0, 1) exactly: box y -0.5..0.5, x 0.5..1.5, grid 1, not aligned.
  // Weights: (0,1) gets 1, (0,2), (1,1), (1,2) get 0; X[1][1] = inf gives 0*inf = NaN
  // (torchvision's CPU kernel multiplies every corner).
  Tensor in = ramp4();
  in.at(0, 0, 1, 1) = kInf;
  EXPECT_TRUE(std::isnan(one(in, {0, 0.5, -0.5, 1.5, 0.5}, 1.0, 1, false)));
  // Without the inf the same sample reads exactly X[0][1] = 1.
  EXPECT_DOUBLE_EQ(one(ramp4(), {0, 0.5, -0.5, 1.5, 0.5}, 1.0, 1, false), 1.0);
}

TEST(RefRoiAlignAvg, BackwardScattersOverCount) {
  // Box (0,0)-(2,2) not aligned, grid 2: samples at (0.5|1.5, 0.5|1.5), each spreads 1/4 to
  // its four corners. With g = 4, count = 4: grad[p] = sum of weights at p:
  // [.25 .5 .25; .5 1 .5; .25 .5 .25] over rows/cols 0..2.
  const Tensor g = grad_one(ramp4(), {0, 0, 0, 2, 2}, 2, false, PoolMode::Avg, 4.0);
  expect_grad(g, {{0, 0, .25}, {0, 1, .5}, {0, 2, .25}, {1, 0, .5}, {1, 1, 1.0}, {1, 2, .5},
                  {2, 0, .25}, {2, 1, .5}, {2, 2, .25}});
}

TEST(RefRoiAlignAvg, BackwardClampedCornersMerge) {
  // Box (3,3)-(4,4), grid 1: sample (3.5, 3.5) clamps to (3,3); y0=y1=3, x0=x1=3, all four
  // weights land on pixel (3,3). Value 15, gradient g = 2 all at (3,3).
  EXPECT_DOUBLE_EQ(one(ramp4(), {0, 3, 3, 4, 4}, 1.0, 1, false), 15.0);
  expect_grad(grad_one(ramp4(), {0, 3, 3, 4, 4}, 1, false, PoolMode::Avg, 2.0), {{3, 3, 2.0}});
  // Out-of-range sample (y = 4.5): no gradient at all.
  expect_grad(grad_one(ramp4(), {0, 3, 4, 4, 5}, 1, false, PoolMode::Avg, 2.0), {});
}

TEST(RefRoiAlignAvg, EmptyImageAndZeroRois) {
  // H = 0: every sample is out of range -> 0, in both modes; the gradient is empty.
  Tensor in(Shape{1, 2, 0, 4});
  const Tensor rois = rois_of({{0, 0, 0, 2, 2}});
  for (PoolMode m : {PoolMode::Avg, PoolMode::Max}) {
    const auto p = params(in, rois, 2, 2, 1.0, 2, false, m);
    const Tensor out = ref::roi_align_forward(p, in, rois);
    ASSERT_EQ(out.shape, (Shape{1, 2, 2, 2}));
    for (double v : out.data) EXPECT_EQ(v, 0.0);
    const Tensor g = ref::roi_align_backward(p, in, rois, Tensor(Shape{1, 2, 2, 2}, 1.0));
    EXPECT_EQ(g.shape, (Shape{1, 2, 0, 4}));
  }
  // K = 0: empty output, zero gradient of the right shape.
  const Tensor in2 = ramp4();
  const Tensor none(Shape{0, 5});
  const auto p = params(in2, none, 2, 3, 1.0, 2, true);
  EXPECT_EQ(ref::roi_align_forward(p, in2, none).shape, (Shape{0, 1, 2, 3}));
  const Tensor g = ref::roi_align_backward(p, in2, none, Tensor(Shape{0, 1, 2, 3}));
  ASSERT_EQ(g.shape, in2.shape);
  for (double v : g.data) EXPECT_EQ(v, 0.0);
  // N = 0 with K = 0.
  Tensor empty(Shape{0, 3, 4, 4});
  const auto p0 = params(empty, none, 2, 2, 1.0, 0, false, PoolMode::Max);
  EXPECT_EQ(ref::roi_align_forward(p0, empty, none).shape, (Shape{0, 3, 2, 2}));
  EXPECT_EQ(ref::roi_align_backward(p0, empty, none, Tensor(Shape{0, 3, 2, 2})).shape, (Shape{0, 3, 4, 4}));
}

TEST(RefRoiAlignAvg, BatchIndexAndChannelsAndBins) {
  // Two images, two channels: image 1 channel c is ramp + 100*(c+1). Roi on image 1, box
  // (0,0)-(4,4) not aligned, 2x2 bins of size 2, grid 1: bin (ph,pw) samples (2ph+1, 2pw+1).
  Tensor in(Shape{2, 2, 4, 4});
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t y = 0; y < 4; ++y)
      for (int64_t x = 0; x < 4; ++x) in.at(1, c, y, x) = 4.0 * double(y) + double(x) + 100.0 * double(c + 1);
  const Tensor rois = rois_of({{1, 0, 0, 4, 4}});
  const Tensor out = ref::roi_align_forward(params(in, rois, 2, 2, 1.0, 1, false), in, rois);
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t ph = 0; ph < 2; ++ph)
      for (int64_t pw = 0; pw < 2; ++pw)
        EXPECT_DOUBLE_EQ(out.at(0, c, ph, pw), 4.0 * double(2 * ph + 1) + double(2 * pw + 1) + 100.0 * double(c + 1));
}

// ---------------------------------------------------------------- max

TEST(RefRoiAlignMax, MaxOfSamplesOnRamp) {
  // Box (0,0)-(2,2) not aligned, grid 2: samples 2.5, 3.5, 6.5, 7.5 -> 7.5 at (1.5, 1.5).
  EXPECT_DOUBLE_EQ(one(ramp4(), {0, 0, 0, 2, 2}, 1.0, 2, false, PoolMode::Max), 7.5);
  // Backward: only the winner (1.5,1.5), weights 0.25 each, not divided by count; g = 2.
  expect_grad(grad_one(ramp4(), {0, 0, 0, 2, 2}, 2, false, PoolMode::Max, 2.0),
              {{1, 1, .5}, {1, 2, .5}, {2, 1, .5}, {2, 2, .5}});
}

TEST(RefRoiAlignMax, AdaptiveVersusFixedGrid) {
  // Box (0.2,0.2)-(3,3) not aligned, rw = 2.8.
  // Adaptive grid ceil(2.8) = 3: last sample 0.2 + 2.5*2.8/3 = 2.5333.. -> 5*2.5333.. = 12.666..
  EXPECT_NEAR(one(ramp4(), {0, 0.2, 0.2, 3, 3}, 1.0, 0, false, PoolMode::Max), 5.0 * (0.2 + 2.5 * 2.8 / 3.0), 1e-12);
  EXPECT_NEAR(one(ramp4(), {0, 0.2, 0.2, 3, 3}, 1.0, 0, false, PoolMode::Max), 38.0 / 3.0, 1e-12);
  // Grid 2: last sample 0.2 + 1.5*1.4 = 2.3 -> 11.5.
  EXPECT_NEAR(one(ramp4(), {0, 0.2, 0.2, 3, 3}, 1.0, 2, false, PoolMode::Max), 11.5, 1e-12);
  // The mean (avg) is the same for both grids on a ramp: centre 1.6 -> 8.0.
  EXPECT_NEAR(one(ramp4(), {0, 0.2, 0.2, 3, 3}, 1.0, 0, false), 8.0, 1e-12);
}

TEST(RefRoiAlignMax, MinusOneBorder) {
  // Negative image X = -(1 + 4y + x), so an out-of-range 0 would beat every in-image value.
  const Tensor neg = ramp4(-1.0, -1.0);
  // Sample (-1, 1.5): reads row 0 -> -2.5.
  EXPECT_DOUBLE_EQ(one(neg, {0, 1, -1.5, 2, -0.5}, 1.0, 1, false, PoolMode::Max), -2.5);
  // Sample (-1 - 1e-9, 1.5): out of range, takes part with value 0 -> 0.
  EXPECT_EQ(one(neg, {0, 1, -1.5 - 1e-9, 2, -0.5 - 1e-9}, 1.0, 1, false, PoolMode::Max), 0.0);
}

TEST(RefRoiAlignMax, OutOfRangeSampleTakesPartWithZero) {
  // Box x from -3 to 1 (rw 4), y from 0 to 2, grid 2: x samples -2 (out) and 0;
  // y samples 0.5, 1.5. Negative image: in-image samples are < 0, so the first out-of-range
  // sample (value 0) wins; it has no corners, so the gradient is 0 everywhere.
  const Tensor neg = ramp4(-1.0, -1.0);
  EXPECT_EQ(one(neg, {0, -3, 0, 1, 2}, 1.0, 2, false, PoolMode::Max), 0.0);
  expect_grad(grad_one(neg, {0, -3, 0, 1, 2}, 2, false, PoolMode::Max, 1.0), {});
  // On the positive ramp the in-image sample (1.5, 0) = 6 wins, weights 0.5/0.5 on rows 1,2
  // of column 0 (x0 = 0, lx = 0: the x1 = 1 corners get weight 0).
  EXPECT_DOUBLE_EQ(one(ramp4(), {0, -3, 0, 1, 2}, 1.0, 2, false, PoolMode::Max), 6.0);
  expect_grad(grad_one(ramp4(), {0, -3, 0, 1, 2}, 2, false, PoolMode::Max, 1.0), {{1, 0, .5}, {2, 0, .5}});
}

TEST(RefRoiAlignMax, BinWithoutSamplesIsZero) {
  // Reversed aligned box with adaptive grid: no samples -> 0 (mmcv: -10000 / -FLT_MAX).
  const Tensor neg = ramp4(-1.0, -1.0);
  EXPECT_EQ(one(neg, {0, 3, 3, 1, 1}, 1.0, 0, true, PoolMode::Max), 0.0);
  expect_grad(grad_one(neg, {0, 3, 3, 1, 1}, 0, true, PoolMode::Max, 1.0), {});
  // With a fixed grid the mirrored samples {1,2}^2 give max -(1 + 4*1 + 1) = -6 at (1,1).
  EXPECT_DOUBLE_EQ(one(neg, {0, 3, 3, 1, 1}, 1.0, 2, true, PoolMode::Max), -6.0);
}

TEST(RefRoiAlignMax, NaNNeverWins) {
  // NaN at (2,2): of the samples of box (0,0)-(2,2) grid 2, only (1.5,1.5) touches it.
  // Remaining: (0.5,0.5)=2.5, (0.5,1.5)=3.5, (1.5,0.5)=6.5 -> 6.5, winner (1.5,0.5),
  // corners (1,0),(1,1),(2,0),(2,1) weight 0.25 each.
  Tensor in = ramp4();
  in.at(0, 0, 2, 2) = kNaN;
  EXPECT_DOUBLE_EQ(one(in, {0, 0, 0, 2, 2}, 1.0, 2, false, PoolMode::Max), 6.5);
  expect_grad(grad_one(in, {0, 0, 0, 2, 2}, 2, false, PoolMode::Max, 4.0),
              {{1, 0, 1.0}, {1, 1, 1.0}, {2, 0, 1.0}, {2, 1, 1.0}});
  // NaN in the first sample too: it is skipped, not taken as the starting maximum.
  in.at(0, 0, 0, 0) = kNaN;
  EXPECT_DOUBLE_EQ(one(in, {0, 0, 0, 2, 2}, 1.0, 2, false, PoolMode::Max), 6.5);
  // All NaN: the bin is NaN and no pixel gets gradient.
  Tensor all(Shape{1, 1, 4, 4}, kNaN);
  EXPECT_TRUE(std::isnan(one(all, {0, 0, 0, 2, 2}, 1.0, 2, false, PoolMode::Max)));
  expect_grad(grad_one(all, {0, 0, 0, 2, 2}, 2, false, PoolMode::Max, 1.0), {});
}

TEST(RefRoiAlignMax, MinusInfinityCanWin) {
  // Every sample -inf (-inf * 0.25 * 4 corners): -inf is a value, not NaN, so it wins.
  Tensor in(Shape{1, 1, 4, 4}, -kInf);
  EXPECT_EQ(one(in, {0, 0, 0, 2, 2}, 1.0, 2, false, PoolMode::Max), -kInf);
}

TEST(RefRoiAlignMax, TiesGoToFirstSample) {
  // Constant image: all four samples equal, the first (0.5,0.5) wins (strict >).
  Tensor in(Shape{1, 1, 4, 4}, 3.0);
  EXPECT_DOUBLE_EQ(one(in, {0, 0, 0, 2, 2}, 1.0, 2, false, PoolMode::Max), 3.0);
  expect_grad(grad_one(in, {0, 0, 0, 2, 2}, 2, false, PoolMode::Max, 1.0),
              {{0, 0, .25}, {0, 1, .25}, {1, 0, .25}, {1, 1, .25}});
}

TEST(RefRoiAlignMax, ClampedWinnerMergesCorners) {
  // Box (2,2)-(4,4), grid 2: samples {2.5, 3.5}^2; max at (3.5,3.5) -> clamped to (3,3) = 15.
  // All four weights of the winner land on (3,3): g = 3.
  EXPECT_DOUBLE_EQ(one(ramp4(), {0, 2, 2, 4, 4}, 1.0, 2, false, PoolMode::Max), 15.0);
  expect_grad(grad_one(ramp4(), {0, 2, 2, 4, 4}, 2, false, PoolMode::Max, 3.0), {{3, 3, 3.0}});
}

// ---------------------------------------------------------------- finite differences

double dot(const Tensor& a, const Tensor& b) {
  double s = 0;
  for (size_t i = 0; i < a.data.size(); ++i) s += a.data[i] * b.data[i];
  return s;
}

// Distance of the nearest sample coordinate to an integer (the kinks of the bilinear rule,
// including the borders -1, 0, H-1, H). Written from SPEC §4 independently of the reference.
double kink_distance(const RoiAlignParams& p, const Tensor& rois) {
  double best = 1e9;
  auto dist = [](double c) { return std::fabs(c - std::round(c)); };
  for (int64_t r = 0; r < p.K; ++r) {
    const double off = p.aligned ? 0.5 : 0.0, s = p.spatial_scale;
    const double sx = rois.at(r, 1) * s - off, sy = rois.at(r, 2) * s - off;
    double rw = rois.at(r, 3) * s - off - sx, rh = rois.at(r, 4) * s - off - sy;
    if (!p.aligned) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    const int64_t gh = p.sampling_ratio > 0 ? p.sampling_ratio : int64_t(std::ceil(rh / double(p.PH)));
    const int64_t gw = p.sampling_ratio > 0 ? p.sampling_ratio : int64_t(std::ceil(rw / double(p.PW)));
    for (int64_t ph = 0; ph < p.PH; ++ph)
      for (int64_t i = 0; i < gh; ++i) best = std::min(best, dist(sy + (double(ph) + (double(i) + 0.5) / double(gh)) * rh / double(p.PH)));
    for (int64_t pw = 0; pw < p.PW; ++pw)
      for (int64_t i = 0; i < gw; ++i) best = std::min(best, dist(sx + (double(pw) + (double(i) + 0.5) / double(gw)) * rw / double(p.PW)));
  }
  return best;
}

void fd_check(PoolMode mode, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int checked = 0;
  for (int trial = 0; trial < 200 && checked < 6; ++trial) {
    const int64_t N = 2, C = 2, H = 5, W = 6, K = 3;
    const bool aligned = trial % 2 == 0;
    const int64_t sr = trial % 3;  // 0 adaptive, 1, 2
    const double s = trial % 4 < 2 ? 1.0 : 0.5;
    Tensor in(Shape{N, C, H, W});
    for (double& v : in.data) v = u(rng);  // distinct with probability 1: max winners are unique
    Tensor rois(Shape{K, 5});
    for (int64_t r = 0; r < K; ++r) {
      // Feature-space boxes that reach a little beyond the image on each side.
      const double x1 = -1.4 + 3.5 * (u(rng) + 1.0), y1 = -1.4 + 2.5 * (u(rng) + 1.0);
      const double x2 = x1 + 0.3 + 2.5 * (u(rng) + 1.0), y2 = y1 + 0.3 + 2.0 * (u(rng) + 1.0);
      rois.at(r, 0) = double(r % N);
      rois.at(r, 1) = x1 / s, rois.at(r, 2) = y1 / s, rois.at(r, 3) = x2 / s, rois.at(r, 4) = y2 / s;
    }
    const auto p = params(in, rois, 2, 3, s, sr, aligned, mode);
    if (kink_distance(p, rois) < 1e-3) continue;
    Tensor gout(p.output_shape());
    for (double& v : gout.data) v = u(rng);
    const Tensor analytic = ref::roi_align_backward(p, in, rois, gout);
    const double h = 1e-6;
    double nonzero = 0;
    for (size_t i = 0; i < in.data.size(); ++i) {
      Tensor xp = in, xm = in;
      xp.data[i] += h;
      xm.data[i] -= h;
      const double fd = (dot(gout, ref::roi_align_forward(p, xp, rois)) - dot(gout, ref::roi_align_forward(p, xm, rois))) / (2 * h);
      EXPECT_NEAR(fd, analytic.data[i], 1e-7) << "trial " << trial << " element " << i;
      nonzero += std::fabs(analytic.data[i]);
    }
    EXPECT_GT(nonzero, 0.0) << "trial " << trial << " checks nothing";
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

TEST(RefRoiAlignGrad, FiniteDifferenceAvg) { fd_check(PoolMode::Avg, 1234); }
TEST(RefRoiAlignGrad, FiniteDifferenceMax) { fd_check(PoolMode::Max, 5678); }

}  // namespace
}  // namespace oplab
