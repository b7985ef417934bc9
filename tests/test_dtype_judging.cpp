// Judging by dtype (compare/dtype_case.h, docs/protocol.md): the case a backend of dtype T is
// sent and judged on. Expected values are derived by hand beside each check.
#include <gtest/gtest.h>

#include "compare/dtype_case.h"
#include "core/op_desc.h"

namespace oplab {
namespace {

// A backend that only declares a dtype and whether it computes gradients.
class Declared : public Backend {
 public:
  Declared(DType t, bool grads) : t_(t), grads_(grads) {}
  std::string name() const override { return "declared"; }
  std::string description() const override { return "test"; }
  using Backend::run;
  Result run(const Case&, const ValidParams&) override { return {}; }
  DType dtype(const std::string&) const override { return t_; }
  bool computes_grads(const std::string&) const override { return grads_; }

 private:
  DType t_;
  bool grads_;
};

Case roi_case() {
  Case c;
  c.op = "roi_align";
  c.params = json{{"output_size", {1, 1}}};
  Tensor x({1, 1, 1, 3});
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10 in float16 (10 fraction bits): even -> 1.
  // 1 + 3 * 2^-11 ties between 1 + 2^-10 and 1 + 2^-9: even -> 1 + 2^-9.
  // 70000 is beyond float16's largest finite value (65504): -> inf.
  x.data = {1 + 0x1p-11, 1 + 3 * 0x1p-11, 70000};
  c.inputs["input"] = x;
  Tensor rois({1, 5});
  // Column 0 is the batch index (kept); 2049 is odd above 2048, where float16's spacing is 2:
  // a tie between 2048 and 2050, even mantissa -> 2048.
  rois.data = {2049, 2049, 0.1, 1, 1};
  c.inputs["rois"] = rois;
  Tensor g({1, 1, 1, 1});
  g.data = {0.1};
  c.grad_output = g;
  return c;
}

TEST(DtypeJudging, Float16RoundsInputsAndGradOutputButNotTheBatchIndex) {
  const Case r = compare::dtype_rounded_case(roi_case(), DType::Float16);
  EXPECT_EQ(r.in("input").data[0], 1.0);
  EXPECT_EQ(r.in("input").data[1], 1 + 0x1p-9);
  EXPECT_EQ(r.in("input").data[2], INFINITY);
  EXPECT_EQ(r.in("rois").data[0], 2049);  // an index, marked by the op (InputSpec::index_column)
  EXPECT_EQ(r.in("rois").data[1], 2048);
  // 0.1 in float16: 0.1 = 1.6 * 2^-4, fraction 0.6 * 1024 = 614.4 -> 614: (1024 + 614) * 2^-14.
  EXPECT_EQ(r.in("rois").data[2], 1638 * 0x1p-14);
  EXPECT_EQ(r.grad_output->data[0], 1638 * 0x1p-14);
}

TEST(DtypeJudging, Bfloat16KeepsEightSignificantBits) {
  const Case r = compare::dtype_rounded_case(roi_case(), DType::BFloat16);
  // 0.1 = 1.6 * 2^-4; 7 fraction bits: 0.6 * 128 = 76.8 -> 77: (128 + 77) * 2^-11.
  EXPECT_EQ(r.in("rois").data[2], 205 * 0x1p-11);
  EXPECT_EQ(r.in("input").data[2], 70144);  // 70000 / 2^16 = 1.068 -> 137/128 * 2^16 = 70144
}

TEST(DtypeJudging, CaseForDropsGradOutputOfAForwardOnlyBackendAndRoundsToItsDtype) {
  const Case c = roi_case();
  const Case f = compare::case_for(Declared(DType::Float16, false), c);
  EXPECT_FALSE(f.grad_output.has_value());
  EXPECT_EQ(f.in("rois").data[1], 2048);
  const Case d = compare::case_for(Declared(DType::Float64, true), c);
  EXPECT_TRUE(d.grad_output.has_value());
  EXPECT_EQ(d.in("rois").data[1], 2049);  // float64: sent as given
  EXPECT_TRUE(compare::judged_by_bound(Declared(DType::BFloat16, true), "roi_align"));
  EXPECT_FALSE(compare::judged_by_bound(Declared(DType::Float64, true), "roi_align"));
}

}  // namespace
}  // namespace oplab
