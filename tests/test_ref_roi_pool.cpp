// Hand-derived cases for the roi_pool reference (SPEC §3) and a finite-difference check of
// its backward pass.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "reference/reference.h"

namespace oplab {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// [1,1,n,n] image X[y][x] = sign*(n*y + x) + shift.
Tensor ramp(int64_t n, double sign = 1.0, double shift = 0.0) {
  Tensor t(Shape{1, 1, n, n});
  for (int64_t y = 0; y < n; ++y)
    for (int64_t x = 0; x < n; ++x) t.at(0, 0, y, x) = sign * double(n * y + x) + shift;
  return t;
}

Tensor rois_of(const std::vector<std::vector<double>>& rows) {
  Tensor t(Shape{int64_t(rows.size()), 5});
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t j = 0; j < 5; ++j) t.at(int64_t(r), int64_t(j)) = rows[r][j];
  return t;
}

RoiPoolParams params(const Tensor& in, const Tensor& rois, int64_t PH, int64_t PW, double s) {
  RoiPoolParams p;
  p.N = in.dim(0), p.C = in.dim(1), p.H = in.dim(2), p.W = in.dim(3), p.K = rois.dim(0);
  p.PH = PH, p.PW = PW;
  p.spatial_scale = s;
  return p;
}

void expect_plane(const Tensor& got, int64_t r, const std::vector<std::vector<double>>& want) {
  for (size_t y = 0; y < want.size(); ++y)
    for (size_t x = 0; x < want[y].size(); ++x) {
      const double g = got.at(r, 0, int64_t(y), int64_t(x)), w = want[y][x];
      if (std::isnan(w)) EXPECT_TRUE(std::isnan(g)) << "at " << y << "," << x;
      else EXPECT_EQ(g, w) << "at " << y << "," << x;
    }
}

TEST(RefRoiPool, QuantisationOf665Over32) {
  // The seed's example: a 665x665 proposal on a stride-32 feature map, 7x7 output.
  // x2*s = 665/32 = 20.78125 -> C round 21 (truncation would give 20); xs = 0.
  // rw = 21 - 0 + 1 = 22, bin = 22/7 = 3.142857...
  // he(p) = ceil((p+1)*22/7) = 4, 7, 10, 13, 16, 19, 22 (7*(22/7) is exactly 22.0 in double),
  // hs(p) = floor(p*22/7) = 0, 3, 6, 9, 12, 15, 18 (bins overlap by one row).
  // On the ramp X = 24y + x the max of a bin is at its last row/column (he-1, we-1).
  const Tensor in = ramp(24);
  const Tensor rois = rois_of({{0, 0, 0, 665, 665}});
  const Tensor out = ref::roi_pool_forward(params(in, rois, 7, 7, 1.0 / 32.0), in, rois);
  const int64_t last[7] = {3, 6, 9, 12, 15, 18, 21};
  for (int64_t ph = 0; ph < 7; ++ph)
    for (int64_t pw = 0; pw < 7; ++pw)
      EXPECT_EQ(out.at(0, 0, ph, pw), double(24 * last[ph] + last[pw])) << ph << "," << pw;
}

TEST(RefRoiPool, QuantisedStartAndClampedBin) {
  // x1*s = 665/32 = 20.78125 -> 21, x2*s = 767/32 = 23.96875 -> 24; rw = 4, 2x2 bins of 2:
  // bin 0 = [21, 23), bin 1 = [23, 25) clamped to [23, 24). Max at the last row/col of each.
  const Tensor in = ramp(24);
  const Tensor rois = rois_of({{0, 665, 665, 767, 767}});
  const Tensor out = ref::roi_pool_forward(params(in, rois, 2, 2, 1.0 / 32.0), in, rois);
  expect_plane(out, 0, {{24 * 22 + 22, 24 * 22 + 23}, {24 * 23 + 22, 24 * 23 + 23}});
}

TEST(RefRoiPool, RoundHalfAwayFromZero) {
  // Descending image X = -(6y + x) - 1: the max of a bin is its first (top-left) pixel.
  const Tensor in = ramp(6, -1.0, -1.0);
  // s = 0.5, box (5,5)-(7,7): 2.5 -> 3, 3.5 -> 4; rw = 2, one bin [3,5): max X[3][3] = -22.
  // (Python's banker's round gives 2 -> X[2][2] = -15.)
  {
    const Tensor rois = rois_of({{0, 5, 5, 7, 7}});
    const Tensor out = ref::roi_pool_forward(params(in, rois, 1, 1, 0.5), in, rois);
    EXPECT_EQ(out.data.at(0), -22.0);
  }
  // Box (-5,-5)-(3,3): -2.5 -> -3 (away from zero), 1.5 -> 2; rw = 6, 2x2 bins of 3.
  // Bin 0: [-3, 0) clamped to [0, 0): empty -> 0. Bin 1: [0, 3) -> max X[0][0] = -1 at (1,1).
  // (Rounding -2.5 up to -2 would make bin 0 = [0,1) and bin 1 = [1,4), so (1,1) = X[1][1] = -8.)
  {
    const Tensor rois = rois_of({{0, -5, -5, 3, 3}});
    const Tensor out = ref::roi_pool_forward(params(in, rois, 2, 2, 0.5), in, rois);
    expect_plane(out, 0, {{0, 0}, {0, -1}});
  }
}

