// The grid_sample reference (SPEC §12) against values worked out by hand beside each test
// (every padding mode, align_corners both ways, nearest's ties, bicubic taps padded one by
// one, 5-D trilinear), its refusals, the adjoint identity of its grad_input, and agreement with
// the live PyTorch peer (float64, CPU) on random and edge cases, forward and backward.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cli/builtin_backends.h"
#include "compare/differential.h"
#include "core/backend.h"
#include "core/case.h"
#include "core/case_io.h"
#include "core/op_desc.h"
#include "core/params.h"
#include "peer/divergences.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

// One row of W pixels, [1, 1, 1, W], and a grid of positions (x_k, y = 0) on it: on a single
// row, y unnormalises to 0 whatever align_corners says, so the row is read as it is.
Tensor row(const std::vector<double>& v) {
  Tensor t(Shape{1, 1, 1, int64_t(v.size())});
  t.data = v;
  return t;
}

Tensor grid_x(const std::vector<double>& xs) {
  Tensor g(Shape{1, 1, int64_t(xs.size()), 2});
  for (size_t k = 0; k < xs.size(); ++k) g.data[2 * k] = xs[k];
  return g;
}

Case gs_case(const Tensor& input, const Tensor& grid, const std::string& mode, const std::string& pad, bool ac,
             bool with_grad = true) {
  Case c;
  c.op = "grid_sample";
  c.params = {{"mode", mode}, {"padding_mode", pad}, {"align_corners", ac}};
  c.inputs["input"] = input;
  c.inputs["grid"] = grid;
  if (with_grad) {
    Shape out = input.shape;
    for (int d = 2; d < input.rank(); ++d) out[size_t(d)] = grid.dim(d - 1);
    c.grad_output = Tensor(out, 1.0);
  }
  return c;
}

Result run_ref(const Case& c) { return make_ref_backend()->run(c); }

std::vector<double> out_of(const Result& r) { return r.outputs.at("output").data; }
// d out / d x of each position (the grid's even entries) under grad_output 1.
std::vector<double> gx_of(const Result& r) {
  std::vector<double> v;
  const auto& g = r.grads.at("grid").data;
  for (size_t i = 0; i < g.size(); i += 2) v.push_back(g[i]);
  return v;
}

const std::vector<double> kRow = {1, 2, 4, 8};  // W = 4: unequal steps, so slopes tell pixels apart

// ---------------------------------------------------------------- by hand

TEST(RefGridSample, BilinearZerosNotAligned) {
  // W = 4, align_corners=false: c = ((g + 1) 4 - 1)/2 = 2g + 1.5, dc/dg = 2.
  //   g = -1:   c = -0.5: corners -1 (outside, 0) and 0, weights 1/2: 0.5;  d/dg = 2 (1 - 0) = 2
  //   g = 0:    c = 1.5: (2 + 4)/2 = 3;                                    d/dg = 2 (4 - 2) = 4
  //   g = 1:    c = 3.5: 8/2 + 0 = 4;                                      d/dg = 2 (0 - 8) = -16
  //   g = 0.25: c = 2 exactly: pixel 2 = 4; the piece [2, 3] (from the right): 2 (8 - 4) = 8
  //   g = 1.5:  c = 4.5: both corners outside: 0, no gradient
  const Result r = run_ref(gs_case(row(kRow), grid_x({-1, 0, 1, 0.25, 1.5}), "bilinear", "zeros", false));
  EXPECT_EQ(out_of(r), (std::vector<double>{0.5, 3, 4, 4, 0}));
  EXPECT_EQ(gx_of(r), (std::vector<double>{2, 4, -16, 8, 0}));
  // y: H = 1, c_y = 0 exactly, dc/dy = H/2 = 0.5; the piece [0, 1] reads row 1 as 0 (outside):
  // d/dy = 0.5 (0 - value), e.g. -1.5 at g = 0.
  EXPECT_DOUBLE_EQ(r.grads.at("grid").data[3], -1.5);
  // grad_input: each position hands its weights to its corners: pixel 0 gets 0.5 (g = -1),
  // pixel 1 0.5, pixel 2 0.5 + 1 (g = 0.25), pixel 3 0.5.
  EXPECT_EQ(r.grads.at("input").data, (std::vector<double>{0.5, 0.5, 1.5, 0.5}));
}

