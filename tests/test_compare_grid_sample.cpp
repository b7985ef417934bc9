// grid_sample's bound in the comparison layer: bicubic's outer taps have negative weights, so
// the magnitude A of the bound (compare/float_compare.h) must be Σ |w_k x_k|, not the
// Σ w_k |x_k| of the signed weights, which cancels where |x| is larger at the outer taps.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "cli/builtin_backends.h"
#include "compare/float_compare.h"
#include "compare/op_compare.h"
#include "reference/ref_backend.h"
#include "tests/perturbed_backend.h"

namespace oplab {
namespace {

constexpr double kU = 1.0 / (1 << 24);

// Cubic weights W(d) (A = -0.75) and slopes W'(d) at the distances below, by hand:
//   W(d) = 1.25|d|^3 - 2.25|d|^2 + 1 (|d| <= 1), -0.75|d|^3 + 3.75|d|^2 - 6|d| + 3 (1 < |d| < 2)
//   W(1.25) = -27/256, W(0.25) = 225/256, W(0.75) = 67/256, W(1.75) = -9/256,
//   W(0.5) = 152/256, W(1.5) = -24/256, W(0) = 1, W(1) = W(2) = 0;
//   W'(d) = sign(d) (3.75|d| - 4.5)|d| near, sign(d) ((-2.25|d| + 7.5)|d| - 6) far:
//   W'(1.25) = -36/256, W'(0.25) = -228/256, W'(-0.75) = 324/256, W'(-1.75) = -60/256.
//
// The hand case: input [1, 1, 1, 4], one grid position (x, y) = (-0.125, 0), align_corners
// false. x = ((-0.125 + 1) 4 - 1) / 2 = 1.25: floor 1, taps 0..3 at distances 1.25, 0.25,
// -0.75, -1.75. y = 0 on the one row: t = 0, only tap 0 (weight 1) reads the image, the others
// weigh 0 (and lie outside it). pixels x = [-2, 1/4, 0, 1/4]:
//   output       = (54 + 56.25 + 0 - 2.25) / 256 = 108 / 256
//   Σ w_k |x_k|  = (-54 + 56.25 - 2.25) / 256 = 0   (the reference on the magnitude case)
//   Σ |w_k x_k|  = (54 + 56.25 + 2.25) / 256 = 112.5 / 256
// Every weight is a multiple of 1/256 and every x of 1/4: float32 computes the output exactly.
Case hand_case(const char* padding = "zeros") {
  Case c;
  c.op = "grid_sample";
  c.params = json{{"mode", "bicubic"}, {"padding_mode", padding}, {"align_corners", false}};
  Tensor x({1, 1, 1, 4});
  x.data = {-2, 0.25, 0, 0.25};
  c.inputs["input"] = x;
  Tensor g({1, 1, 1, 2});
  g.data = {-0.125, 0};
  c.inputs["grid"] = g;
  return c;
}
constexpr double kHandAbsSum = 112.5 / 256;

// The magnitude case of compare/float_compare.cpp: |x|, |g|, the grid unchanged.
Result reference_magnitude(const Case& c) {
  Case m = c;
  for (double& v : m.inputs.at("input").data) v = std::fabs(v);
  if (m.grad_output)
    for (double& v : m.grad_output->data) v = std::fabs(v);
  return evaluate(*make_ref_backend(), m);
}

// Forward and both gradients of the hand case with grad_output -3. grad_input: 3 |w_k| per
// pixel. grad_grid along x: f = W / 2 = 2 times Σ |x_k| |W'_k| |g| = 2 * 3 * (2 * 36 + 0.25 *
// 228 + 0 * 324 + 0.25 * 60) / 256 = 864 / 256; along y, the one tap's slope W'(0) = 0 and the
// others lie outside: 0. (The signed sums: Σ W'_k x_k = (72 - 57 - 15) / 256 = 0.)
TEST(CompareGridSample, BicubicMagnitudeIsTheSumOfAbsoluteTerms) {
  Case c = hand_case();
  c.grad_output = Tensor({1, 1, 1, 1}, -3.0);
  Result mag = reference_magnitude(c);
  EXPECT_EQ(mag.outputs.at("output").data[0], 0.0);                 // what the signed weights give
  EXPECT_DOUBLE_EQ(mag.grads.at("input").data[0], -3.0 * 27 / 256);  // a negative weight
  const auto exact = compare::op_compare("grid_sample").magnitude;
  ASSERT_NE(exact, nullptr);
  exact(c, mag, false);
  EXPECT_DOUBLE_EQ(mag.outputs.at("output").data[0], kHandAbsSum);
  const std::vector<double> gin = {3.0 * 27 / 256, 3.0 * 225 / 256, 3.0 * 67 / 256, 3.0 * 9 / 256};
  for (size_t i = 0; i < gin.size(); ++i) EXPECT_DOUBLE_EQ(mag.grads.at("input").data[i], gin[i]) << i;
  EXPECT_DOUBLE_EQ(mag.grads.at("grid").data[0], 864.0 / 256);
  EXPECT_EQ(mag.grads.at("grid").data[1], 0.0);
}

// The padding modes' taps, as the reference takes them. Grid x = -1: x = (0 * 4 - 1) / 2 =
// -0.5, floor -1, t = 1/2, taps -2, -1, 0, 1 weighing -24, 152, 152, -24 (/256); pixels
// x = [1, 2, 0, 0]:
//   zeros: taps -2, -1 read nothing:           (152 * 1 + 24 * 2) / 256 = 200 / 256
//   border: -2, -1 clamp to 0, two more terms:  ((24 + 152 + 152) * 1 + 24 * 2) / 256 = 376 / 256
//   reflection about [-0.5, 3.5]: -2 -> 1, -1 -> 0: ((152 + 152) * 1 + (24 + 24) * 2) / 256 = 400 / 256
TEST(CompareGridSample, BicubicMagnitudeFollowsThePaddingsTaps) {
  for (auto [padding, want] : {std::pair<const char*, double>{"zeros", 200.0 / 256}, {"border", 376.0 / 256},
                               {"reflection", 400.0 / 256}}) {
    Case c = hand_case(padding);
    c.inputs.at("input").data = {1, 2, 0, 0};
    c.inputs.at("grid").data = {-1, 0};
    Result mag = reference_magnitude(c);
    compare::op_compare("grid_sample").magnitude(c, mag, false);
    EXPECT_DOUBLE_EQ(mag.outputs.at("output").data[0], want) << padding;
  }
}

// bilinear's weights are >= 0: its magnitude stays the reference's on |x|.
TEST(CompareGridSample, OtherModesKeepTheReferenceMagnitude) {
  Case c = hand_case();
  c.params["mode"] = "bilinear";
  Result mag;
  mag.outputs["output"] = Tensor({1, 1, 1, 1}, 7.0);
  compare::op_compare("grid_sample").magnitude(c, mag, false);
  EXPECT_EQ(mag.outputs.at("output").data, std::vector<double>{7.0});
}


// The bound of the output, by hand: B = 8 kappa (A + 1e-3 A) (one element: max A = A),
// kappa = u (n + 2C) with n = 16 + 4 terms and C = 4 (the input's widest axis; |grid| <= 1):
// 8 * 28 u = 224 u. A float32 kernel's error of 2 u Σ |w_k x_k| must pass. With the signed
// magnitude (0) the bound was 1e-30: a flip of no decision ("input rounding"), not agreement.
TEST(CompareGridSample, BicubicFloatErrorOnCancellingMagnitudePasses) {
  auto ref = make_ref_backend();
  PerturbedBackend b(2 * kU * kHandAbsSum, 0);
  const auto o = compare::compare_float_backend(*ref, b, hand_case());
  EXPECT_EQ(o.verdict, compare::Verdict::Agree) << o.detail;
}

// ... and no wider than derived: just past B it no longer agrees, and past B + 224 u |output|
// (the flip search's margin, output 108/256) it disagrees.
TEST(CompareGridSample, BicubicErrorPastTheDerivedBoundFails) {
  auto ref = make_ref_backend();
  const double B = 224 * kU * kHandAbsSum * 1.001;
  PerturbedBackend past(1.01 * B, 0);
  EXPECT_NE(compare::compare_float_backend(*ref, past, hand_case()).verdict, compare::Verdict::Agree);
  PerturbedBackend far(1.01 * (B + 224 * kU * 108 / 256), 0);
  const auto o = compare::compare_float_backend(*ref, far, hand_case());
  EXPECT_EQ(o.verdict, compare::Verdict::Disagree) << o.detail;
}

// A fuzz case the Halide CPU kernel failed before the magnitude was exact: one position at
// x = ((1 - 1e-9) 3 - 1) / 2 ~ 1 on a [1, 3] row, y = -1/2 on a one-row input (zeros). Output
// 5.337031e-12 (ref) with Σ w_k |x_k| = 5.3e-12 but Σ |w_k x_k| = 4.06e-10; the kernel's error
// 1.34e-16 = 5.5 u Σ |w_k x_k| was 2 times the old bound (6.6e-17).
TEST(CompareGridSample, FuzzCaseOnHalideCpuAgrees) {
  Backend* halide = builtin_backends().find("halide-cpu");
  ASSERT_NE(halide, nullptr);
  if (auto why = halide->unavailable_reason()) GTEST_SKIP() << *why;
  Case c;
  c.op = "grid_sample";
  c.params = json{{"mode", "bicubic"}, {"padding_mode", "zeros"}, {"align_corners", false}};
  Tensor x({1, 1, 1, 3});
  x.data = {0.307769775390625, 0.0, 0.29977989196777344};
  c.inputs["input"] = x;
  Tensor g({1, 1, 1, 2});
  g.data = {-1e-09, -1.0};
  c.inputs["grid"] = g;
  c.grad_output = Tensor({1, 1, 1, 1}, 0.0);
  auto ref = make_ref_backend();
  const auto o = compare::compare_float_backend(*ref, *halide, c);
  EXPECT_EQ(o.verdict, compare::Verdict::Agree) << o.detail;
}

// A fuzz case: bicubic, reflection, input [1, 1, 2, 3] with a NaN at row 0, column 2; grid
// position 1 at (x, y) = (-2/3 in float64, 1). With the float64 grid c_x = 0 exactly: taps
// -1..2, column 2 read with weight and slope 0 (|d| = 2), so the reference's y-gradient of
// position 1 is NaN (0 x NaN). With the grid as float32 (-0.6666667), c_x = -3e-8: taps -2..1,
// reflected to columns 1, 0, 0, 1, never column 2; there the reference gives -1.0e-17 (a double
// sum of terms that cancel) and a float32 kernel 0. The case's bound on its NaN element is only
// the tensor's floor (1e-30, every element of grads.grid is NaN): the run on the float32 grid
// must be held to its own magnitude's bound.
Case nan_pixel_reflection_case() {
  Case c;
  c.op = "grid_sample";
  c.params = json{{"mode", "bicubic"}, {"padding_mode", "reflection"}, {"align_corners", false}};
  Tensor x({1, 1, 2, 3});
  x.data = {0.0, 0.0, NAN, 0.5, 0.25, 0.0};
  c.inputs["input"] = x;
  Tensor g({1, 1, 2, 2});
  g.data = {1.0, -1.0, -0.6666666666666666, 1.0};
  c.inputs["grid"] = g;
  c.grad_output = Tensor({1, 1, 1, 2}, 0.0);
  c.grad_output->data = {0.0, 0.25};
  return c;
}

// The reference on the float32-rounded case (a float32 kernel that takes the reference's
// decisions), with `delta` added to grads.grid[3].
class RoundedReference : public Backend {
 public:
  explicit RoundedReference(double delta) : delta_(delta) {}
  std::string name() const override { return "rounded-reference"; }
  std::string description() const override { return "test double: the reference on the float32-rounded case"; }
  bool is_float32() const override { return true; }
  bool geometry_as_reference() const override { return true; }
  using Backend::run;
  Result run(const Case& c, const ValidParams&) override {
    Result r = ref_->run(compare::float_rounded_case(c));
    r.grads.at("grid").data.at(3) += delta_;
    return r;
  }

