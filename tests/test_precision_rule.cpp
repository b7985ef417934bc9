// The precision rule of SPEC §15 (docs/spec.md §15, docs/protocol.md "Judging by dtype"): a
// kernel is judged at the precision it declares, by one judge (compare/judge.h). Checked on
// torch's own kernels in float32 and float16 (the kernels people ship, through the
// torchvision-f32/-f16 backends) and on test doubles; each expectation is derived beside it.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>

#include "compare/judge.h"
#include "compare/tolerance.h"
#include "core/backend.h"
#include "tests/builtin_backend.h"

namespace oplab {
namespace {

using compare::Verdict;

Backend& named(const std::string& name) { return testing::builtin_backend(name); }

// A backend that declares only a dtype (as an exec or plugin backend does) and answers with
// `inner`, optionally declaring another accumulation type than the default.
class Declared : public Backend {
 public:
  Declared(Backend& inner, DType t, std::optional<DType> acc = std::nullopt) : inner_(inner), t_(t), acc_(acc) {}
  std::string name() const override { return "declared-" + std::string(dtype_name(t_)); }
  std::string description() const override { return "test"; }
  using Backend::run;
  Result run(const Case& c, const ValidParams& vp) override { return inner_.run(c, vp); }
  std::optional<std::string> unsupported_reason(const Case& c) const override { return inner_.unsupported_reason(c); }
  bool out_of_process() const override { return inner_.out_of_process(); }
  DType dtype(const std::string&) const override { return t_; }
  DType accumulation(const std::string& op) const override { return acc_ ? *acc_ : Backend::accumulation(op); }

