// Hand-derived cases for the deform_roi_pool reference (SPEC §5) and finite-difference
// checks of both gradients (input and offset).
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

// [1,1,4,4] ramp X[y][x] = 4y + x. Inside the image bilinear reads 4y + x exactly; y is
// weighted 4 and x 1, so swapping the two offset channels changes every answer below.
Tensor ramp4() {
  Tensor t(Shape{1, 1, 4, 4});
  for (int64_t y = 0; y < 4; ++y)
    for (int64_t x = 0; x < 4; ++x) t.at(0, 0, y, x) = 4.0 * double(y) + double(x);
  return t;
}

Tensor rois_of(const std::vector<std::vector<double>>& rows) {
  Tensor t(Shape{int64_t(rows.size()), 5});
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t j = 0; j < 5; ++j) t.at(int64_t(r), int64_t(j)) = rows[r][j];
  return t;
}

DeformRoiPoolParams params(const Tensor& in, const Tensor& rois, int64_t PH, int64_t PW, double s, int64_t sr,
                           double gamma, bool has_offset) {
  DeformRoiPoolParams p;
  p.N = in.dim(0), p.C = in.dim(1), p.H = in.dim(2), p.W = in.dim(3), p.K = rois.dim(0);
  p.PH = PH, p.PW = PW;
  p.spatial_scale = s;
  p.sampling_ratio = sr;
  p.gamma = gamma;
  p.has_offset = has_offset;
  return p;
}

// The standard box of these tests: (1,1)-(3,3), s = 1, 1x1 output. Always aligned:
// sx = sy = 0.5, rw = rh = 2, grid 2 (fixed or adaptive ceil(2/1)), samples at 1.0 and 2.0
// on both axes before any offset. count = 4.
const std::vector<double> kBox = {0, 1, 1, 3, 3};

// Offset [1,2,1,1] = (dx channel 0, dy channel 1).
Tensor offset1(double dx, double dy) {
  Tensor o(Shape{1, 2, 1, 1});
  o.data = {dx, dy};
  return o;
}

double fwd1(const Tensor& in, std::vector<double> roi, int64_t sr, double gamma, const Tensor* off) {
  const Tensor rois = rois_of({roi});
  return ref::deform_roi_pool_forward(params(in, rois, 1, 1, 1.0, sr, gamma, off != nullptr), in, rois, off).data.at(0);
}

ref::DeformRoiPoolGrads bwd1(const Tensor& in, std::vector<double> roi, int64_t sr, double gamma, const Tensor* off,
                             double g) {
  const Tensor rois = rois_of({roi});
  return ref::deform_roi_pool_backward(params(in, rois, 1, 1, 1.0, sr, gamma, off != nullptr), in, rois, off,
                                       Tensor(Shape{1, 1, 1, 1}, g));
}

TEST(RefDeformRoiPool, NoOffsetIsAlignedAverage) {
  // Samples {1,2}^2: 5, 6, 9, 10 -> 7.5. Zero offset, or no offset, changes nothing.
  EXPECT_DOUBLE_EQ(fwd1(ramp4(), kBox, 2, 0.1, nullptr), 7.5);
  EXPECT_DOUBLE_EQ(fwd1(ramp4(), kBox, 0, 0.1, nullptr), 7.5);
  const Tensor zero = offset1(0, 0);
  EXPECT_DOUBLE_EQ(fwd1(ramp4(), kBox, 2, 0.1, &zero), 7.5);
}

TEST(RefDeformRoiPool, NoMinimumBoxSize) {
  // Box (1,1)-(1,1): sx = 0.5, rw = 0 (no clamp to 1, unlike legacy roi_align).
  // Adaptive grid ceil(0) = 0: no samples -> 0.
  EXPECT_EQ(fwd1(ramp4(), {0, 1, 1, 1, 1}, 0, 0.1, nullptr), 0.0);
  // Fixed grid 2: every sample sits at (0.5, 0.5) -> 2.5.
  EXPECT_DOUBLE_EQ(fwd1(ramp4(), {0, 1, 1, 1, 1}, 2, 0.1, nullptr), 2.5);
  // Offsets scale with the box size, so a zero-size box cannot move: still 2.5.
  const Tensor off = offset1(1.0, 1.0);
  EXPECT_DOUBLE_EQ(fwd1(ramp4(), {0, 1, 1, 1, 1}, 2, 1.0, &off), 2.5);
}

