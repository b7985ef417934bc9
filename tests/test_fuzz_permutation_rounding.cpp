// The permutation property on sums that cancel: relabelling reorders the subject's sums, and
// the rounding residue of a sum whose terms cancel follows the order. The property must take
// that residue (within the rounding bound of the terms) and still catch a wrong answer.
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "cli/builtin_backends.h"
#include "fuzz/properties.h"
#include "tests/property_runner.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

// Two empty boxes on a 1 x 1 input, grad_output +0.5 and -0.5, sampling ratio 3: each box's
// 9 samples all read pixel 0 with weight 1/9, so grad_input[0] = 0.5 - 0.5 = 0 exactly, from
// terms of total size 1. A float32 kernel summing 9 x (0.5/9) then 9 x (-0.5/9) leaves
// +2.2e-8 (3 x 2^-27); with the rois swapped, -2.2e-8 (the fuzz case of the Halide CPU kernel).
Case empty_boxes_case() {
  Case c;
  c.op = "ps_roi_align";
  c.params = json{{"output_size", {1, 1}}, {"sampling_ratio", 3}, {"spatial_scale", 1.0}};
  c.inputs["input"] = Tensor({1, 1, 1, 1}, 0.0);
  c.inputs["rois"] = Tensor({2, 5}, 0.0);
  Tensor g({2, 1, 1, 1});
  g.data = {0.5, -0.5};
  c.grad_output = g;
  return c;
}

// The reference, with `residue` added to grad_input[0] in the sign of the first roi's
// grad_output: the order-dependent rounding of a sum that cancels.
class Residue : public Backend {
 public:
  explicit Residue(double residue) : residue_(residue) {}
  std::string name() const override { return "residue"; }
  std::string description() const override { return "ref with an order-dependent residue, for the property tests"; }
  using Backend::run;
  Result run(const Case& c, const ValidParams&) override {
    Result r = ref_->run(c);
    if (c.grad_output && r.grads.count("input"))
      r.grads.at("input").data[0] += c.grad_output->data[0] > 0 ? residue_ : -residue_;
    return r;
  }

 private:
  double residue_;
  std::unique_ptr<Backend> ref_ = make_ref_backend();
};

fuzz::CheckResult permutation_on(Backend& subject, const Case& c) { return run_property("permutation", subject, c); }

// The residue's size: a double backend (u = 2^-53) summing terms of total size 1 may leave
// gamma_n of it; 2 u is within the bound (2 B >= 16 u (A = 1)). The relative rule alone
// failed it: |+2u - (-2u)| / (2u + max 2u) = 1.
TEST(FuzzPermutationRounding, AResidueWithinTheTermsRoundingAgrees) {
  Residue b(2 * 0x1p-53);
  const auto r = permutation_on(b, empty_boxes_case());
  EXPECT_FALSE(r.failed()) << r.detail;
}

// A residue far above any rounding of those terms: 2 B <= 16 u (n + 2C) (A + 1e-3 A) with n in
// the hundreds, about 1e-12, so 1e-9 is a wrong answer.
TEST(FuzzPermutationRounding, AResidueAboveTheRoundingFails) {
  Residue b(1e-9);
  const auto r = permutation_on(b, empty_boxes_case());
  EXPECT_TRUE(r.failed());
  EXPECT_NE(r.detail.find("grads.input (permuted case)"), std::string::npos) << r.detail;
}

// The fuzz case itself on the Halide CPU kernel (+2.2e-8 and -2.2e-8).
TEST(FuzzPermutationRounding, FuzzCaseOnHalideCpuAgrees) {
  Backend* halide = builtin_backends().find("halide-cpu");
  ASSERT_NE(halide, nullptr);
  if (auto why = halide->unavailable_reason()) GTEST_SKIP() << *why;
  const auto r = permutation_on(*halide, empty_boxes_case());
  EXPECT_FALSE(r.failed()) << r.detail;
}

}  // namespace
}  // namespace oplab