 private:
  Backend& inner_;
  DType t_;
  std::optional<DType> acc_;
};

// Always fails: an oracle (or subject) that raises on every case.
class Failing : public Backend {
 public:
  std::string name() const override { return "failing"; }
  std::string description() const override { return "test"; }
  using Backend::run;
  Result run(const Case&, const ValidParams&) override { throw std::runtime_error("no answer today"); }
};

Case roi_align_case(Tensor x, std::vector<double> roi, json params) {
  Case c;
  c.op = "roi_align";
  c.params = std::move(params);
  c.inputs["input"] = std::move(x);
  Tensor r({1, 5});
  r.data = std::move(roi);
  c.inputs["rois"] = r;
  return c;
}

TEST(PrecisionRule, MetamorphicToleranceComesFromTheDeclaredDtype) {
  // float32 sums: 1e-4 of the terms (about 1700 u of float32), as the float32 rule always was.
  EXPECT_DOUBLE_EQ(compare::tolerance_for_types(DType::Float32, DType::Float32).rtol, 1e-4);
  // float16 stored, float32 sums: 1e-4 + 16 * 2^-11 = 1e-4 + 7.8125e-3.
  EXPECT_DOUBLE_EQ(compare::tolerance_for_types(DType::Float16, DType::Float32).rtol, 1e-4 + 16 * 0x1p-11);
  // bfloat16 stored, float32 sums: 1e-4 + 16 * 2^-8 = 0.0626.
  EXPECT_DOUBLE_EQ(compare::tolerance_for_types(DType::BFloat16, DType::Float32).rtol, 1e-4 + 16 * 0x1p-8);
  // float16 sums: 1e-4 * 2^13 = 0.82 -> capped at 0.5 (an identity says nothing past that).
  EXPECT_DOUBLE_EQ(compare::tolerance_for_types(DType::Float16, DType::Float16).rtol, 0.5);
  EXPECT_DOUBLE_EQ(compare::tolerance_for_types(DType::Float64, DType::Float64).rtol, 1e-10);
  // A backend that only declares float32 (an exec backend: no is_float32()) gets float32's
  // tolerance; one declaring float16 gets float16's, not float32's.
  Failing inner;
  EXPECT_DOUBLE_EQ(compare::tolerance_for(Declared(inner, DType::Float32), "roi_align").rtol, 1e-4);
  EXPECT_DOUBLE_EQ(compare::tolerance_for(Declared(inner, DType::Float16), "roi_align").rtol, 1e-4 + 16 * 0x1p-11);
}

TEST(PrecisionRule, HalfKernelsAccumulateInFloat32UnlessTheyDeclareOtherwise) {
  Failing inner;
  EXPECT_EQ(Declared(inner, DType::Float16).accumulation("roi_align"), DType::Float32);
  EXPECT_EQ(Declared(inner, DType::BFloat16).accumulation("interpolate"), DType::Float32);
  EXPECT_EQ(Declared(inner, DType::Float32).accumulation("roi_align"), DType::Float32);
  Backend& f16 = named("torchvision-f16");
  EXPECT_EQ(f16.dtype("roi_align"), DType::Float16);
  EXPECT_EQ(f16.accumulation("roi_align"), DType::Float16);  // measured: it sums in half
}

// SPEC §15's measurement: torch's CPU roi_align in float16 sums 4096 samples of a 64x64 map of
// ones in half. Past 2048 a half sum of ones stops growing (2048 + 1 rounds back to 2048:
// float16's spacing is 2 there), so the bin is 2048 / 4096 = 0.5 instead of 1.
Case ones_4096_samples() {
  return roi_align_case(Tensor({1, 1, 64, 64}, 1.0), {0, 0, 0, 64, 64},
                        json{{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", 64}, {"aligned", false}});
}

TEST(PrecisionRule, AHalfSumOf4096SamplesIsPrecisionExhaustedNotAgreement) {
  Backend& f16 = named("torchvision-f16");
  SKIP_UNLESS_AVAILABLE(f16);
  const compare::Judgement j = compare::judge(f16, named("ref"), ones_4096_samples());
  // Declared float16 accumulation: u n = 2^-11 * 4096 * 4 taps >> 1, the bound is as wide as
  // the answer: neither agreement nor a finding.
  EXPECT_EQ(j.verdict, Verdict::PrecisionExhausted) << j.detail;
  EXPECT_NE(j.detail.find("0.5"), std::string::npos) << j.detail;
}

TEST(PrecisionRule, AHalfKernelThatClaimsFloat32SumsFailsOnTheSameCase) {
  Backend& f16 = named("torchvision-f16");
  SKIP_UNLESS_AVAILABLE(f16);
  Declared claims(f16, DType::Float16, DType::Float32);
  const compare::Judgement j = compare::judge(claims, named("ref"), ones_4096_samples());
  // float32 sums: bound 8 (2^-24 * 16384 + 2^-11 (2 * 64 + 4)) * 1 = 0.52 ... about 0.5; the
  // answer is off by 0.5 and the 4-ulp runs of the reference all give 1: a finding.
  EXPECT_EQ(j.verdict, Verdict::Disagree) << j.detail;
}

TEST(PrecisionRule, TheOraclesFailureIsTheOraclesOutcome) {
  Backend& ref = named("ref");
  Failing failing;
  const Case c = roi_align_case(Tensor({1, 1, 2, 2}, 1.0), {0, 0, 0, 1, 1}, json{{"output_size", {1, 1}}});
  const compare::Judgement as_oracle = compare::judge(ref, failing, c);
  EXPECT_EQ(as_oracle.verdict, Verdict::Skipped) << as_oracle.detail;
  EXPECT_NE(as_oracle.detail.find("oracle"), std::string::npos);
  const compare::Judgement as_subject = compare::judge(failing, ref, c);
  EXPECT_EQ(as_subject.verdict, Verdict::Error) << as_subject.detail;
  // And with a float subject: the double oracle's failure skips the case.
  Declared f32(ref, DType::Float32);
  const compare::Judgement float_subject = compare::judge(f32, failing, c);
  EXPECT_EQ(float_subject.verdict, Verdict::Skipped) << float_subject.detail;
}

Tensor tensor_of(Shape s, std::vector<double> v) {
  Tensor t(std::move(s));
  t.data = std::move(v);
  return t;
}

// A kernel that answers the reference rounded to its dtype, each value as `round` puts it:
// the flush of a half kernel's products below 2^-25, a coordinate's overflow.
class Rounding : public Backend {
 public:
  Rounding(Backend& inner, DType t, std::function<double(double)> round) : inner_(inner), t_(t), round_(std::move(round)) {}
  std::string name() const override { return "rounding-" + std::string(dtype_name(t_)); }
  std::string description() const override { return "test"; }
  using Backend::run;
  Result run(const Case& c, const ValidParams& vp) override {
    Result r = inner_.run(c, vp);
    for (auto* m : {&r.outputs, &r.grads})
      for (auto& [name, t] : *m)
        for (double& v : t.data) v = round_(v);
    return r;
  }
  DType dtype(const std::string&) const override { return t_; }

 private:
  Backend& inner_;
  DType t_;
  std::function<double(double)> round_;
};

// Measured on an H100 (docs/bench/2026-11-27-h100.md): torch's CUDA deform_conv2d in float16
// answers 0 for an offset gradient of 8.1e-9, below float16's smallest subnormal 2^-24 =
// 6.0e-8: every product under 2^-25 rounds to 0 in half. The bound's underflow term, (n + 4)
// roundings of at most 2^-25 each, admits it for a float16 kernel; float32's 2^-150 admits
// nothing of the kind.
TEST(PrecisionRule, AHalfResultBelowTheSubnormalsMayFlushToZero) {
  Backend& ref = named("ref");
  // One pixel of 2^-24 (half's smallest subnormal, exact in every type), a sample at the
  // middle of four pixels: each weight 1/4, the answer 2^-26.
  const Case c = roi_align_case(tensor_of({1, 1, 2, 2}, {0x1p-24, 0, 0, 0}), {0, 0, 0, 1, 1},
                                json{{"output_size", {1, 1}}, {"sampling_ratio", 1}, {"aligned", false}});
  ASSERT_DOUBLE_EQ(evaluate(ref, c).outputs.at("output").data[0], 0x1p-26);
  auto flush = [](double v) { return std::fabs(v) < 0x1p-25 ? 0.0 : v; };
  Rounding half(ref, DType::Float16, flush), single(ref, DType::Float32, flush);
  const compare::Judgement h = compare::judge(half, ref, c);
  EXPECT_EQ(h.verdict, Verdict::Agree) << h.detail;
  const compare::Judgement s = compare::judge(single, ref, c);
  EXPECT_EQ(s.verdict, Verdict::Disagree) << s.detail;
}

// Measured on an H100: torch's CUDA grid_sample in float16 answers NaN for the grid gradient of
// a grid value of 12345.5 (12344 in half), which unnormalises to (12345 * 13 - 1) / 2 = 80242
// pixels, past half's 65504: the coordinate is Inf in the kernel's own type. The reference
// samples nothing there (SPEC §12: gradient 0). An Inf or NaN where the geometry, formed in the
// kernel's type, overflows it is precision-exhausted; the same NaN from a float32 kernel,
// whose geometry does not overflow, is a finding.
TEST(PrecisionRule, AGeometryPastTheDtypesRangeIsPrecisionExhausted) {
  Backend& ref = named("ref");
  Case c;
  c.op = "grid_sample";
  c.params = json{{"mode", "bilinear"}, {"padding_mode", "zeros"}, {"align_corners", false}};
  c.inputs["input"] = Tensor({1, 1, 2, 13}, 1.0);
  c.inputs["grid"] = tensor_of({1, 1, 2, 2}, {12344, 0.25, 0.5, 0.25});
  c.grad_output = Tensor({1, 1, 1, 2}, 1.0);
  const Result r = evaluate(ref, c);
  ASSERT_EQ(r.grads.at("grid").data[0], 0.0);  // out of range: no gradient
  // NaN for the far point's grid gradient, the reference elsewhere.
  class NanFar : public Rounding {
   public:
    using Rounding::Rounding;
    Result run(const Case& c, const ValidParams& vp) override {
      Result res = Rounding::run(c, vp);
      res.grads.at("grid").data[0] = res.grads.at("grid").data[1] = std::nan("");
      return res;
    }
  };
  NanFar half(ref, DType::Float16, [](double v) { return v; }), single(ref, DType::Float32, [](double v) { return v; });
  const compare::Judgement h = compare::judge(half, ref, c);
  EXPECT_EQ(h.verdict, Verdict::PrecisionExhausted) << h.detail;
  EXPECT_NE(h.detail.find("exceeds"), std::string::npos) << h.detail;
  const compare::Judgement s = compare::judge(single, ref, c);
  EXPECT_EQ(s.verdict, Verdict::Disagree) << s.detail;
}

}  // namespace
}  // namespace oplab