TEST(RefDeformRoiPool, OffsetChannelZeroIsX) {
  // Channel 0 = x: dx = 0.5, gamma 0.1 -> shift 0.1 * rw * 0.5 = 0.1 in x:
  // x samples 1.1, 2.1 -> 4*1.5 + 1.6 = 7.6 (swapped channels would give 7.9).
  const Tensor ox = offset1(0.5, 0.0);
  EXPECT_NEAR(fwd1(ramp4(), kBox, 2, 0.1, &ox), 7.6, 1e-14);
  // Channel 1 = y: dy = 0.5 -> shift 0.1 in y: 4*1.6 + 1.5 = 7.9 (swapped: 7.6).
  const Tensor oy = offset1(0.0, 0.5);
  EXPECT_NEAR(fwd1(ramp4(), kBox, 2, 0.1, &oy), 7.9, 1e-14);
}

TEST(RefDeformRoiPool, GammaScalesTheShift) {
  const Tensor off = offset1(0.25, -0.25);
  // gamma 1: x += 1*2*0.25 = 0.5, y -= 0.5: mean y 1.0, mean x 2.0 -> 6.0.
  EXPECT_NEAR(fwd1(ramp4(), kBox, 2, 1.0, &off), 6.0, 1e-14);
  // gamma 0.5: x += 0.25, y -= 0.25: 4*1.25 + 1.75 = 6.75.
  EXPECT_NEAR(fwd1(ramp4(), kBox, 2, 0.5, &off), 6.75, 1e-14);
  // gamma 0: no shift.
  EXPECT_DOUBLE_EQ(fwd1(ramp4(), kBox, 2, 0.0, &off), 7.5);
}

TEST(RefDeformRoiPool, ShiftIntoReplicatedTopBand) {
  // gamma 1, dy = -0.75: y shift -1.5, y samples -0.5 and 0.5; x samples 1, 2.
  // y = -0.5 is in [-1,0): clamps to row 0. Values (0,1)=1, (0,2)=2, (0.5,1)=3, (0.5,2)=4
  // -> mean 2.5.
  const Tensor off = offset1(0.0, -0.75);
  EXPECT_DOUBLE_EQ(fwd1(ramp4(), kBox, 2, 1.0, &off), 2.5);
  // grad_offset (g = 1): d/dy is 0 on the flat band, 4 at y = 0.5 (two samples):
  // mean 8/4 = 2, times gamma*rh = 2 -> 4. d/dx = 1 at every sample: mean 1, times 2 -> 2.
  // (mmcv's CUDA formula gives d/dy = 4 on the band as well: 8 here.)
  const auto g = bwd1(ramp4(), kBox, 2, 1.0, &off, 1.0);
  ASSERT_EQ(g.offset.shape, (Shape{1, 2, 1, 1}));
  EXPECT_DOUBLE_EQ(g.offset.data[0], 2.0);
  EXPECT_DOUBLE_EQ(g.offset.data[1], 4.0);
  // grad_input (count 4, g/4 per sample): (-0.5,1) -> clamped y = 0, ly = 0, x = 1, lx = 0:
  // all of 0.25 on (0,1); (-0.5,2) -> 0.25 on (0,2); (0.5,1) -> 0.125 on (0,1) and (1,1);
  // (0.5,2) -> 0.125 on (0,2) and (1,2).
  Tensor want(Shape{1, 1, 4, 4});
  want.at(0, 0, 0, 1) = 0.375, want.at(0, 0, 0, 2) = 0.375, want.at(0, 0, 1, 1) = 0.125, want.at(0, 0, 1, 2) = 0.125;
  for (size_t i = 0; i < want.data.size(); ++i) EXPECT_DOUBLE_EQ(g.input.data[i], want.data[i]) << i;
}