TEST(RefGridSample, BorderClampsAndItsGradientIsZeroThere) {
  // Border: c clamped to [0, 3], derivative 0 at and beyond the ends (the flat side).
  //   g = 1:    c = 3.5 -> 3: 8, d/dg 0;   g = -1: c = -0.5 -> 0: 1, d/dg 0
  //   g = 0.25: c = 2: 4, d/dg = 2 (8 - 4) = 8 (inside, as zeros)
  //   g = -0.75: c = 0 exactly: on the clamp's end: 1, d/dg 0
  const Result r = run_ref(gs_case(row(kRow), grid_x({1, -1, 0.25, -0.75}), "bilinear", "border", false));
  EXPECT_EQ(out_of(r), (std::vector<double>{8, 1, 4, 1}));
  EXPECT_EQ(gx_of(r), (std::vector<double>{0, 0, 8, 0}));
  // y: c_y = 0 on a one-row image is clamped (both ends are 0): no gradient.
  EXPECT_EQ(r.grads.at("grid").data[1], 0.0);
}

TEST(RefGridSample, ReflectionNotAlignedFoldsAboutHalfPixels) {
  // Reflection about [-0.5, 3.5] (span 4), then clamped to [0, 3].
  //   g = -1.375: c = -1.25, 0.75 below -0.5 -> -0.5 + 0.75 = 0.25, derivative -1:
  //               0.75*1 + 0.25*2 = 1.25; d/dg = 2 * (-1) * (2 - 1) = -2
  //   g = 1.375:  c = 4.25, 0.75 beyond 3.5 -> 3.5 - 0.75 = 2.75, derivative -1:
  //               0.25*4 + 0.75*8 = 7; d/dg = 2 * (-1) * (8 - 4) = -8
  //   g = -1.25:  c = -1 -> 0, on the clamp's end: 1, d/dg 0
  //   g = 3.625:  c = 8.75: 9.25 from -0.5, two folds (even): -0.5 + 1.25 = 0.75, derivative +1:
  //               0.25*1 + 0.75*2 = 1.75; d/dg = 2 * (2 - 1) = 2
  const Result r = run_ref(gs_case(row(kRow), grid_x({-1.375, 1.375, -1.25, 3.625}), "bilinear", "reflection", false));
  EXPECT_EQ(out_of(r), (std::vector<double>{1.25, 7, 1, 1.75}));
  EXPECT_EQ(gx_of(r), (std::vector<double>{-2, -8, 0, 2}));
}

TEST(RefGridSample, AlignCornersZerosAndReflection) {
  // align_corners=true, W = 4: c = (g + 1)/2 * 3, dc/dg = 1.5.
  //   zeros g = -1: c = 0: 1; piece [0, 1]: 1.5 (2 - 1) = 1.5
  //   zeros g = 1:  c = 3: 8; piece [3, 4], pixel 4 outside: 1.5 (0 - 8) = -12
  //   zeros g = 0:  c = 1.5: 3; 1.5 (4 - 2) = 3
  const Result z = run_ref(gs_case(row(kRow), grid_x({-1, 1, 0}), "bilinear", "zeros", true));
  EXPECT_EQ(out_of(z), (std::vector<double>{1, 8, 3}));
  EXPECT_EQ(gx_of(z), (std::vector<double>{1.5, -12, 3}));
  // Reflection about [0, 3] (span 3): g = 1.5: c = 3.75 -> 3 - 0.75 = 2.25, derivative -1:
  // 0.75*4 + 0.25*8 = 5; d/dg = 1.5 * (-1) * (8 - 4) = -6. g = -1.5: c = -0.75 -> 0.75, -1:
  // 0.25*1 + 0.75*2 = 1.75; d/dg = 1.5 * (-1) * (2 - 1) = -1.5.
  const Result f = run_ref(gs_case(row(kRow), grid_x({1.5, -1.5}), "bilinear", "reflection", true));
  EXPECT_EQ(out_of(f), (std::vector<double>{5, 1.75}));
  EXPECT_EQ(gx_of(f), (std::vector<double>{-6, -1.5}));
  // y on a one-row image with align_corners: dc/dy = 0 and reflection has no span: 0.
  EXPECT_EQ(f.grads.at("grid").data[1], 0.0);
}

