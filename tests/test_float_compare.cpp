// The float32 comparison itself: it must pass float rounding, call a result computed from
// coordinates a few ulps away a boundary flip (not a pass), and fail a real error.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "compare/float_compare.h"
#include "core/limits.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

// A backend that runs the reference on a transformed case and/or edits the result.
class FakeFloatBackend : public Backend {
 public:
  FakeFloatBackend(std::function<Case(Case)> on_case, std::function<void(Result&)> on_result)
      : on_case_(std::move(on_case)), on_result_(std::move(on_result)) {}
  std::string name() const override { return "fake-float"; }
  std::string description() const override { return "test double"; }
  using Backend::run;
  Result run(const Case& c, const ValidParams&) override {
    Result r = ref_->run(on_case_(c));
    for (auto* m : {&r.outputs, &r.grads})
      for (auto& [k, t] : *m)
        for (double& v : t.data) v = double(float(v));  // stored as float32
    on_result_(r);
    return r;
  }

 private:
  std::unique_ptr<Backend> ref_ = make_ref_backend();
  std::function<Case(Case)> on_case_;
  std::function<void(Result&)> on_result_;
};

// roi_align over a 1x1x4x4 ramp; the box puts a sample exactly on y = -1 (the range cut-off):
// aligned=false, y1 = -1.5, y2 = 0.5 (rh = 2, one bin, fixed grid 2 -> samples at -1.0, 0.0).
Case cutoff_case() {
  Case c;
  c.op = "roi_align";
  c.params = json{{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", 2}, {"aligned", false}};
  Tensor x({1, 1, 4, 4});
  for (int i = 0; i < 16; ++i) x.data[size_t(i)] = 1 + i;
  c.inputs["input"] = x;
  Tensor rois({1, 5});
  rois.data = {0, 0.25, -1.5, 2.25, 0.5};
  c.inputs["rois"] = rois;
  return c;
}

// roi_align with 5000 x 5000 samples per bin on a 1x1 image of ones: 25 M terms, so the float32
// bound u (n + 2C) x 8 admits more than the answer itself. A kernel whose float32 sum stalls at
// 2^24 (0.671 instead of 1) must not pass: the case is no evidence, a verdict of its own
// ("precision-exhausted", SPEC §15), neither agreement nor silently skipped.
TEST(FloatCompare, AVacuousBoundIsNoEvidenceNotAPass) {
  set_limits_enforced(false);  // the resource policy refuses such a case before any work
  Case c;
  c.op = "roi_align";
  c.params = json{{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", 5000}, {"aligned", false}};
  Tensor x({1, 1, 1, 1}, 1.0);
  c.inputs["input"] = x;
  Tensor rois({1, 5});
  rois.data = {0, 0, 0, 1, 1};
  c.inputs["rois"] = rois;
  auto ref = make_ref_backend();
  FakeFloatBackend stalled([](Case c) { return c; }, [](Result& r) { r.outputs.at("output").data[0] *= 0.671; });
  const auto o = compare::compare_float_backend(*ref, stalled, c);
  set_limits_enforced(true);
  EXPECT_EQ(o.verdict, compare::Verdict::PrecisionExhausted) << o.detail;
  EXPECT_NE(o.detail.find("precision exhausted"), std::string::npos) << o.detail;
}

TEST(FloatCompare, FloatRoundingPasses) {
  auto ref = make_ref_backend();
  FakeFloatBackend b([](Case c) { return c; }, [](Result&) {});
  const auto o = compare::compare_float_backend(*ref, b, cutoff_case());
  EXPECT_EQ(o.verdict, compare::Verdict::Agree) << o.detail;
}

TEST(FloatCompare, CoordinatesAFewUlpsAwayAreAFlipNotAPass) {
  auto ref = make_ref_backend();
  // The box starts one float32 ulp lower: the sample at y = -1 falls just outside (value 0).
  FakeFloatBackend b(
      [](Case c) {
        c.inputs["rois"].at(0, 2) = double(std::nextafter(-1.5f, -2.0f));
        return c;
      },
      [](Result&) {});
  const Case c = cutoff_case();
  EXPECT_NE(evaluate(*ref, c).outputs.at("output").data[0], b.run(c).outputs.at("output").data[0]);
  const auto o = compare::compare_float_backend(*ref, b, c);
  EXPECT_EQ(o.verdict, compare::Verdict::BoundaryFlip) << o.detail;
}

TEST(FloatCompare, ARealErrorFails) {
  auto ref = make_ref_backend();
  FakeFloatBackend b([](Case c) { return c; }, [](Result& r) { r.outputs.at("output").data[0] *= 1.0001; });
  const auto o = compare::compare_float_backend(*ref, b, cutoff_case());
  EXPECT_EQ(o.verdict, compare::Verdict::Disagree);
  EXPECT_NE(o.detail.find("outputs.output[0]"), std::string::npos) << o.detail;
}

TEST(FloatCompare, NanWhereTheReferenceHasANumberFails) {
  auto ref = make_ref_backend();
  FakeFloatBackend b([](Case c) { return c; }, [](Result& r) { r.outputs.at("output").data[0] = NAN; });
  EXPECT_EQ(compare::compare_float_backend(*ref, b, cutoff_case()).verdict, compare::Verdict::Disagree);
}


// deform_conv2d, one 1x1 tap, input row [0.5, 2] padded by one column each side: output column
// 0 samples x = -1 + Δx. With Δx = -1e-9 the double sample lies just outside (x < -1, value
// and gradients 0), while float32 rounds -1 + Δx to exactly -1.0f, inside, where the
// right-sided d/dx is (1 - ly) * X[0,0] = 0.75 * 0.5. The flip check must see this: float32
// rounds the point relative to the tap position, not relative to the tiny offset.
Case dcn_tap_case(double dx0) {
  Case c;
  c.op = "deform_conv2d";
  c.params = json{{"stride", {1, 1}}, {"padding", {0, 1}}, {"dilation", {1, 1}}};
  Tensor x({1, 1, 1, 2});
  x.data = {0.5, 2};
  c.inputs["input"] = x;
  Tensor w({1, 1, 1, 1});
  w.data = {1};
  c.inputs["weight"] = w;
  Tensor off({1, 2, 1, 4});
  off.data = {0.25, 0.25, 0.25, 0.25, dx0, 0.5, 0.5, 0.5};  // Δy of the 4 outputs, then Δx
  c.inputs["offset"] = off;
  Tensor g({1, 1, 1, 4});
  g.data = {1, 1, 1, 1};
  c.grad_output = g;
  return c;
}

TEST(FloatCompare, DcnOffsetRoundedOntoTheTapIsAFlip) {
  auto ref = make_ref_backend();
  const Case c = dcn_tap_case(-1e-9);
  FakeFloatBackend b([](Case c) { c.inputs["offset"].data[4] = 0; return c; }, [](Result&) {});
  ASSERT_EQ(evaluate(*ref, c).grads.at("offset").data[4], 0.0);
  ASSERT_EQ(b.run(c).grads.at("offset").data[4], 0.375);
  const auto o = compare::compare_float_backend(*ref, b, c);
  EXPECT_EQ(o.verdict, compare::Verdict::BoundaryFlip) << o.detail;
}

TEST(FloatCompare, OffsetGradientBoundCountsBothPixels) {
  // d/dx between pixels 1000 and 1000.5 is 0.5: a one-ulp float32 error of a value of 1000
  // (6.1e-5) is within the bound of the sum of |terms| (~2000), though 1e-4 of the result.
  auto ref = make_ref_backend();
  Case c = dcn_tap_case(0.5);
  c.inputs["input"].data = {1000, 1000.5};
  FakeFloatBackend ulp([](Case c) { return c; }, [](Result& r) { r.grads.at("offset").data[5] += 1000.0 * 0x1p-23; });
  EXPECT_EQ(compare::compare_float_backend(*ref, ulp, c).verdict, compare::Verdict::Agree);
  // A tenth of a pixel value off is not rounding.
  FakeFloatBackend wrong([](Case c) { return c; }, [](Result& r) { r.grads.at("offset").data[5] += 100.0; });
  EXPECT_EQ(compare::compare_float_backend(*ref, wrong, c).verdict, compare::Verdict::Disagree);
}

// ms_deform_attn, two levels, one point each, a = 1, grad_output 1: level 0 is 1x2 with the
// point at pixel x = 0.5, y = 0 (loc (0.5, 0.5)); level 1 is 2x1 (value rows 2, 3) with the
// point at x = 0, y = 0.5. Value rows [1000, 1000.5] on both, so d/dx of point 0 and d/dy of
// point 1 are differences of two pixels of about 1000.
Case msda_pair_case() {
  Case c;
  c.op = "ms_deform_attn";
  Tensor shapes({2, 2}), starts({2}), value({1, 4, 1, 1}), loc({1, 1, 1, 2, 1, 2}), aw({1, 1, 1, 2, 1}), g({1, 1, 1});
  shapes.data = {1, 2, 2, 1};
  starts.data = {0, 2};
  value.data = {1000, 1000.5, 1000, 1000.5};
  loc.data = {0.5, 0.5, 0.5, 0.5};
  aw.data = {1, 1};
  g.data = {1};
  c.inputs = {{"value", value}, {"spatial_shapes", shapes}, {"level_start_index", starts},
              {"sampling_locations", loc}, {"attention_weights", aw}};
  c.grad_output = g;
  return c;
}

TEST(FloatCompare, MsdaLocationGradientBoundCountsBothPixels) {
  // d/dx of point 0 is W (1000.5 - 1000) = 1 and d/dy of point 1 is H (1000.5 - 1000) = 1,
  // while their terms sum to W (1000 + 1000.5) = 4001 (H likewise): an error of a float32
  // ulp of 1000 times the level's size is rounding. With the bound from |value| alone
  // (differences 0.5) it fails; rows and columns of alternating sign state the terms (each
  // level's own rows and columns: level 1 starts at value row 2).
  auto ref = make_ref_backend();
  const Case c = msda_pair_case();
  ASSERT_EQ(evaluate(*ref, c).grads.at("sampling_locations").data[0], 1.0);
  ASSERT_EQ(evaluate(*ref, c).grads.at("sampling_locations").data[3], 1.0);
  for (size_t i : {0, 3}) {
    FakeFloatBackend ulp([](Case c) { return c; },
                         [i](Result& r) { r.grads.at("sampling_locations").data[i] += 2 * 1000.0 * 0x1p-23; });
    EXPECT_EQ(compare::compare_float_backend(*ref, ulp, c).verdict, compare::Verdict::Agree) << "element " << i;
    // A tenth of a pixel value off is not rounding.
    FakeFloatBackend wrong([](Case c) { return c; },
                           [i](Result& r) { r.grads.at("sampling_locations").data[i] += 200.0; });
    EXPECT_EQ(compare::compare_float_backend(*ref, wrong, c).verdict, compare::Verdict::Disagree) << "element " << i;
  }
}

TEST(FloatCompare, RoiAlignMaxTieWinnerIsAFlip) {
  // A constant map: the 2 x 2 samples of the single bin tie exactly, the reference's winner is
  // the first (0.75, 0.75). A backend whose rounding favours the last sample sends the
  // gradient to other pixels: a legitimate flip among tied samples, not an error.
  auto ref = make_ref_backend();
  Case c;
  c.op = "roi_align";
  c.params = json{{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", 2}, {"aligned", false},
                  {"pool_mode", "max"}};
  c.inputs["input"] = Tensor({1, 1, 4, 4}, 1.0);
  Tensor rois({1, 5});
  rois.data = {0, 0, 0, 3, 3};
  c.inputs["rois"] = rois;
  Tensor g({1, 1, 1, 1});
  g.data = {1};
  c.grad_output = g;
  FakeFloatBackend last_wins([](Case c) { c.inputs["input"].at(0, 0, 3, 3) += 1e-9; return c; }, [](Result&) {});
  ASSERT_NE(evaluate(*ref, c).grads.at("input").data[0], last_wins.run(c).grads.at("input").data[0]);
  EXPECT_EQ(compare::compare_float_backend(*ref, last_wins, c).verdict, compare::Verdict::BoundaryFlip);
  // The same routing on a map without ties is wrong.
  for (int i = 0; i < 16; ++i) c.inputs["input"].data[size_t(i)] = 1 + i;
  FakeFloatBackend first_wins([](Case c) { for (int i = 0; i < 16; ++i) c.inputs["input"].data[size_t(i)] = 16 - i; return c; },
                              [](Result&) {});
  EXPECT_EQ(compare::compare_float_backend(*ref, first_wins, c).verdict, compare::Verdict::Disagree);
}

}  // namespace
}  // namespace oplab