TEST(RefDeformRoiPool, ShiftIntoReplicatedBottomBandAndBeyond) {
  // gamma 1, dy = 0.75: y samples 2.5 and 3.5 (3.5 in [H-1, H]: row 3).
  // Values: y part (2.5 + 3)/2 = 2.75 -> 11 + 1.5 = 12.5.
  const Tensor off = offset1(0.0, 0.75);
  EXPECT_DOUBLE_EQ(fwd1(ramp4(), kBox, 2, 1.0, &off), 12.5);
  // d/dy: 4 at y = 2.5 (two samples), 0 at 3.5 -> 8/4 * 2 = 4.
  EXPECT_DOUBLE_EQ(bwd1(ramp4(), kBox, 2, 1.0, &off, 1.0).offset.data[1], 4.0);
  // dy = 1.25: y samples 3.5 (row 3) and 4.5 (> H: out, 0).
  // Sum (12+1) + (12+2) + 0 + 0 = 27 -> 6.75. d/dy is 0 everywhere (flat or out);
  // d/dx is 1 on the two in-range samples -> 2/4 * 2 = 1.
  const Tensor off2 = offset1(0.0, 1.25);
  EXPECT_DOUBLE_EQ(fwd1(ramp4(), kBox, 2, 1.0, &off2), 6.75);
  const auto g2 = bwd1(ramp4(), kBox, 2, 1.0, &off2, 1.0);
  EXPECT_EQ(g2.offset.data[1], 0.0);
  EXPECT_DOUBLE_EQ(g2.offset.data[0], 1.0);
}

TEST(RefDeformRoiPool, KinksTakeTheRightSidedDerivative) {
  // gamma 1, rh = 2: dy shifts y by 2*dy. Interior slope of the ramp in y is 4.
  struct Row {
    double dy, value, grad_y;
  };
  const Row rows[] = {
      // y samples 0, 1: at y = 0 exactly the right side is the interior: 4+4 per column
      // -> 16/4 * 2 = 8. Value: y part 0.5 -> 2 + 1.5 = 3.5.
      {-0.5, 3.5, 8.0},
      // y samples 2, 3: at y = H-1 = 3 exactly the right side is flat: 8/4 * 2 = 4.
      // Value: y part 2.5 -> 10 + 1.5 = 11.5.
      {0.5, 11.5, 4.0},
      // y samples -1, 0: -1 exactly is in range, right side flat; 0 -> slope 4: 8/4*2 = 4.
      // Value: both read row 0 -> 1.5.
      {-1.0, 1.5, 4.0},
      // y samples 3, 4: both flat (4 = H is in range, beyond it is 0): 0. Value 13.5.
      {1.0, 13.5, 0.0},
  };
  for (const Row& r : rows) {
    const Tensor off = offset1(0.0, r.dy);
    EXPECT_DOUBLE_EQ(fwd1(ramp4(), kBox, 2, 1.0, &off), r.value) << "dy " << r.dy;
    const auto g = bwd1(ramp4(), kBox, 2, 1.0, &off, 1.0);
    EXPECT_DOUBLE_EQ(g.offset.data[1], r.grad_y) << "dy " << r.dy;
    // d/dx is the x slope 1 at every in-range sample: 4/4 * gamma*rw = 2.
    EXPECT_DOUBLE_EQ(g.offset.data[0], 2.0) << "dy " << r.dy;
  }
  // Same in x: dx = 0.5 puts x samples at 2 and 3 = W-1: slope 1 at 2 only -> 2/4 * 2 = 1.
  const Tensor ox = offset1(0.5, 0.0);
  const auto g = bwd1(ramp4(), kBox, 2, 1.0, &ox, 1.0);
  EXPECT_DOUBLE_EQ(g.offset.data[0], 1.0);
  EXPECT_DOUBLE_EQ(g.offset.data[1], 8.0);  // y samples 1, 2: slope 4 everywhere -> 16/4*2
}

