// The float32 comparison itself: it must pass float rounding, call a result computed from
// coordinates a few ulps away a boundary flip (not a pass), and fail a real error.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "fuzz/float_compare.h"
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
  Result run(const Case& c) override {
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

TEST(FloatCompare, FloatRoundingPasses) {
  auto ref = make_ref_backend();
  FakeFloatBackend b([](Case c) { return c; }, [](Result&) {});
  const auto o = fuzz::compare_float_backend(*ref, b, cutoff_case());
  EXPECT_EQ(o.kind, fuzz::FloatOutcome::Pass) << o.detail;
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
  const auto o = fuzz::compare_float_backend(*ref, b, c);
  EXPECT_EQ(o.kind, fuzz::FloatOutcome::Flip) << o.detail;
}

TEST(FloatCompare, ARealErrorFails) {
  auto ref = make_ref_backend();
  FakeFloatBackend b([](Case c) { return c; }, [](Result& r) { r.outputs.at("output").data[0] *= 1.0001; });
  const auto o = fuzz::compare_float_backend(*ref, b, cutoff_case());
  EXPECT_EQ(o.kind, fuzz::FloatOutcome::Fail);
  EXPECT_NE(o.detail.find("outputs.output[0]"), std::string::npos) << o.detail;
}

TEST(FloatCompare, NanWhereTheReferenceHasANumberFails) {
  auto ref = make_ref_backend();
  FakeFloatBackend b([](Case c) { return c; }, [](Result& r) { r.outputs.at("output").data[0] = NAN; });
  EXPECT_EQ(fuzz::compare_float_backend(*ref, b, cutoff_case()).kind, fuzz::FloatOutcome::Fail);
}

}  // namespace
}  // namespace oplab