TEST(RefGridSample, NearestRoundsHalfToEven) {
  // W = 4, not aligned: c = 2g + 1.5.
  //   g = -0.5: c = 0.5 -> 0 (half to even): 1      (half away from zero would read pixel 1: 2)
  //   g = 0.5:  c = 2.5 -> 2: 4                     (half away: 3: 8)
  //   g = 0:    c = 1.5 -> 2: 4
  //   g = -1:   c = -0.5 -> -0 = pixel 0: 1
  //   g = 1:    c = 3.5 -> 4: outside: 0 (zeros); border clamps 3.5 to 3 first: 8
  const Result r = run_ref(gs_case(row(kRow), grid_x({-0.5, 0.5, 0, -1, 1}), "nearest", "zeros", false));
  EXPECT_EQ(out_of(r), (std::vector<double>{1, 4, 4, 1, 0}));
  EXPECT_EQ(gx_of(r), (std::vector<double>{0, 0, 0, 0, 0}));  // piecewise constant
  EXPECT_EQ(r.grads.at("input").data, (std::vector<double>{2, 0, 2, 0}));
  EXPECT_EQ(out_of(run_ref(gs_case(row(kRow), grid_x({1}), "nearest", "border", false))), (std::vector<double>{8}));
}

TEST(RefGridSample, BicubicPadsEachTap) {
  // W = 4, not aligned, g = -1: c = -0.5, floor -1, t = 0.5: taps -2, -1, 0, 1 at signed
  // distances c - tap = 1.5, 0.5, -0.5, -1.5, cubic weights (A = -0.75)
  //   W(0.5) = ((A + 2) 0.5 - (A + 3)) 0.25 + 1 = 0.59375
  //   W(1.5) = ((A 1.5 - 5A) 1.5 + 8A) 1.5 - 4A = -0.09375
  // and slopes W'(0.5) = (3 (A + 2) 0.5 - 2 (A + 3)) 0.5 = -1.3125, W'(1.5) = (3A 1.5 - 10A) 1.5 + 8A
  // = 0.1875 (odd: W'(-d) = -W'(d)). One row: y's taps weigh 0, 1, 0, 0, whatever the padding.
  //   zeros:      taps -2, -1 read 0: 0.59375*1 - 0.09375*2 = 0.40625;
  //               d/dg = 2 (1.3125*1 - 0.1875*2) = 1.875
  //   border:     -2, -1 -> 0: (-0.09375 + 0.59375 + 0.59375)*1 - 0.09375*2 = 0.90625;
  //               d/dg = 2 (0.1875 - 1.3125 + 1.3125 - 0.1875*2) = -0.375
  //   reflection: about [-0.5, 3.5]: -2 -> 1, -1 -> 0: 2 (0.59375*1 - 0.09375*2) = 0.8125;
  //               d/dg = 2 (0.1875*2 - 1.3125 + 1.3125 - 0.1875*2) = 0
  const std::map<std::string, std::pair<double, double>> want = {
      {"zeros", {0.40625, 1.875}}, {"border", {0.90625, -0.375}}, {"reflection", {0.8125, 0.0}}};
  for (const auto& [pad, v] : want) {
    const Result r = run_ref(gs_case(row(kRow), grid_x({-1}), "bicubic", pad, false));
    EXPECT_DOUBLE_EQ(out_of(r)[0], v.first) << pad;
    EXPECT_DOUBLE_EQ(gx_of(r)[0], v.second) << pad;
  }
}

