// The dcn-zero-offset-conv identity on a sum that cancels: deform_conv2d with zero offsets and
// plain conv2d sum the same products in other orders, and a float32 kernel's rounding residue
// on a gradient whose terms cancel is larger than the relative rule allows. The identity must
// take a residue within the rounding bound of the terms and still catch a wrong answer.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>

#include "cli/builtin_backends.h"
#include "fuzz/properties.h"
#include "tests/property_runner.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

// A 1x1 weight over two pixels: grad_weight = x0 g0 + x1 g1
//   = -0.1790943 * 0.2342777 + 0.25 * 0.1677952 = -0.0419576... + 0.0419488 = -9.0133e-6,
// from terms of total size 0.0839 (the shrunk fuzz case; the Halide CPU kernel gave -9.0115e-6,
// 1.8e-9 away, where the relative rule to |r| + max |r| allowed 1.80e-9).
Case cancelling_case() {
  Case c;
  c.op = "deform_conv2d";
  c.params = json{{"stride", {1, 1}}, {"padding", {0, 0}}, {"dilation", {1, 1}}};
  Tensor x({1, 1, 1, 2});
  x.data = {-0.1790943, 0.25};
  c.inputs["input"] = x;
  Tensor w({1, 1, 1, 1});
  w.data = {1};
  c.inputs["weight"] = w;
  c.inputs["offset"] = Tensor({1, 2, 1, 2}, 0.0);
  Tensor g({1, 1, 1, 2});
  g.data = {0.2342777, 0.1677952};
  c.grad_output = g;
  return c;
}

// The reference as a float32 backend, with `residue` added to grad_weight[0].
class Residue : public Backend {
 public:
  explicit Residue(double residue) : residue_(residue) {}
  std::string name() const override { return "residue"; }
  std::string description() const override { return "ref with a residue on grad_weight, for the property tests"; }
  bool is_float32() const override { return true; }
  using Backend::run;
  Result run(const Case& c, const ValidParams&) override {
    Result r = ref_->run(c);
    if (r.grads.count("weight")) r.grads.at("weight").data[0] += residue_;
    return r;
  }

 private:
  double residue_;
  std::unique_ptr<Backend> ref_ = make_ref_backend();
};

fuzz::CheckResult identity_on(Backend& subject, const Case& c) { return run_property("dcn-zero-offset-conv", subject, c); }

// The measured residue, 1.8e-9 (0.36 u of the terms' 0.0839 with u = 2^-24): just past the
// relative rule (1e-4 x (9.0e-6 + 9.0e-6) = 1.80e-9), far inside the rounding bound
// 2 B = 2 x 8 u (n + 2C) A, about 3e-7 for n = 2 terms.
TEST(FuzzIdentityRounding, AResidueWithinTheTermsRoundingAgrees) {
  Residue b(1.9e-9);
  const auto r = identity_on(b, cancelling_case());
  EXPECT_FALSE(r.failed()) << r.detail;
}

// A wrong gradient: off by 1e-5, past 2 B (and by more than the whole true value).
TEST(FuzzIdentityRounding, AResidueAboveTheRoundingFails) {
  Residue b(1e-5);
  const auto r = identity_on(b, cancelling_case());
  EXPECT_TRUE(r.failed());
  EXPECT_NE(r.detail.find("grads.weight (vs conv2d)"), std::string::npos) << r.detail;
}

// The case on the Halide CPU kernel.
TEST(FuzzIdentityRounding, CancellingCaseOnHalideCpuAgrees) {
  Backend* halide = builtin_backends().find("halide-cpu");
  ASSERT_NE(halide, nullptr);
  if (auto why = halide->unavailable_reason()) GTEST_SKIP() << *why;
  const auto r = identity_on(*halide, cancelling_case());
  EXPECT_FALSE(r.failed()) << r.detail;
}

}  // namespace
}  // namespace oplab