TEST(RefRoiPool, EmptyBinsAreZeroWithoutGradient) {
  // Negative image X = -(1 + 4y + x). Box (2,2)-(5,5), s = 1: rw = 4, 2x2 bins of 2:
  // bin 0 = [2,4), bin 1 = [4,6) clamped to [4,4): empty. Bin (0,0) max = X[2][2] = -11.
  const Tensor in = ramp(4, -1.0, -1.0);
  const Tensor rois = rois_of({{0, 2, 2, 5, 5}, {0, 10, 10, 12, 12}});
  const auto p = params(in, rois, 2, 2, 1.0);
  const Tensor out = ref::roi_pool_forward(p, in, rois);
  expect_plane(out, 0, {{-11, 0}, {0, 0}});
  // The second box lies wholly outside: every bin empty.
  expect_plane(out, 1, {{0, 0}, {0, 0}});
  // Backward: only bin (0,0) of roi 0 has an argmax, X[2][2].
  Tensor gout(p.output_shape());
  for (size_t i = 0; i < gout.data.size(); ++i) gout.data[i] = double(i + 1);
  const Tensor g = ref::roi_pool_backward(p, in, rois, gout);
  for (int64_t y = 0; y < 4; ++y)
    for (int64_t x = 0; x < 4; ++x) EXPECT_EQ(g.at(0, 0, y, x), (y == 2 && x == 2) ? 1.0 : 0.0);
}

TEST(RefRoiPool, OverlappingBinsAccumulateGradient) {
  // Box (0,0)-(2,2), s = 1: rw = 3, 2x2 bins of 1.5: rows [0,2) and [1,3), same for columns.
  // All four bins contain (1,1), which holds the largest value 10: every bin outputs 10 and
  // (1,1) receives the sum of the four gradients 1+2+3+4 = 10; the same box again as a
  // second roi adds 5+6+7+8 = 26 -> 36.
  Tensor in(Shape{1, 1, 4, 4});
  for (size_t i = 0; i < in.data.size(); ++i) in.data[i] = 0.01 * double(i);
  in.at(0, 0, 1, 1) = 10.0;
  const Tensor rois = rois_of({{0, 0, 0, 2, 2}, {0, 0, 0, 2, 2}});
  const auto p = params(in, rois, 2, 2, 1.0);
  const Tensor out = ref::roi_pool_forward(p, in, rois);
  for (double v : out.data) EXPECT_EQ(v, 10.0);
  Tensor gout(p.output_shape());
  for (size_t i = 0; i < gout.data.size(); ++i) gout.data[i] = double(i + 1);
  const Tensor g = ref::roi_pool_backward(p, in, rois, gout);
  for (int64_t y = 0; y < 4; ++y)
    for (int64_t x = 0; x < 4; ++x) EXPECT_EQ(g.at(0, 0, y, x), (y == 1 && x == 1) ? 36.0 : 0.0);
}

TEST(RefRoiPool, NaNInfAndTies) {
  // One bin over the whole 2x2 image: box (0,0)-(1,1), rw = 2, PH = PW = 1.
  const Tensor rois = rois_of({{0, 0, 0, 1, 1}});
  auto run = [&](std::vector<double> v, double& out, Tensor& grad) {
    Tensor in(Shape{1, 1, 2, 2});
    in.data = v;
    const auto p = params(in, rois, 1, 1, 1.0);
    out = ref::roi_pool_forward(p, in, rois).data.at(0);
    grad = ref::roi_pool_backward(p, in, rois, Tensor(Shape{1, 1, 1, 1}, 1.0));
  };
  double out;
  Tensor g;
  // NaN first is skipped, not the starting maximum: max 3 at index 2.
  run({kNaN, 1, 3, 2}, out, g);
  EXPECT_EQ(out, 3.0);
  EXPECT_EQ(g.data, (std::vector<double>{0, 0, 1, 0}));
  // A later NaN does not displace the maximum.
  run({1, 5, kNaN, 2}, out, g);
  EXPECT_EQ(out, 5.0);
  EXPECT_EQ(g.data, (std::vector<double>{0, 1, 0, 0}));
  // All NaN: NaN, no argmax (torchvision: -FLT_MAX).
  run({kNaN, kNaN, kNaN, kNaN}, out, g);
  EXPECT_TRUE(std::isnan(out));
  EXPECT_EQ(g.data, (std::vector<double>{0, 0, 0, 0}));
  // All -inf: -inf, argmax the first pixel (torchvision: -FLT_MAX, no argmax).
  run({-kInf, -kInf, -kInf, -kInf}, out, g);
  EXPECT_EQ(out, -kInf);
  EXPECT_EQ(g.data, (std::vector<double>{1, 0, 0, 0}));
  // Ties: the first maximum in row-major order wins.
  run({1, 7, 7, 7}, out, g);
  EXPECT_EQ(out, 7.0);
  EXPECT_EQ(g.data, (std::vector<double>{0, 1, 0, 0}));
  // +inf wins over everything.
  run({1, kInf, 7, kNaN}, out, g);
  EXPECT_EQ(out, kInf);
  EXPECT_EQ(g.data, (std::vector<double>{0, 1, 0, 0}));
}