TEST(RefGridSample, TrilinearOnARamp) {
  // [1, 1, 2, 2, 2] holding 1 + w + 2h + 4d: trilinear interpolation is exact on a ramp, so an
  // in-image position reads 1 + x + 2y + 4z. align_corners=true: c = (g + 1)/2, dc/dg = 0.5.
  //   (0, 0, 0) -> (0.5, 0.5, 0.5): 4.5; d/dg = 0.5 (1, 2, 4) = (0.5, 1, 2)
  //   (1, -1, 0) -> (1, 0, 0.5), zeros: x = 1 on the last column, its piece [1, 2] reads column 2
  //   as 0: value 1 + 1 + 0 + 2 = 4; d/dx = 0.5 (0 - 4) = -2; d/dy = 0.5 * 2 = 1; d/dz = 2
  Tensor x(Shape{1, 1, 2, 2, 2});
  for (int d = 0; d < 2; ++d)
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 2; ++w) x.at(0, 0, d, h, w) = 1 + w + 2 * h + 4 * d;
  Tensor g(Shape{1, 1, 1, 2, 3});
  g.data = {0, 0, 0, 1, -1, 0};
  const Result r = run_ref(gs_case(x, g, "bilinear", "zeros", true));
  EXPECT_EQ(out_of(r), (std::vector<double>{4.5, 4}));
  EXPECT_EQ(r.grads.at("grid").data, (std::vector<double>{0.5, 1, 2, -2, 1, 2}));
}

TEST(RefGridSample, NonFiniteGridSamplesNothing) {
  const double nan = std::nan("");
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* pad : {"zeros", "border", "reflection"}) {
      Tensor g = grid_x({nan, INFINITY, 0});
      g.data[5] = -INFINITY;  // y of the last position
      const Result r = run_ref(gs_case(row(kRow), g, mode, pad, false));
      EXPECT_EQ(out_of(r), (std::vector<double>{0, 0, 0})) << mode << " " << pad;
      for (double v : r.grads.at("grid").data) EXPECT_EQ(v, 0.0) << mode << " " << pad;
      for (double v : r.grads.at("input").data) EXPECT_EQ(v, 0.0) << mode << " " << pad;
    }
}

TEST(RefGridSample, GradInputIsTheAdjointOfTheForward) {
  // <forward(x), y> = <x, grad_input(y)> for every mode and padding: the scatter is the
  // transpose of the gather.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* pad : {"zeros", "border", "reflection"})
      for (bool ac : {false, true}) {
        Tensor x(Shape{2, 2, 3, 5}), g(Shape{2, 3, 2, 2}), y(Shape{2, 2, 3, 2});
        for (double& v : x.data) v = u(rng);
        for (double& v : g.data) v = u(rng);
        for (double& v : y.data) v = u(rng);
        Case c = gs_case(x, g, mode, pad, ac);
        c.grad_output = y;
        const Result r = run_ref(c);
        double lhs = 0, rhs = 0;
        for (size_t i = 0; i < y.data.size(); ++i) lhs += r.outputs.at("output").data[i] * y.data[i];
        for (size_t i = 0; i < x.data.size(); ++i) rhs += x.data[i] * r.grads.at("input").data[i];
        EXPECT_NEAR(lhs, rhs, 1e-12 * (std::fabs(lhs) + 1)) << mode << " " << pad << " " << ac;
      }
}

// ---------------------------------------------------------------- refusals (SPEC §7)