TEST(RefDeformRoiPool, PerBinOffsetsAndScaledGradient) {
  // Box (1,1)-(3,3), 1x2 output, grid 1: bin_w = 1, bin_h = 2; bin pw samples
  // x = 0.5 + pw + 0.5 = 1 + pw, y = 0.5 + 1 = 1.5.
  // offset[0,0,0,:] (x) = {0.1, 0}, offset[0,1,0,:] (y) = {0, 0.2}, gamma 1:
  // bin 0: x += 0.1*rw = 0.2 -> (1.5, 1.2) -> 7.2; bin 1: y += 0.2*rh = 0.4 -> (1.9, 2) -> 9.6.
  const Tensor in = ramp4();
  const Tensor rois = rois_of({kBox});
  Tensor off(Shape{1, 2, 1, 2});
  off.data = {0.1, 0.0, 0.0, 0.2};
  const auto p = params(in, rois, 1, 2, 1.0, 1, 1.0, true);
  const Tensor out = ref::deform_roi_pool_forward(p, in, rois, &off);
  EXPECT_NEAR(out.at(0, 0, 0, 0), 7.2, 1e-14);
  EXPECT_NEAR(out.at(0, 0, 0, 1), 9.6, 1e-14);
  // grad_offset with gout = {1, 3}: one sample per bin, count 1.
  // bin 0: x: 1 * gamma*rw * 1 = 2; y: 1 * 2 * 4 = 8. bin 1: x: 3*2*1 = 6, y: 3*2*4 = 24.
  Tensor gout(Shape{1, 1, 1, 2});
  gout.data = {1.0, 3.0};
  const auto g = ref::deform_roi_pool_backward(p, in, rois, &off, gout);
  EXPECT_NEAR(g.offset.at(0, 0, 0, 0), 2.0, 1e-14);
  EXPECT_NEAR(g.offset.at(0, 0, 0, 1), 6.0, 1e-14);
  EXPECT_NEAR(g.offset.at(0, 1, 0, 0), 8.0, 1e-14);
  EXPECT_NEAR(g.offset.at(0, 1, 0, 1), 24.0, 1e-14);
  // grad_input: bin 0 sample (1.5, 1.2): (1,1) .5*.8, (1,2) .5*.2, (2,1) .5*.8, (2,2) .5*.2;
  // bin 1 sample (1.9, 2) times 3: (1,2) 3*.1, (2,2) 3*.9 (column 3 gets weight 0).
  EXPECT_NEAR(g.input.at(0, 0, 1, 1), 0.4, 1e-14);
  EXPECT_NEAR(g.input.at(0, 0, 1, 2), 0.1 + 0.3, 1e-14);
  EXPECT_NEAR(g.input.at(0, 0, 2, 1), 0.4, 1e-14);
  EXPECT_NEAR(g.input.at(0, 0, 2, 2), 0.1 + 2.7, 1e-14);
  double total = 0;
  for (double v : g.input.data) total += v;
  EXPECT_NEAR(total, 4.0, 1e-13);  // every sample in range: the weights sum to gout
}

TEST(RefDeformRoiPool, NonFiniteOffsetCountsAsOutOfRange) {
  // A NaN offset makes the bin's samples NaN: they read 0 and get no gradient.
  const Tensor off = offset1(kNaN, 0.0);
  EXPECT_EQ(fwd1(ramp4(), kBox, 2, 0.1, &off), 0.0);
  const auto g = bwd1(ramp4(), kBox, 2, 0.1, &off, 1.0);
  for (double v : g.input.data) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(g.offset.data[0], 0.0);
  EXPECT_EQ(g.offset.data[1], 0.0);
}