TEST(RefRoiPool, ZeroElementCases) {
  // K = 0: output [0, C, PH, PW], gradient zeros of the input's shape.
  const Tensor in = ramp(4);
  const Tensor none(Shape{0, 5});
  const auto p = params(in, none, 2, 3, 1.0);
  EXPECT_EQ(ref::roi_pool_forward(p, in, none).shape, (Shape{0, 1, 2, 3}));
  const Tensor g = ref::roi_pool_backward(p, in, none, Tensor(Shape{0, 1, 2, 3}));
  ASSERT_EQ(g.shape, in.shape);
  for (double v : g.data) EXPECT_EQ(v, 0.0);
  // H = 0: every bin is clamped to [0,0): empty -> 0.
  Tensor flat(Shape{1, 2, 0, 3});
  const Tensor rois = rois_of({{0, 0, 0, 2, 2}});
  const auto pf = params(flat, rois, 2, 2, 1.0);
  const Tensor out = ref::roi_pool_forward(pf, flat, rois);
  ASSERT_EQ(out.shape, (Shape{1, 2, 2, 2}));
  for (double v : out.data) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(ref::roi_pool_backward(pf, flat, rois, Tensor(Shape{1, 2, 2, 2}, 1.0)).shape, flat.shape);
}

TEST(RefRoiPool, BatchAndChannels) {
  // Roi on image 1; channel c of image 1 is the ramp plus 100c; image 0 is all 1000 (must
  // not be read). Box (1,1)-(2,2): rw = 2, one bin [1,3) -> max X[2][2] = 10 + 100c.
  Tensor in(Shape{2, 2, 4, 4}, 1000.0);
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t y = 0; y < 4; ++y)
      for (int64_t x = 0; x < 4; ++x) in.at(1, c, y, x) = double(4 * y + x + 100 * c);
  const Tensor rois = rois_of({{1, 1, 1, 2, 2}});
  const auto p = params(in, rois, 1, 1, 1.0);
  const Tensor out = ref::roi_pool_forward(p, in, rois);
  EXPECT_EQ(out.at(0, 0, 0, 0), 10.0);
  EXPECT_EQ(out.at(0, 1, 0, 0), 110.0);
  Tensor gout(Shape{1, 2, 1, 1});
  gout.data = {2.0, 3.0};
  const Tensor g = ref::roi_pool_backward(p, in, rois, gout);
  EXPECT_EQ(g.at(1, 0, 2, 2), 2.0);
  EXPECT_EQ(g.at(1, 1, 2, 2), 3.0);
  double total = 0;
  for (double v : g.data) total += v;
  EXPECT_EQ(total, 5.0);
}

double dot(const Tensor& a, const Tensor& b) {
  double s = 0;
  for (size_t i = 0; i < a.data.size(); ++i) s += a.data[i] * b.data[i];
  return s;
}

TEST(RefRoiPool, FiniteDifferenceInputGrad) {
  // Random distinct values (gaps far above h), random boxes partly outside the image:
  // the argmax does not move under +-h, so the central difference is the exact gradient.
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 4; ++trial) {
    Tensor in(Shape{2, 2, 5, 6});
    for (double& v : in.data) v = u(rng);
    const double s = trial % 2 ? 0.5 : 1.0;
    Tensor rois(Shape{4, 5});
    for (int64_t r = 0; r < 4; ++r) {
      const double x1 = -1.0 + 3.5 * (u(rng) + 1.0), y1 = -1.0 + 3.0 * (u(rng) + 1.0);
      rois.at(r, 0) = double(r % 2);
      rois.at(r, 1) = x1 / s, rois.at(r, 2) = y1 / s;
      rois.at(r, 3) = (x1 + 3.0 * (u(rng) + 1.0)) / s, rois.at(r, 4) = (y1 + 2.5 * (u(rng) + 1.0)) / s;
    }
    const auto p = params(in, rois, 3, 2, s);
    Tensor gout(p.output_shape());
    for (double& v : gout.data) v = u(rng);
    const Tensor analytic = ref::roi_pool_backward(p, in, rois, gout);
    const double h = 1e-6;
    double nonzero = 0;
    for (size_t i = 0; i < in.data.size(); ++i) {
      Tensor xp = in, xm = in;
      xp.data[i] += h;
      xm.data[i] -= h;
      const double fd = (dot(gout, ref::roi_pool_forward(p, xp, rois)) - dot(gout, ref::roi_pool_forward(p, xm, rois))) / (2 * h);
      EXPECT_NEAR(fd, analytic.data[i], 1e-8) << "trial " << trial << " element " << i;
      nonzero += std::fabs(analytic.data[i]);
    }
    EXPECT_GT(nonzero, 0.0);
  }
}

}  // namespace
}  // namespace oplab