void expect_invalid(const Case& c, const std::string& fragment) {
  try {
    op_desc("grid_sample").parse(c);
    ADD_FAILURE() << "accepted a case that must fail with: " << fragment;
  } catch (const InvalidCase& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("grid_sample: ", 0), 0u) << m;
    EXPECT_NE(m.find(fragment), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(RefGridSample, BadInputIsRefusedWithOneLine) {
  const Tensor x4(Shape{2, 1, 3, 3}), g4(Shape{2, 2, 2, 2});
  expect_invalid(gs_case(Tensor(Shape{2, 3, 3}), g4, "bilinear", "zeros", false, false), "input must have rank 4");
  expect_invalid(gs_case(x4, Tensor(Shape{2, 1, 2, 2, 3}), "bilinear", "zeros", false, false), "grid must have rank 4");
  expect_invalid(gs_case(x4, Tensor(Shape{2, 2, 2, 3}), "bilinear", "zeros", false, false),
                 "grid's last axis must have size 2");
  expect_invalid(gs_case(Tensor(Shape{2, 1, 2, 3, 3}), Tensor(Shape{2, 1, 2, 2, 2}), "nearest", "zeros", false, false),
                 "grid's last axis must have size 3");
  expect_invalid(gs_case(x4, Tensor(Shape{1, 2, 2, 2}), "bilinear", "zeros", false, false),
                 "grid batch size 1 must equal input batch size 2");
  expect_invalid(gs_case(Tensor(Shape{1, 1, 2, 2, 2}), Tensor(Shape{1, 1, 1, 1, 3}), "bicubic", "zeros", false, false),
                 "mode \"bicubic\" needs a 4-D input");
  expect_invalid(gs_case(x4, g4, "linear", "zeros", false, false), "mode=\"linear\" is not one of");
  expect_invalid(gs_case(x4, g4, "bilinear", "replicate", false, false), "padding_mode=\"replicate\" is not one of");
  expect_invalid(gs_case(Tensor(Shape{2, 1, 0, 3}), g4, "bilinear", "zeros", false, false),
                 "input spatial dims must be non-empty");
  Case extra = gs_case(x4, g4, "bilinear", "zeros", false, false);
  extra.params["scale_factor"] = 2;
  expect_invalid(extra, "unknown parameter \"scale_factor\"");
  Case ac = gs_case(x4, g4, "bilinear", "zeros", false, false);
  ac.params["align_corners"] = "yes";
  expect_invalid(ac, "align_corners=\"yes\" must be true or false");
  Case gout = gs_case(x4, g4, "bilinear", "zeros", false);
  gout.grad_output = Tensor(Shape{2, 1, 2, 3});
  expect_invalid(gout, "grad_output shape [2, 1, 2, 3] must equal the output shape [2, 1, 2, 2]");
  Case missing = gs_case(x4, g4, "bilinear", "zeros", false, false);
  missing.inputs.erase("grid");
  expect_invalid(missing, "missing input \"grid\"");
}

TEST(RefGridSample, DefaultsAndEmptyCases) {
  // Defaults: bilinear, zeros, align_corners=false (PyTorch's).
  Case c;
  c.op = "grid_sample";
  c.inputs["input"] = row(kRow);
  c.inputs["grid"] = grid_x({0});
  EXPECT_EQ(out_of(run_ref(c)), (std::vector<double>{3}));
  // N = 0 and an empty grid are valid: empty outputs, zero gradients.
  const Result n0 = run_ref(gs_case(Tensor(Shape{0, 2, 3, 3}), Tensor(Shape{0, 2, 2, 2}), "bilinear", "zeros", false));
  EXPECT_EQ(n0.outputs.at("output").shape, (Shape{0, 2, 2, 2}));
  const Result e = run_ref(gs_case(row(kRow), Tensor(Shape{1, 0, 3, 2}), "bicubic", "border", true));
  EXPECT_EQ(e.outputs.at("output").shape, (Shape{1, 1, 0, 3}));
  EXPECT_EQ(e.grads.at("input").data, (std::vector<double>{0, 0, 0, 0}));
}

// ---------------------------------------------------------------- the live PyTorch peer

Backend& peer() { return *builtin_backends().find("torchvision"); }
Backend& ref() { return *builtin_backends().find("ref"); }

#define REQUIRE_PEER()                                             \
  do {                                                             \
    auto why = peer().unavailable_reason();                        \
    ASSERT_FALSE(why.has_value()) << "torchvision peer: " << *why; \
  } while (0)

void expect_agrees(const Case& c, std::map<std::string, int>& tally) {
  const compare::Outcome o = compare::compare_on_case(ref(), peer(), c, compare::Tolerance{}, torchvision_divergences());
  ++tally[o.verdict == compare::Verdict::NamedDivergence ? o.divergence : compare::verdict_name(o.verdict)];
  EXPECT_TRUE(o.verdict == compare::Verdict::Agree || o.verdict == compare::Verdict::NamedDivergence)
      << compare::verdict_name(o.verdict) << ": " << o.detail << "\n" << case_to_json(c).dump();
}

TEST(PeerGridSample, HandDerivedValuesAreThePeers) {
  REQUIRE_PEER();
  // The same numbers from PyTorch: a few of the cases above.
  const Result z = peer().run(gs_case(row(kRow), grid_x({-1, 0, 1, 0.25, 1.5}), "bilinear", "zeros", false));
  EXPECT_EQ(out_of(z), (std::vector<double>{0.5, 3, 4, 4, 0}));
  EXPECT_EQ(gx_of(z), (std::vector<double>{2, 4, -16, 8, 0}));
  const Result n = peer().run(gs_case(row(kRow), grid_x({-0.5, 0.5, 0, -1, 1}), "nearest", "zeros", false));
  EXPECT_EQ(out_of(n), (std::vector<double>{1, 4, 4, 1, 0}));
  const Result f = peer().run(gs_case(row(kRow), grid_x({-1.375, 1.375, -1.25, 3.625}), "bilinear", "reflection", false));
  EXPECT_EQ(out_of(f), (std::vector<double>{1.25, 7, 1, 1.75}));
  EXPECT_EQ(gx_of(f), (std::vector<double>{-2, -8, 0, 2}));
  const Result b = peer().run(gs_case(row(kRow), grid_x({-1}), "bicubic", "border", false));
  EXPECT_DOUBLE_EQ(out_of(b)[0], 0.90625);
  EXPECT_DOUBLE_EQ(gx_of(b)[0], -0.375);
}

// Random cases: sizes 1-6 (1-4 in 5-D), every mode and padding, grid values in [-1.6, 1.6],
// half of them multiples of 1/8 (exact dyadic coordinates: pixel centres, half-pixel edges
// and the padding's ends are hit exactly), feature values and grad_output normal.
Case random_case(std::mt19937_64& rng, int nd) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  std::normal_distribution<double> v(0.0, 1.0);
  const char* modes[] = {"bilinear", "nearest", "bicubic"};
  const char* pads[] = {"zeros", "border", "reflection"};
  const std::string mode = modes[pick(0, nd == 2 ? 2 : 1)], pad = pads[pick(0, 2)];
  // bicubic with border or reflection on a one-pixel axis: all four taps read one pixel and
  // the grid gradient is rounding noise around 0 on both sides (fuzz/ops/grid_sample.cpp).
  const int64_t lo = mode == "bicubic" && pad != "zeros" ? 2 : 1;
  Shape xs{pick(1, 2), pick(1, 2)}, gs{xs[0]};
  for (int i = 0; i < nd; ++i) xs.push_back(pick(lo, nd == 2 ? 6 : 4));
  for (int i = 0; i < nd; ++i) gs.push_back(pick(1, 3));
  gs.push_back(nd);
  Tensor x(xs), g(gs);
  for (double& e : x.data) e = v(rng);
  // The same for positions far outside on both axes (all taps on one corner pixel): there
  // bicubic's grid values stay in [-1, 1].
  const double reach = lo == 2 ? 1.0 : 1.6;
  for (double& e : g.data)
    e = pick(0, 1) ? double(pick(-8, 8)) * reach / 8.0 : std::uniform_real_distribution<double>(-reach, reach)(rng);
  Case c = gs_case(x, g, mode, pad, pick(0, 1) == 1);
  for (double& e : c.grad_output->data) e = v(rng);
  return c;
}

TEST(PeerGridSample, RandomCasesAgreeForwardAndBackward) {
  REQUIRE_PEER();
  std::mt19937_64 rng(20261124);
  std::map<std::string, int> tally;
  for (int i = 0; i < 300; ++i) expect_agrees(random_case(rng, i % 4 == 3 ? 3 : 2), tally);
  for (const auto& [k, n] : tally) std::printf("[ peer     ] random cases: %s=%d\n", k.c_str(), n);
}

TEST(PeerGridSample, EdgeCasesAgree) {
  REQUIRE_PEER();
  // Every x in quarters from -2.5 to 2.5 (the ends, pixel centres and edges of small images,
  // the reflection folds), on axes of 1 to 5 pixels, each mode, padding and align_corners; the
  // feature values alternate in sign so that every slope differs.
  std::map<std::string, int> tally;
  std::vector<double> xs;
  for (int k = -10; k <= 10; ++k) xs.push_back(k / 4.0);
  for (int64_t W = 1; W <= 5; ++W) {
    std::vector<double> v;
    for (int64_t w = 0; w < W; ++w) v.push_back(double((w % 2 ? -3 : 2) * (w + 1)));
    for (const char* mode : {"bilinear", "nearest", "bicubic"})
      for (const char* pad : {"zeros", "border", "reflection"})
        for (bool ac : {false, true}) expect_agrees(gs_case(row(v), grid_x(xs), mode, pad, ac), tally);
  }
  for (const auto& [k, n] : tally) std::printf("[ peer     ] edge cases: %s=%d\n", k.c_str(), n);
}

TEST(PeerGridSample, Divergence3dNearestRoundsHalfAway) {
  REQUIRE_PEER();
  // [1, 1, 1, 1, 4] holding 1, 2, 4, 8 along x; not aligned: c = 2g + 1.5. g = 0.5 puts c on
  // 2.5: SPEC (half to even) reads pixel 2 = 4, PyTorch's 5-D kernel (half away) pixel 3 = 8.
  // g = -0.5: c = 0.5: pixel 0 = 1 against pixel 1 = 2.
  Tensor x(Shape{1, 1, 1, 1, 4});
  x.data = kRow;
  Tensor g(Shape{1, 1, 1, 2, 3});
  g.data = {0.5, 0, 0, -0.5, 0, 0};
  const Case c = gs_case(x, g, "nearest", "border", false);
  EXPECT_EQ(out_of(run_ref(c)), (std::vector<double>{4, 1}));
  EXPECT_EQ(out_of(peer().run(c)), (std::vector<double>{8, 2}));
  const compare::Outcome o = compare::compare_on_case(ref(), peer(), c, compare::Tolerance{}, torchvision_divergences());
  EXPECT_EQ(o.verdict, compare::Verdict::NamedDivergence) << o.detail;
  EXPECT_EQ(o.divergence, "grid_sample-3d-nearest-round-half-away");
  // The same positions on a 4-D input: PyTorch rounds half to even there, no divergence.
  const Case c4 = gs_case(row(kRow), grid_x({0.5, -0.5}), "nearest", "border", false);
  EXPECT_EQ(out_of(peer().run(c4)), (std::vector<double>{4, 1}));
  EXPECT_FALSE(grid_sample_3d_nearest_equivalent(c4).has_value());
}

TEST(PeerGridSample, NonFiniteGridIsDeclinedButWhereThePeerAgrees) {
  REQUIRE_PEER();
  // torch 1.13 segfaults (bilinear with border or reflection) or answers NaN or an edge pixel
  // for a NaN or Inf grid value; the backend declines those cases. nearest with zeros padding
  // gives the spec's 0 and is compared.
  Tensor g = grid_x({std::nan(""), INFINITY, 0.25});
  EXPECT_TRUE(peer().unsupported_reason(gs_case(row(kRow), g, "bilinear", "border", false)).has_value());
  EXPECT_TRUE(peer().unsupported_reason(gs_case(row(kRow), g, "bilinear", "zeros", false)).has_value());
  EXPECT_TRUE(peer().unsupported_reason(gs_case(row(kRow), g, "nearest", "reflection", true)).has_value());
  std::map<std::string, int> tally;
  expect_agrees(gs_case(row(kRow), g, "nearest", "zeros", false), tally);
  expect_agrees(gs_case(row(kRow), g, "nearest", "zeros", true), tally);
}

}  // namespace
}  // namespace oplab