TEST(RefDeformRoiPool, ZeroElementCases) {
  // K = 0 with an offset [0,2,PH,PW]: empty output, empty offset grad, zero input grad.
  const Tensor in = ramp4();
  const Tensor none(Shape{0, 5});
  Tensor off(Shape{0, 2, 2, 3});
  const auto p = params(in, none, 2, 3, 1.0, 0, 0.1, true);
  EXPECT_EQ(ref::deform_roi_pool_forward(p, in, none, &off).shape, (Shape{0, 1, 2, 3}));
  const auto g = ref::deform_roi_pool_backward(p, in, none, &off, Tensor(Shape{0, 1, 2, 3}));
  ASSERT_EQ(g.input.shape, in.shape);
  for (double v : g.input.data) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(g.offset.shape, off.shape);
  // Without an offset the offset grad stays empty.
  EXPECT_TRUE(ref::deform_roi_pool_backward(params(in, none, 2, 3, 1.0, 0, 0.1, false), in, none, nullptr,
                                            Tensor(Shape{0, 1, 2, 3}))
                  .offset.shape.empty());
  // W = 0: every sample out of range -> 0, zero gradients.
  Tensor flat(Shape{1, 1, 4, 0});
  const Tensor rois = rois_of({kBox});
  const Tensor o1 = offset1(0.1, 0.1);
  const auto pf = params(flat, rois, 1, 1, 1.0, 2, 0.1, true);
  EXPECT_EQ(ref::deform_roi_pool_forward(pf, flat, rois, &o1).data.at(0), 0.0);
  const auto gf = ref::deform_roi_pool_backward(pf, flat, rois, &o1, Tensor(Shape{1, 1, 1, 1}, 1.0));
  EXPECT_EQ(gf.input.shape, flat.shape);
  EXPECT_EQ(gf.offset.data, (std::vector<double>{0.0, 0.0}));
}

// ---------------------------------------------------------------- cross-check and FD

double dot(const Tensor& a, const Tensor& b) {
  double s = 0;
  for (size_t i = 0; i < a.data.size(); ++i) s += a.data[i] * b.data[i];
  return s;
}

struct RandomCase {
  DeformRoiPoolParams p;
  Tensor input, rois, offset;
};

// Distance of the nearest sample coordinate (after the offset) to an integer: the kinks of
// the bilinear rule, borders -1, 0, H-1, H included. Written from SPEC §5.
double kink_distance(const RandomCase& c) {
  const auto& p = c.p;
  double best = 1e9;
  auto dist = [](double v) { return std::fabs(v - std::round(v)); };
  for (int64_t r = 0; r < p.K; ++r) {
    const double s = p.spatial_scale;
    const double sx = c.rois.at(r, 1) * s - 0.5, sy = c.rois.at(r, 2) * s - 0.5;
    const double rw = c.rois.at(r, 3) * s - 0.5 - sx, rh = c.rois.at(r, 4) * s - 0.5 - sy;
    const int64_t gh = p.sampling_ratio > 0 ? p.sampling_ratio : int64_t(std::ceil(rh / double(p.PH)));
    const int64_t gw = p.sampling_ratio > 0 ? p.sampling_ratio : int64_t(std::ceil(rw / double(p.PW)));
    for (int64_t ph = 0; ph < p.PH; ++ph)
      for (int64_t pw = 0; pw < p.PW; ++pw) {
        const double y0 = sy + p.gamma * rh * c.offset.at(r, 1, ph, pw);
        const double x0 = sx + p.gamma * rw * c.offset.at(r, 0, ph, pw);
        for (int64_t i = 0; i < gh; ++i) best = std::min(best, dist(y0 + (double(ph) + (double(i) + 0.5) / double(gh)) * rh / double(p.PH)));
        for (int64_t i = 0; i < gw; ++i) best = std::min(best, dist(x0 + (double(pw) + (double(i) + 0.5) / double(gw)) * rw / double(p.PW)));
      }
  }
  return best;
}

