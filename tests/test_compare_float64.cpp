// The double comparison (compare/differential.h) on elements whose terms cancel: two double
// backends that sum the same terms in another order differ by rounding of Σ |w_k x_k|, which
// the relative rule cannot judge when the whole tensor is that rounding. The element's double
// rounding bound decides there; a real difference still fails.
#include <gtest/gtest.h>

#include <cmath>

#include "compare/differential.h"
#include "compare/float_compare.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

// The hand case: area, 1-D, input [-0.5, 0.75, -0.25], scale 0.5: output size floor(3 * 0.5) = 1,
// one bin [0, 3) of weight w = fl(1/3) = 6004799503160661 / 2^54 (1/3 - 2^-54 / 3).
//   exact mean                      (-0.5 + 0.75 - 0.25) / 3 = 0   (PyTorch sums, then divides)
//   Σ x_k w in order (the reference) -w/2 exact, + fl(3w/4), - w/4 exact: 3w/4 = (2^54 - 1) / 2^56
//                                   needs 54 bits and rounds up to 2^54 / 2^56, so the sum is
//                                   fl(3w/4) - 3w/4 = 2^-56 (1.39e-17)
//   Σ |w_k x_k|                     (0.5 + 0.75 + 0.25) / 3 = 0.5
// Its double rounding bound (SPEC §9's B_i with u = 2^-53): n = ceil(3 / 1) + 1 terms of the
// bin + 4 = 8 (compare/ops/interpolate.cpp), C = 3 (the input's width), one element, so
// max A = A = 0.5:  B = 8 * 2^-53 * (8 + 2 * 3) * (0.5 + 1e-3 * 0.5) = 6.22e-15.
Case area_case(std::vector<double> x) {
  Case c;
  c.op = "interpolate";
  c.params = json{{"mode", "area"}, {"scale_factor", {0.5}}, {"recompute_scale_factor", nullptr}};
  Tensor t({1, 1, 3});
  t.data = std::move(x);
  c.inputs["input"] = t;
  return c;
}
const double kHandBound = 8 * 0x1p-53 * (8 + 2 * 3) * (0.5 + 1e-3 * 0.5);

// A double backend answering a fixed output (what a peer summing in another order gives).
class FixedBackend : public Backend {
 public:
  explicit FixedBackend(double value) : value_(value) {}
  std::string name() const override { return "fixed"; }
  std::string description() const override { return "test double: one fixed output value"; }
  using Backend::run;
  Result run(const Case&, const ValidParams&) override {
    Result r;
    Tensor t({1, 1, 1});
    t.data = {value_};
    r.outputs["output"] = t;
    return r;
  }

 private:
  double value_;
};

compare::Outcome judge(double peer_value, const Case& c) {
  auto ref = make_ref_backend();
  FixedBackend peer(peer_value);
  return compare::compare_on_case(*ref, peer, c, compare::Tolerance{}, {});
}

TEST(CompareFloat64, ReferenceSumsTheHandCaseToTwoToTheMinus56) {
  auto ref = make_ref_backend();
  EXPECT_EQ(evaluate(*ref, area_case({-0.5, 0.75, -0.25})).outputs.at("output").data[0], 0x1p-56);
}

TEST(CompareFloat64, BoundOfTheHandCase) {
  auto ref = make_ref_backend();
  const Case c = area_case({-0.5, 0.75, -0.25});
  const Result want = evaluate(*ref, c);
  const auto bounds = compare::element_bounds(*ref, c, want, 0x1p-53, compare::kDefaultBoundMultiple,
                                              [](Backend& b, const Case& x) { return evaluate(b, x); });
  ASSERT_TRUE(bounds.count("outputs.output"));
  EXPECT_NEAR(bounds.at("outputs.output").data[0], kHandBound, 1e-12 * kHandBound);
}

// PyTorch's exact 0 against the reference's 2^-56: the tensor is that one element, so the
// relative rule divides 2^-56 by 2 * 2^-56; the terms' rounding bound admits it.
TEST(CompareFloat64, CancellingSumInAnotherOrderAgrees) {
  const compare::Outcome o = judge(0.0, area_case({-0.5, 0.75, -0.25}));
  EXPECT_EQ(o.verdict, compare::Verdict::Agree) << o.detail;
  EXPECT_LE(o.max_rel, compare::Tolerance{}.rtol);
}

// The bound is the element's, not a loosened rtol: just inside passes, just outside fails, and
// a difference of 1e-13 (16 times the bound, far below 1e-10 of anything but the noise) fails.
TEST(CompareFloat64, DifferenceBeyondTheRoundingBoundFails) {
  const Case c = area_case({-0.5, 0.75, -0.25});
  EXPECT_EQ(judge(0x1p-56 + 0.9 * kHandBound, c).verdict, compare::Verdict::Agree);
  EXPECT_EQ(judge(0x1p-56 + 1.1 * kHandBound, c).verdict, compare::Verdict::Disagree);
  EXPECT_EQ(judge(0x1p-56 - 1.1 * kHandBound, c).verdict, compare::Verdict::Disagree);
  EXPECT_EQ(judge(1e-13, c).verdict, compare::Verdict::Disagree);
}

// Where nothing cancels the relative rule is the looser one and stays in force: [1, 2, 3] has
// the mean 2, 1e-10 * (2 + 2) = 4e-10 admits 3e-10 and rejects 1e-9 (its rounding bound,
// 8 * 2^-53 * 14 * 2.002 = 2.5e-14, would reject both).
TEST(CompareFloat64, NonCancellingElementKeepsTheRelativeRule) {
  const Case c = area_case({1, 2, 3});
  EXPECT_EQ(judge(2 + 3e-10, c).verdict, compare::Verdict::Agree);
  EXPECT_EQ(judge(2 + 1e-9, c).verdict, compare::Verdict::Disagree);
}

}  // namespace
}  // namespace oplab
