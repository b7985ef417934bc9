// Tests of the deform_conv2d reference (SPEC §2) against values derived by hand, an
// independent plain convolution, and central finite differences of every gradient.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "reference/reference.h"

namespace oplab {
namespace {

using ref::deform_conv2d_backward;
using ref::deform_conv2d_forward;

struct Geometry {
  int64_t N = 1, C = 1, H = 1, W = 1, Co = 1, kh = 1, kw = 1, G = 1, D = 1;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool mask = false, bias = false;
};

// Builds the params the way SPEC §2 defines them (the parser is tested elsewhere).
DeformConvParams make_params(const Geometry& g) {
  DeformConvParams p;
  p.N = g.N, p.C = g.C, p.H = g.H, p.W = g.W, p.Co = g.Co, p.kh = g.kh, p.kw = g.kw;
  p.G = g.G, p.D = g.D, p.sh = g.sh, p.sw = g.sw, p.ph = g.ph, p.pw = g.pw, p.dh = g.dh, p.dw = g.dw;
  p.Ho = (g.H + 2 * g.ph - (g.dh * (g.kh - 1) + 1)) / g.sh + 1;
  p.Wo = (g.W + 2 * g.pw - (g.dw * (g.kw - 1) + 1)) / g.sw + 1;
  p.has_mask = g.mask;
  p.has_bias = g.bias;
  return p;
}

// All the tensors of one case, zero-filled with the shapes of SPEC §2.
struct Inputs {
  Tensor input, offset, weight, mask, bias;
  bool has_mask = false, has_bias = false;
  const Tensor* m() const { return has_mask ? &mask : nullptr; }
  const Tensor* b() const { return has_bias ? &bias : nullptr; }
};

Inputs zeros(const DeformConvParams& p) {
  Inputs in;
  const int64_t K = p.kh * p.kw;
  in.input = Tensor({p.N, p.C, p.H, p.W});
  in.offset = Tensor({p.N, 2 * p.D * K, p.Ho, p.Wo});
  in.weight = Tensor({p.Co, p.G > 0 ? p.C / p.G : 0, p.kh, p.kw});
  in.has_mask = p.has_mask;
  in.has_bias = p.has_bias;
  if (p.has_mask) in.mask = Tensor({p.N, p.D * K, p.Ho, p.Wo});
  if (p.has_bias) in.bias = Tensor({p.Co});
  return in;
}

void fill_uniform(Tensor& t, std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  for (double& v : t.data) v = u(rng);
}

Tensor forward(const DeformConvParams& p, const Inputs& in) {
  return deform_conv2d_forward(p, in.input, in.offset, in.weight, in.m(), in.b());
}

ref::DeformConvGrads backward(const DeformConvParams& p, const Inputs& in, const Tensor& gout) {
  return deform_conv2d_backward(p, in.input, in.offset, in.weight, in.m(), in.b(), gout);
}

// ---------------------------------------------------------------------------------------------
// Zero offsets and mask 1 make deform_conv2d a grouped, strided, padded, dilated convolution.

// Plain grouped convolution written independently: zero padding by a bounds test.
Tensor plain_conv(const DeformConvParams& p, const Tensor& X, const Tensor& Wt, const Tensor* bias) {
  Tensor out({p.N, p.Co, p.Ho, p.Wo});
  const int64_t Cg = Wt.dim(1), Cog = p.Co / p.G;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t o = 0; o < p.Co; ++o)
      for (int64_t oy = 0; oy < p.Ho; ++oy)
        for (int64_t ox = 0; ox < p.Wo; ++ox) {
          double s = bias ? bias->data[size_t(o)] : 0.0;
          for (int64_t cg = 0; cg < Cg; ++cg)
            for (int64_t i = 0; i < p.kh; ++i)
              for (int64_t j = 0; j < p.kw; ++j) {
                const int64_t y = oy * p.sh - p.ph + i * p.dh, x = ox * p.sw - p.pw + j * p.dw;
                if (y < 0 || y >= p.H || x < 0 || x >= p.W) continue;
                s += Wt.at(o, cg, i, j) * X.at(n, (o / Cog) * Cg + cg, y, x);
              }
          out.at(n, o, oy, ox) = s;
        }
  return out;
}

TEST(RefDeformConv2d, ZeroOffsetMaskOneIsPlainConvolution) {
  Geometry g;
  g.N = 2, g.C = 4, g.H = 7, g.W = 6, g.Co = 6, g.kh = 3, g.kw = 2, g.G = 2, g.D = 2;
  g.sh = 2, g.sw = 1, g.ph = 1, g.pw = 2, g.dh = 1, g.dw = 2, g.bias = true;
  std::mt19937_64 rng(1);
  for (bool with_mask : {false, true}) {
    g.mask = with_mask;
    const auto p = make_params(g);
    // Ho = (7 + 2 - 3)/2 + 1 = 4, Wo = (6 + 4 - 3)/1 + 1 = 8.
    ASSERT_EQ(p.Ho, 4);
    ASSERT_EQ(p.Wo, 8);
    Inputs in = zeros(p);
    fill_uniform(in.input, rng, -1, 1);
    fill_uniform(in.weight, rng, -1, 1);
    fill_uniform(in.bias, rng, -1, 1);
    if (with_mask) std::fill(in.mask.data.begin(), in.mask.data.end(), 1.0);
    const Tensor got = forward(p, in);
    const Tensor want = plain_conv(p, in.input, in.weight, &in.bias);
    ASSERT_EQ(got.shape, want.shape);
    for (size_t e = 0; e < got.data.size(); ++e) EXPECT_NEAR(got.data[e], want.data[e], 1e-13) << "element " << e;
  }
}

// ---------------------------------------------------------------------------------------------
// Rule B at and near the border. A 1x1 kernel with weight 1 makes out[n,0,oy,ox] = B(y, x)
// with y = oy + Δy, x = ox + Δx.

struct Probe {
  DeformConvParams p;
  Inputs in;
};

// One channel, H x W input with X[y][x] = 10*(y+1) + (x+1), kernel 1x1 with weight 1.
Probe probe(int64_t H, int64_t W, bool mask = false) {
  Geometry g;
  g.H = H, g.W = W, g.mask = mask;
  Probe pr{make_params(g), {}};
  pr.in = zeros(pr.p);
  for (int64_t y = 0; y < H; ++y)
    for (int64_t x = 0; x < W; ++x) pr.in.input.at(0, 0, y, x) = 10.0 * double(y + 1) + double(x + 1);
  pr.in.weight.data[0] = 1.0;
  if (mask) std::fill(pr.in.mask.data.begin(), pr.in.mask.data.end(), 1.0);
  return pr;
}

TEST(RefDeformConv2d, SampleAtMinusHalfRowIsHalfOfRowZero) {
  Probe pr = probe(3, 4);
  // Row oy = 0 gets Δy = -0.5, so y = -0.5 and x = ox (integer).
  for (int64_t ox = 0; ox < 4; ++ox) pr.in.offset.at(0, 0, 0, ox) = -0.5;
  const Tensor out = forward(pr.p, pr.in);
  for (int64_t ox = 0; ox < 4; ++ox) {
    // y0 = -1, ly = 0.5: row -1 reads 0, row 0 has weight 0.5; lx = 0 so only column ox counts.
    // B = 0.5 * 0 + 0.5 * X[0][ox] = 0.5 * (11 + ox).
    EXPECT_DOUBLE_EQ(out.at(0, 0, 0, ox), 0.5 * (11.0 + double(ox)));
  }
  // Row 1 is untouched: Δy = 0 gives X[1][ox] = 21 + ox.
  EXPECT_DOUBLE_EQ(out.at(0, 0, 1, 2), 23.0);
}

TEST(RefDeformConv2d, SampleAtMinusOneOrAtHeightIsZero) {
  Probe pr = probe(3, 4);
  // oy = 0, Δy = -1 -> y = -1 exactly: rule B gives 0 (y <= -1).
  pr.in.offset.at(0, 0, 0, 1) = -1.0;
  // oy = 2, Δy = +1 -> y = 3 = H: 0 (y >= H).
  pr.in.offset.at(0, 0, 2, 1) = 1.0;
  // oy = 1, ox = 0, Δx = -1 -> x = -1: 0.  oy = 1, ox = 3, Δx = +1 -> x = 4 = W: 0.
  pr.in.offset.at(0, 1, 1, 0) = -1.0;
  pr.in.offset.at(0, 1, 1, 3) = 1.0;
  // oy = 1, ox = 2, Δy = -1.25 -> y = -0.25: y0 = -1, ly = 0.75 -> 0.75 * X[0][2] = 0.75 * 13.
  pr.in.offset.at(0, 0, 1, 2) = -1.25;
  const Tensor out = forward(pr.p, pr.in);
  EXPECT_EQ(out.at(0, 0, 0, 1), 0.0);
  EXPECT_EQ(out.at(0, 0, 2, 1), 0.0);
  EXPECT_EQ(out.at(0, 0, 1, 0), 0.0);
  EXPECT_EQ(out.at(0, 0, 1, 3), 0.0);
  EXPECT_DOUBLE_EQ(out.at(0, 0, 1, 2), 0.75 * 13.0);
  // A neighbour stays X: out[0,0,0,0] = X[0][0] = 11.
  EXPECT_DOUBLE_EQ(out.at(0, 0, 0, 0), 11.0);
}

TEST(RefDeformConv2d, InteriorBilinearValue) {
  Probe pr = probe(3, 4);
  // oy = 1, ox = 1 with Δy = 0.25, Δx = 0.5: y = 1.25, x = 1.5.
  pr.in.offset.at(0, 0, 1, 1) = 0.25;
  pr.in.offset.at(0, 1, 1, 1) = 0.5;
  const Tensor out = forward(pr.p, pr.in);
  // X is affine (10(y+1) + (x+1)), so bilinear reproduces it: 10*2.25 + 2.5 = 25.
  EXPECT_NEAR(out.at(0, 0, 1, 1), 25.0, 1e-14);
}

TEST(RefDeformConv2d, GradOffsetAtMinusOneIsRightSided) {
  Probe pr = probe(3, 4, /*mask=*/true);
  // Sample (oy=0, ox=1): Δy = -1, Δx = 0.25 -> y = -1, x = 1.25.
  pr.in.offset.at(0, 0, 0, 1) = -1.0;
  pr.in.offset.at(0, 1, 0, 1) = 0.25;
  // Sample (oy=2, ox=1): Δy = +1, Δx = 0.25 -> y = 3 = H, x = 1.25.
  pr.in.offset.at(0, 0, 2, 1) = 1.0;
  pr.in.offset.at(0, 1, 2, 1) = 0.25;
  // Sample (oy=1, ox=2): Δy = -1.5, Δx = 0 -> y = -0.5, x = 2 (inside the fade-out band).
  pr.in.offset.at(0, 0, 1, 2) = -1.5;
  pr.in.mask.at(0, 0, 0, 1) = 2.0;  // raw mask scales the offset gradient
  Tensor gout(pr.p.output_shape());
  gout.at(0, 0, 0, 1) = 1.0;
  gout.at(0, 0, 2, 1) = 1.0;
  gout.at(0, 0, 1, 2) = 1.0;
  const auto gr = backward(pr.p, pr.in, gout);

  // y = -1: y0 = -1, lx = 0.25, x0 = 1. d/dy = (1-lx)(v(0,1) - v(-1,1)) + lx(v(0,2) - v(-1,2))
  //   = 0.75 * (12 - 0) + 0.25 * (13 - 0) = 12.25 (row 0 interpolated at x = 1.25), times m = 2.
  EXPECT_DOUBLE_EQ(gr.offset.at(0, 0, 0, 1), 2.0 * 12.25);
  // d/dx there: ly = 0 and row -1 reads 0: (1)(v(-1,2) - v(-1,1)) + 0 = 0.
  EXPECT_EQ(gr.offset.at(0, 1, 0, 1), 0.0);
  // Forward value 0 at y = -1, so grad_mask = gout * B = 0 and nothing reaches grad_input row 0
  // from this sample (the row-0 corner has weight ly = 0).
  EXPECT_EQ(gr.mask.at(0, 0, 0, 1), 0.0);

  // y = H = 3: y0 = 3, rows 3 and 4 are outside -> every corner reads 0 -> d/dy = d/dx = 0.
  EXPECT_EQ(gr.offset.at(0, 0, 2, 1), 0.0);
  EXPECT_EQ(gr.offset.at(0, 1, 2, 1), 0.0);
  EXPECT_EQ(gr.mask.at(0, 0, 2, 1), 0.0);

  // y = -0.5, x = 2: d/dy = 1 * (v(0,2) - v(-1,2)) = 13; d/dx = 0.5(v(-1,3)-v(-1,2)) + 0.5(v(0,3)-v(0,2))
  //   = 0.5 * (14 - 13) = 0.5; grad_mask = B = 0.5 * 13 = 6.5.
  EXPECT_DOUBLE_EQ(gr.offset.at(0, 0, 1, 2), 13.0);
  EXPECT_DOUBLE_EQ(gr.offset.at(0, 1, 1, 2), 0.5);
  EXPECT_DOUBLE_EQ(gr.mask.at(0, 0, 1, 2), 6.5);

  // grad_input: only the y = -0.5 sample reaches the image, at corner (0, 2) with weight 0.5.
  for (int64_t y = 0; y < 3; ++y)
    for (int64_t x = 0; x < 4; ++x)
      EXPECT_EQ(gr.input.at(0, 0, y, x), (y == 0 && x == 2) ? 0.5 : 0.0) << y << "," << x;
  // grad_weight = Σ gout * column = 0 + 0 + 6.5.
  EXPECT_DOUBLE_EQ(gr.weight.data[0], 6.5);
}

TEST(RefDeformConv2d, MaskIsRawNotSigmoid) {
  Probe pr = probe(2, 2, /*mask=*/true);
  pr.in.mask.at(0, 0, 1, 1) = -0.5;
  pr.in.mask.at(0, 0, 0, 0) = 3.0;
  const Tensor out = forward(pr.p, pr.in);
  EXPECT_DOUBLE_EQ(out.at(0, 0, 1, 1), -0.5 * 22.0);  // m * X[1][1]
  EXPECT_DOUBLE_EQ(out.at(0, 0, 0, 0), 3.0 * 11.0);   // m * X[0][0]
  EXPECT_DOUBLE_EQ(out.at(0, 0, 0, 1), 12.0);         // m = 1
}

// ---------------------------------------------------------------------------------------------
// Routing: the weight group follows the output channel, the offset group the input channel.

// Plane c of the input holds X_c[y][x] = 100c + 10y + x, so every value names its channel and pixel.
Inputs routing_inputs(const DeformConvParams& p) {
  Inputs in = zeros(p);
  for (int64_t c = 0; c < p.C; ++c)
    for (int64_t y = 0; y < p.H; ++y)
      for (int64_t x = 0; x < p.W; ++x) in.input.at(0, c, y, x) = 100.0 * double(c) + 10.0 * double(y) + double(x);
  return in;
}

TEST(RefDeformConv2d, OffsetGroupFollowsInputChannel) {
  Geometry g;
  g.C = 4, g.H = 2, g.W = 3, g.Co = 2, g.G = 1, g.D = 2;  // channels 0,1 -> offset group 0; 2,3 -> 1
  const auto p = make_params(g);
  Inputs in = routing_inputs(p);
  // Offset group 1 (channels 2(1*1+0) = 2 for Δy, 3 for Δx) shifts right by 0.5 everywhere.
  for (int64_t y = 0; y < 2; ++y)
    for (int64_t x = 0; x < 3; ++x) in.offset.at(0, 3, y, x) = 0.5;
  // W[o][c] = 1 for o = 0 on channel 0 and 2; o = 1 reads channel 3 only.
  in.weight.at(0, 0, 0, 0) = 1.0;
  in.weight.at(0, 2, 0, 0) = 1.0;
  in.weight.at(1, 3, 0, 0) = 1.0;
  const Tensor out = forward(p, in);
  // o = 0 at (1, 1): X_0[1][1] + X_2[1][1.5] = 11 + (200 + 10 + 1.5) = 222.5.
  EXPECT_DOUBLE_EQ(out.at(0, 0, 1, 1), 222.5);
  // o = 1 at (0, 2): X_3 at x = 2.5: x0 = 2, lx = 0.5, column 3 outside reads 0:
  //   0.5 * X_3[0][2] + 0.5 * 0 = 0.5 * 302 = 151.
  EXPECT_DOUBLE_EQ(out.at(0, 1, 0, 2), 151.0);
  // o = 0 at (0, 0): X_0[0][0] + X_2[0][0.5] = 0 + 200.5.
  EXPECT_DOUBLE_EQ(out.at(0, 0, 0, 0), 200.5);
}

TEST(RefDeformConv2d, WeightGroupFollowsOutputChannel) {
  Geometry g;
  g.C = 4, g.H = 2, g.W = 3, g.Co = 4, g.G = 2, g.D = 1, g.mask = true;
  const auto p = make_params(g);
  Inputs in = routing_inputs(p);
  // weight [4, 2, 1, 1]: W[o][cg] = o + 1 + 10 cg.
  for (int64_t o = 0; o < 4; ++o)
    for (int64_t cg = 0; cg < 2; ++cg) in.weight.at(o, cg, 0, 0) = double(o + 1) + 10.0 * double(cg);
  std::fill(in.mask.data.begin(), in.mask.data.end(), 1.0);
  in.mask.at(0, 0, 1, 2) = 0.5;
  const Tensor out = forward(p, in);
  // o = 1 (group 0: channels 0,1) at (1,2): W[1][0] X_0 + W[1][1] X_1 = 2*12 + 12*112 = 1368.
  // The mask 0.5 at (1,2) scales both: 684.
  EXPECT_DOUBLE_EQ(out.at(0, 1, 1, 2), 684.0);
  // o = 3 (group 1: channels 2,3) at (0,1): W[3][0] X_2 + W[3][1] X_3 = 4*201 + 14*301 = 5018.
  EXPECT_DOUBLE_EQ(out.at(0, 3, 0, 1), 5018.0);
  // o = 2 (group 1) at (0,0): 3*200 + 13*300 = 4500.
  EXPECT_DOUBLE_EQ(out.at(0, 2, 0, 0), 4500.0);

  // Backward with gout = 1 only at (o=3, 0, 1): grad_input reaches channels 2 and 3 only,
  // with W[3][0] = 4 and W[3][1] = 14 at pixel (0, 1).
  Tensor gout(p.output_shape());
  gout.at(0, 3, 0, 1) = 1.0;
  const auto gr = backward(p, in, gout);
  for (int64_t c = 0; c < 4; ++c)
    for (int64_t y = 0; y < 2; ++y)
      for (int64_t x = 0; x < 3; ++x) {
        double want = 0.0;
        if (y == 0 && x == 1 && c == 2) want = 4.0;
        if (y == 0 && x == 1 && c == 3) want = 14.0;
        EXPECT_EQ(gr.input.at(0, c, y, x), want) << c << "," << y << "," << x;
      }
  // grad_weight[3][cg] = column value = X_{2+cg}[0][1]; grad_weight of group 0 is 0.
  EXPECT_DOUBLE_EQ(gr.weight.at(3, 0, 0, 0), 201.0);
  EXPECT_DOUBLE_EQ(gr.weight.at(3, 1, 0, 0), 301.0);
  EXPECT_EQ(gr.weight.at(1, 0, 0, 0), 0.0);
  // grad_mask at (0,1) = Σ_c Gcol_c B_c over all 4 channels (one offset group): only channels
  // 2,3 have Gcol != 0: 4*201 + 14*301 = 5018.
  EXPECT_DOUBLE_EQ(gr.mask.at(0, 0, 0, 1), 5018.0);
}

// ---------------------------------------------------------------------------------------------
// Non-finite offsets and non-finite feature values.

TEST(RefDeformConv2d, NonFiniteOffsetIsOutOfRangeWithNoGradient) {
  Probe pr = probe(2, 2, /*mask=*/true);
  std::fill(pr.in.mask.data.begin(), pr.in.mask.data.end(), 2.0);
  pr.in.offset.at(0, 0, 0, 0) = std::numeric_limits<double>::quiet_NaN();  // Δy NaN at (0,0)
  pr.in.offset.at(0, 1, 1, 1) = std::numeric_limits<double>::infinity();   // Δx +Inf at (1,1)
  const Tensor out = forward(pr.p, pr.in);
  EXPECT_EQ(out.at(0, 0, 0, 0), 0.0);
  EXPECT_EQ(out.at(0, 0, 1, 1), 0.0);
  EXPECT_DOUBLE_EQ(out.at(0, 0, 0, 1), 2.0 * 12.0);
  Tensor gout(pr.p.output_shape(), 1.0);
  const auto gr = backward(pr.p, pr.in, gout);
  // Each pixel is read only by its own sample (zero offsets elsewhere), with m = 2.
  EXPECT_EQ(gr.input.at(0, 0, 0, 0), 0.0);
  EXPECT_EQ(gr.input.at(0, 0, 1, 1), 0.0);
  EXPECT_DOUBLE_EQ(gr.input.at(0, 0, 0, 1), 2.0);
  EXPECT_DOUBLE_EQ(gr.input.at(0, 0, 1, 0), 2.0);
  for (int64_t ch = 0; ch < 2; ++ch) {
    EXPECT_EQ(gr.offset.at(0, ch, 0, 0), 0.0);
    EXPECT_EQ(gr.offset.at(0, ch, 1, 1), 0.0);
  }
  EXPECT_EQ(gr.mask.at(0, 0, 0, 0), 0.0);
  EXPECT_EQ(gr.mask.at(0, 0, 1, 1), 0.0);
  EXPECT_DOUBLE_EQ(gr.mask.at(0, 0, 1, 0), 21.0);  // B = X[1][0]
  // grad_weight = Σ gout * m * B over the two finite samples: 2*12 + 2*21 = 66.
  EXPECT_DOUBLE_EQ(gr.weight.data[0], 66.0);
}

TEST(RefDeformConv2d, NaNInFeatureMapSpreadsThroughZeroWeightCorner) {
  Probe pr = probe(2, 2);
  pr.in.input.at(0, 0, 0, 1) = std::numeric_limits<double>::quiet_NaN();
  const Tensor out = forward(pr.p, pr.in);
  // Sample (0,0) sits exactly on X[0][0]; corner (0,1) is in the image with weight 0, and
  // 0 * NaN = NaN (torchvision's kernel reads every in-image corner).
  EXPECT_TRUE(std::isnan(out.at(0, 0, 0, 0)));
  // Sample (1,0): corners (1,0), (1,1), rows 2 outside; no NaN reachable.
  EXPECT_DOUBLE_EQ(out.at(0, 0, 1, 0), 21.0);
}

// ---------------------------------------------------------------------------------------------
// Zero-element cases.

TEST(RefDeformConv2d, EmptyBatchGivesEmptyOutputAndGrads) {
  Geometry g;
  g.N = 0, g.C = 2, g.H = 4, g.W = 4, g.Co = 3, g.kh = 3, g.kw = 3, g.ph = 1, g.pw = 1, g.mask = true, g.bias = true;
  const auto p = make_params(g);
  Inputs in = zeros(p);
  std::mt19937_64 rng(3);
  fill_uniform(in.weight, rng, -1, 1);
  const Tensor out = forward(p, in);
  EXPECT_EQ(out.shape, (Shape{0, 3, 4, 4}));
  EXPECT_EQ(out.numel(), 0);
  const auto gr = backward(p, in, Tensor(p.output_shape()));
  EXPECT_EQ(gr.input.shape, in.input.shape);
  EXPECT_EQ(gr.offset.shape, in.offset.shape);
  EXPECT_EQ(gr.mask.shape, in.mask.shape);
  EXPECT_EQ(gr.weight.shape, in.weight.shape);
  for (double v : gr.weight.data) EXPECT_EQ(v, 0.0);
  EXPECT_EQ(gr.bias.shape, (Shape{3}));
  for (double v : gr.bias.data) EXPECT_EQ(v, 0.0);
}

TEST(RefDeformConv2d, NoInputChannelsGivesBias) {
  Geometry g;
  g.C = 0, g.H = 3, g.W = 3, g.Co = 2, g.kh = 2, g.kw = 2, g.bias = true;
  const auto p = make_params(g);
  Inputs in = zeros(p);
  in.bias.data = {1.5, -2.0};
  const Tensor out = forward(p, in);
  ASSERT_EQ(out.shape, (Shape{1, 2, 2, 2}));
  for (int64_t y = 0; y < 2; ++y)
    for (int64_t x = 0; x < 2; ++x) {
      EXPECT_EQ(out.at(0, 0, y, x), 1.5);
      EXPECT_EQ(out.at(0, 1, y, x), -2.0);
    }
  const auto gr = backward(p, in, Tensor(p.output_shape(), 1.0));
  // grad_bias = Σ gout over the 2x2 output = 4 per channel.
  EXPECT_EQ(gr.bias.data, (std::vector<double>{4.0, 4.0}));
  EXPECT_EQ(gr.weight.numel(), 0);
  EXPECT_EQ(gr.input.numel(), 0);
}

TEST(RefDeformConv2d, GradsWithoutMaskOrBiasAreEmpty) {
  Probe pr = probe(2, 2);
  const auto gr = backward(pr.p, pr.in, Tensor(pr.p.output_shape(), 1.0));
  EXPECT_TRUE(gr.mask.shape.empty());
  EXPECT_TRUE(gr.bias.shape.empty());
}

// ---------------------------------------------------------------------------------------------
// Central finite differences of every gradient on a random case whose sample points stay
// away from integer coordinates, where B is smooth. Within a cell B is linear in each single
// coordinate, and the output is linear in input, mask, weight and bias, so the central
// difference is exact up to rounding (about eps * |L| / h ~ 1e-9 here).

TEST(RefDeformConv2d, GradientsMatchFiniteDifferences) {
  Geometry g;
  g.N = 2, g.C = 4, g.H = 5, g.W = 6, g.Co = 4, g.kh = 2, g.kw = 3, g.G = 2, g.D = 2;
  g.sh = 1, g.sw = 2, g.ph = 1, g.pw = 1, g.dh = 2, g.dw = 1, g.mask = true, g.bias = true;
  const auto p = make_params(g);
  ASSERT_GT(p.Ho, 0);
  ASSERT_GT(p.Wo, 0);
  std::mt19937_64 rng(7);
  Inputs in = zeros(p);
  fill_uniform(in.input, rng, -1, 1);
  fill_uniform(in.weight, rng, -1, 1);
  fill_uniform(in.mask, rng, -1.5, 1.5);
  fill_uniform(in.bias, rng, -1, 1);
  // Base coordinates are integers, so an offset of (integer in [-2, 1]) + (fraction in
  // [0.15, 0.85]) keeps every sample at least 0.15 away from the lattice; some samples leave
  // the image, which checks the zero gradient there too.
  std::uniform_int_distribution<int> whole(-2, 1);
  std::uniform_real_distribution<double> frac(0.15, 0.85);
  for (double& v : in.offset.data) v = double(whole(rng)) + frac(rng);
  Tensor gout(p.output_shape());
  fill_uniform(gout, rng, -1, 1);

  // L = <gout, forward>; its gradient is what backward returns.
  auto loss = [&](const Inputs& x) {
    const Tensor out = forward(p, x);
    double s = 0.0;
    for (size_t e = 0; e < out.data.size(); ++e) s += gout.data[e] * out.data[e];
    return s;
  };
  const auto gr = backward(p, in, gout);

  const double h = 1e-6;
  auto check = [&](const char* name, Tensor Inputs::*field, const Tensor& grad) {
    Inputs x = in;
    Tensor& t = x.*field;
    ASSERT_EQ(grad.shape, t.shape) << name;
    int nonzero = 0;
    for (size_t e = 0; e < t.data.size(); ++e) {
      const double v = t.data[e];
      t.data[e] = v + h;
      const double up = loss(x);
      t.data[e] = v - h;
      const double down = loss(x);
      t.data[e] = v;
      const double fd = (up - down) / (2 * h);
      EXPECT_NEAR(grad.data[e], fd, 1e-7 * std::max(1.0, std::abs(fd))) << name << "[" << e << "]";
      nonzero += grad.data[e] != 0.0;
    }
    // Guard against a vacuous pass: most entries carry a real gradient.
    EXPECT_GT(nonzero, int(t.data.size()) / 4) << name;
  };
  check("input", &Inputs::input, gr.input);
  check("offset", &Inputs::offset, gr.offset);
  check("mask", &Inputs::mask, gr.mask);
  check("weight", &Inputs::weight, gr.weight);
  check("bias", &Inputs::bias, gr.bias);
}

}  // namespace
}  // namespace oplab
