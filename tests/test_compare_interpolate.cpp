// interpolate's bound in the comparison layer: bicubic's outer taps have negative weights, so
// the magnitude A of the bound (compare/float_compare.h) must be Σ |w_k x_k|, not the
// Σ w_k |x_k| of the signed weights, which cancels where |x| is larger at the outer taps.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "cli/builtin_backends.h"
#include "compare/float_compare.h"
#include "compare/op_compare.h"
#include "reference/ref_backend.h"
#include "tests/perturbed_backend.h"

namespace oplab {
namespace {

constexpr double kU = 1.0 / (1 << 24);

// The hand case: input [1, 1, 1, 4] upsampled to [1, 8] (scale 1/2 along W; H keeps its one
// row, t = 0, weights W(1), W(0), W(1), W(2) = 0, 1, 0, 0). Along W, src = d/2 - 1/4:
//   d = 3: src = 1.25, floor 1, t = 1/4, taps 0..3 with weights
//          W(1.25) = -27/256, W(0.25) = 225/256, W(0.75) = 67/256, W(1.75) = -9/256
//   (W(d) = 1.25|d|^3 - 2.25|d|^2 + 1 near, -0.75|d|^3 + 3.75|d|^2 - 6|d| + 3 far: e.g.
//   W(1.25) = -1.46484375 + 5.859375 - 7.5 + 3 = -0.10546875 = -27/256).
// x = [-2, 1/4, 0, 1/4]:
//   output[3]          = (54 + 56.25 - 2.25) / 256 = 108 / 256
//   Σ w_k |x_k|        = (-54 + 56.25 - 2.25) / 256 = 0   (the signed-weight magnitude)
//   Σ |w_k x_k|        = (54 + 56.25 + 2.25) / 256 = 112.5 / 256 = 0.439453125
// Every weight is a multiple of 1/256 and every x of 1/4: float32 computes every output exactly.
Case hand_case() {
  Case c;
  c.op = "interpolate";
  c.params = json{{"mode", "bicubic"}, {"size", {1, 8}}};
  Tensor x({1, 1, 1, 4});
  x.data = {-2, 0.25, 0, 0.25};
  c.inputs["input"] = x;
  return c;
}
constexpr double kHandAbsSum = 112.5 / 256;


// The op's magnitude, against the hand sums above, forward and backward. Backward: input 1 is
// read by output 0 (tap 3, t = 3/4: W(1.25) = -27/256) and output 2 (tap 2, t = 3/4:
// W(0.25) = 225/256), among others; grad_output 25/8 at 0 and 3/8 at 2, 0 elsewhere:
//   Σ w_k |g_k| = (-27 * 25/8 + 225 * 3/8) / 256 = 0, Σ |w_k g_k| = 168.75 / 256.
TEST(CompareInterpolate, BicubicMagnitudeIsTheSumOfAbsoluteTerms) {
  Case c = hand_case();
  Tensor g({1, 1, 1, 8});
  g.data = {-3.125, 0, 0.375, 0, 0, 0, 0, 0};
  c.grad_output = g;
  auto ref = make_ref_backend();
  Case m = c;  // the magnitude case of compare/float_compare.cpp: |x|, |g|
  for (double& v : m.inputs.at("input").data) v = std::fabs(v);
  for (double& v : m.grad_output->data) v = std::fabs(v);
  Result mag = evaluate(*ref, m);
  EXPECT_EQ(mag.outputs.at("output").data[3], 0.0);  // what the signed weights give
  EXPECT_EQ(mag.grads.at("input").data[1], 0.0);
  const auto exact = compare::op_compare("interpolate").magnitude;
  ASSERT_NE(exact, nullptr);
  exact(c, mag, false);
  EXPECT_DOUBLE_EQ(mag.outputs.at("output").data[3], kHandAbsSum);
  EXPECT_DOUBLE_EQ(mag.grads.at("input").data[1], 168.75 / 256);
}

// Other modes' weights are >= 0: their magnitude stays the reference's on |x|.
TEST(CompareInterpolate, OtherModesKeepTheReferenceMagnitude) {
  Case c = hand_case();
  c.params["mode"] = "bilinear";
  Result mag;
  mag.outputs["output"] = Tensor({1}, 7.0);
  compare::op_compare("interpolate").magnitude(c, mag, false);
  EXPECT_EQ(mag.outputs.at("output").data, std::vector<double>{7.0});
}

// A peer's divergence equivalent may change a tensor's shape (ONNX Runtime's size-1 origin cuts
// the input): that tensor keeps the reference's magnitude, never one of another shape.
TEST(CompareInterpolate, ATensorOfAnotherShapeKeepsTheReferenceMagnitude) {
  Result mag;
  mag.outputs["output"] = Tensor({1, 1, 1, 4}, 7.0);
  compare::op_compare("interpolate").magnitude(hand_case(), mag, false);
  EXPECT_EQ(mag.outputs.at("output").shape, (Shape{1, 1, 1, 4}));
  EXPECT_EQ(mag.outputs.at("output").data, std::vector<double>(4, 7.0));
}

// The bound of output 3, by hand: B = 8 kappa (A + 1e-3 max A), kappa = u (n + 2C) with
// n = 4 * 4 + 4 terms and C = 4 (the input's widest axis): 8 * 28 u = 224 u. A = 0.439453125;
// max A <= (Σ |W|) max |x| <= 1.375 * 2 (Σ |W| = 1 + 2 * 3/32 at most, at t = 1/2).
// A float32 kernel's error is about 1.5 u Σ |w_k x_k| (measured on fuzz cases: 1.2 to 1.9): at
// 2 u Σ |w_k x_k| it must pass. The old magnitude (0) gave a bound below
// 224 u * 1e-3 * 2.75 = 0.62 u, under that error (0.88 u): a flip of no decision ("input
// rounding"), which the flip search admits up to B + 224 u |output|, and interpolate's flip
// budget is 0, a finding.
TEST(CompareInterpolate, BicubicFloatErrorOnCancellingMagnitudePasses) {
  auto ref = make_ref_backend();
  PerturbedBackend b(2 * kU * kHandAbsSum, 3);
  const auto o = compare::compare_float_backend(*ref, b, hand_case());
  EXPECT_EQ(o.verdict, compare::Verdict::Agree) << o.detail;
}

// ... and the bound is no wider than derived: just past B it no longer agrees, and past
// B + 224 u |output| (the flip search's margin, output 108/256) it disagrees.
TEST(CompareInterpolate, BicubicErrorPastTheDerivedBoundFails) {
  auto ref = make_ref_backend();
  const double B = 224 * kU * (kHandAbsSum + 1e-3 * 1.375 * 2);
  PerturbedBackend past(1.01 * B, 3);
  EXPECT_NE(compare::compare_float_backend(*ref, past, hand_case()).verdict, compare::Verdict::Agree);
  PerturbedBackend far(1.01 * (B + 224 * kU * 108 / 256), 3);
  const auto o = compare::compare_float_backend(*ref, far, hand_case());
  EXPECT_EQ(o.verdict, compare::Verdict::Disagree) << o.detail;
  EXPECT_NE(o.detail.find("outputs.output[3]"), std::string::npos) << o.detail;
}

// A fuzz case the Halide CPU kernel failed as a "boundary flip" (input rounding) before the
// magnitude was exact: output [0, 1, 0, 0] = 0.36537964 with Σ w_k |x_k| = -1.9e-4 but
// Σ |w_k x_k| = 0.719; the kernel's error, 7.0e-8 = 1.6 u Σ |w_k x_k|, was 2.1 times the old
// bound.
TEST(CompareInterpolate, FuzzCaseOnHalideCpuAgrees) {
  Backend* halide = builtin_backends().find("halide-cpu");
  ASSERT_NE(halide, nullptr);
  if (auto why = halide->unavailable_reason()) GTEST_SKIP() << *why;
  Case c;
  c.op = "interpolate";
  c.params = json{{"mode", "bicubic"}, {"scale_factor", 2.5}, {"recompute_scale_factor", true}};
  Tensor x({1, 2, 2, 5});
  x.data = {1.75, 0.0, 0.0, 0.5142590909675571, 0.3207010109769546, 1.75, 0.10830578123036316,
            2.0, -0.5, 0.5371937809339768, 0.24821566703035636, -1.5, 1.322796279750441, -0.3468540767401196,
            1.039551721461645, 1.119386757425799, 1.1343738690218217, 1.25, 0.7152744587030924, 1.2217462873992146};
  c.inputs["input"] = x;
  auto ref = make_ref_backend();
  const auto o = compare::compare_float_backend(*ref, *halide, c);
  EXPECT_EQ(o.verdict, compare::Verdict::Agree) << o.detail;
}

}  // namespace
}  // namespace oplab