 private:
  std::unique_ptr<Backend> ref_ = make_ref_backend();
  double delta_;
};

TEST(CompareGridSample, NanElementIsJudgedOnTheRoundedRunsOwnBound) {
  auto ref = make_ref_backend();
  const Case c = nan_pixel_reflection_case();
  ASSERT_TRUE(std::isnan(evaluate(*ref, c).grads.at("grid").data[3]));
  const double rounded = evaluate(*ref, compare::float_rounded_case(c)).grads.at("grid").data[3];
  ASSERT_TRUE(std::isfinite(rounded));
  ASSERT_LT(std::fabs(rounded), 1e-16);
  RoundedReference exact(0.0), kernel_zero(-rounded), wrong(1e-3);
  EXPECT_NE(compare::compare_float_backend(*ref, exact, c).verdict, compare::Verdict::Disagree);
  const auto zero = compare::compare_float_backend(*ref, kernel_zero, c);
  EXPECT_NE(zero.verdict, compare::Verdict::Disagree) << zero.detail;
  const auto off = compare::compare_float_backend(*ref, wrong, c);
  EXPECT_EQ(off.verdict, compare::Verdict::Disagree) << off.detail;
  Backend* halide = builtin_backends().find("halide-cpu");
  ASSERT_NE(halide, nullptr);
  if (auto why = halide->unavailable_reason()) GTEST_SKIP() << *why;
  const auto o = compare::compare_float_backend(*ref, *halide, c);
  EXPECT_NE(o.verdict, compare::Verdict::Disagree) << o.detail;
}

}  // namespace
}  // namespace oplab