RandomCase random_case(std::mt19937_64& rng, int trial) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  RandomCase c;
  const int64_t N = 2, C = 2, H = 5, W = 6, K = 3, PH = 2, PW = 2;
  const int64_t sr = trial % 3;  // 0 adaptive, 1, 2
  const double s = trial % 4 < 2 ? 1.0 : 0.5;
  c.input = Tensor(Shape{N, C, H, W});
  for (double& v : c.input.data) v = u(rng);
  c.rois = Tensor(Shape{K, 5});
  for (int64_t r = 0; r < K; ++r) {
    // Feature-space boxes reaching a little past the image; with a fixed grid some are
    // reversed (x2 < x1), which mirrors the samples and makes rw < 0.
    const double lo = sr > 0 ? -1.5 : 0.3;
    const double x1 = -1.2 + 3.5 * (u(rng) + 1.0), y1 = -1.2 + 2.5 * (u(rng) + 1.0);
    const double x2 = x1 + lo + (4.0 - lo) * 0.5 * (u(rng) + 1.0), y2 = y1 + lo + (3.5 - lo) * 0.5 * (u(rng) + 1.0);
    c.rois.at(r, 0) = double(r % N);
    c.rois.at(r, 1) = x1 / s, c.rois.at(r, 2) = y1 / s, c.rois.at(r, 3) = x2 / s, c.rois.at(r, 4) = y2 / s;
  }
  c.offset = Tensor(Shape{K, 2, PH, PW});
  for (double& v : c.offset.data) v = 0.4 * u(rng);
  c.p = params(c.input, c.rois, PH, PW, s, sr, trial % 2 ? 0.1 : 0.7, true);
  return c;
}

TEST(RefDeformRoiPool, WithoutOffsetEqualsAlignedRoiAlignAvg) {
  // No offset and rw, rh > 0: deform_roi_pool is roi_align(aligned=true, avg).
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 6; ++trial) {
    RandomCase c = random_case(rng, 3 * trial);  // adaptive grid: positive boxes
    c.p.has_offset = false;
    RoiAlignParams a;
    a.N = c.p.N, a.C = c.p.C, a.H = c.p.H, a.W = c.p.W, a.K = c.p.K, a.PH = c.p.PH, a.PW = c.p.PW;
    a.spatial_scale = c.p.spatial_scale, a.sampling_ratio = c.p.sampling_ratio, a.aligned = true;
    const Tensor want = ref::roi_align_forward(a, c.input, c.rois);
    const Tensor got = ref::deform_roi_pool_forward(c.p, c.input, c.rois, nullptr);
    ASSERT_EQ(got.shape, want.shape);
    for (size_t i = 0; i < got.data.size(); ++i) EXPECT_DOUBLE_EQ(got.data[i], want.data[i]);
  }
}

TEST(RefDeformRoiPool, FiniteDifferenceInputAndOffsetGrads) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double h = 1e-6;
  int checked = 0;
  for (int trial = 0; trial < 300 && checked < 8; ++trial) {
    RandomCase c = random_case(rng, trial);
    // Samples move by at most |gamma*r*h| under the offset perturbation: stay well clear.
    if (kink_distance(c) < 1e-3) continue;
    Tensor gout(c.p.output_shape());
    for (double& v : gout.data) v = u(rng);
    const auto g = ref::deform_roi_pool_backward(c.p, c.input, c.rois, &c.offset, gout);
    auto loss = [&](const Tensor& in, const Tensor& off) {
      return dot(gout, ref::deform_roi_pool_forward(c.p, in, c.rois, &off));
    };
    double nz_in = 0, nz_off = 0;
    for (size_t i = 0; i < c.input.data.size(); ++i) {
      Tensor xp = c.input, xm = c.input;
      xp.data[i] += h;
      xm.data[i] -= h;
      const double fd = (loss(xp, c.offset) - loss(xm, c.offset)) / (2 * h);
      EXPECT_NEAR(fd, g.input.data[i], 1e-7) << "trial " << trial << " input " << i;
      nz_in += std::fabs(g.input.data[i]);
    }
    for (size_t i = 0; i < c.offset.data.size(); ++i) {
      Tensor op = c.offset, om = c.offset;
      op.data[i] += h;
      om.data[i] -= h;
      const double fd = (loss(c.input, op) - loss(c.input, om)) / (2 * h);
      EXPECT_NEAR(fd, g.offset.data[i], 1e-7) << "trial " << trial << " offset " << i;
      nz_off += std::fabs(g.offset.data[i]);
    }
    EXPECT_GT(nz_in, 0.0) << "trial " << trial;
    EXPECT_GT(nz_off, 0.0) << "trial " << trial;
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

}  // namespace
}  // namespace oplab
