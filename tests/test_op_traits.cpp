// Every registered op has every layer's traits, each complete, registered once; an op without
// them is a clear error naming the op and the layer, never another op's rule.
#include <gtest/gtest.h>

#include "bench/shape_builder.h"
#include "compare/op_compare.h"
#include "core/op_desc.h"
#include "core/params.h"
#include "fuzz/op_fuzz.h"
#include "gradcheck/kinks.h"
#include "reference/ref_backend.h"

using namespace oplab;

namespace {

template <class T>
void expect_registered_once(const std::string& op) {
  EXPECT_TRUE(OpTraits<T>::has(op)) << op << " has no " << T::kLayer << " traits";
  for (const auto& d : OpTraits<T>::duplicated()) ADD_FAILURE() << d << " registers " << T::kLayer << " traits twice";
}

template <class T>
void expect_no_stray_registrations() {
  // A layer's traits for a name that is no op (a typo in a registration) would never be used.
  for (const auto& op : OpTraits<T>::ops()) EXPECT_NO_THROW(op_desc(op)) << T::kLayer << " traits for unknown op " << op;
}

}  // namespace

TEST(OpTraits, EveryOpHasEveryLayersTraits) {
  ASSERT_GE(all_ops().size(), 7u);
  for (const auto& d : all_ops()) {
    SCOPED_TRACE(d.name);
    ASSERT_TRUE(d.parse);
    expect_registered_once<RefOp>(d.name);
    EXPECT_TRUE(OpTraits<RefOp>::of(d.name).run);

    expect_registered_once<fuzz::OpFuzz>(d.name);
    const auto& f = fuzz::op_fuzz(d.name);
    EXPECT_TRUE(f.gen && f.invalid && f.features && f.permute && f.linear_in_input);
    EXPECT_FALSE(f.adjoint_inputs.empty());
    for (const auto& in : f.adjoint_inputs) {
      bool known = false;
      for (const auto& spec : d.inputs) known |= spec.name == in && spec.differentiable;
      EXPECT_TRUE(known) << "adjoint input " << in << " is not a differentiable input of " << d.name;
    }

    expect_registered_once<compare::OpCompare>(d.name);
    const auto& c = compare::op_compare(d.name);
    EXPECT_TRUE(c.forward_terms && c.nudge && c.driving);

    expect_registered_once<gradcheck::OpKinks>(d.name);
    EXPECT_TRUE(gradcheck::op_kinks(d.name).affine && gradcheck::op_kinks(d.name).sources);

    expect_registered_once<bench::OpBenchShapes>(d.name);
  }
  expect_no_stray_registrations<RefOp>();
  expect_no_stray_registrations<fuzz::OpFuzz>();
  expect_no_stray_registrations<compare::OpCompare>();
  expect_no_stray_registrations<gradcheck::OpKinks>();
  expect_no_stray_registrations<bench::OpBenchShapes>();
}

TEST(OpTraits, AMissingTraitNamesTheOpAndTheLayer) {
  try {
    compare::op_compare("no_such_op");
    FAIL() << "no error";
  } catch (const MissingTrait& e) {
    EXPECT_EQ(std::string(e.what()), "no_such_op: no compare traits registered (they live next to the op's own files)");
  }
  EXPECT_THROW(fuzz::op_fuzz("no_such_op"), MissingTrait);
  EXPECT_THROW(OpTraits<RefOp>::of("no_such_op"), MissingTrait);
}

TEST(OpTraits, EveryOpHasStandardBenchShapesThatValidate) {
  // The reduced set (the full one holds gigabytes): same kinds, divided sizes.
  const auto shapes = bench::standard_shapes(true);
  for (const auto& d : all_ops()) {
    int n = 0;
    for (const auto& s : shapes) n += s.c.op == d.name;
    EXPECT_GT(n, 0) << d.name;
  }
  for (const auto& s : shapes) EXPECT_NO_THROW(op_desc(s.c.op).validate(s.c)) << s.name;
}

TEST(OpTraits, TypedParamsComeFromValidation) {
  Case c;
  c.op = "ps_roi_align";
  c.params = json{{"output_size", {2, 3}}, {"spatial_scale", 0.5}, {"sampling_ratio", 2}};
  c.inputs["input"] = Tensor({1, 12, 4, 4}, 0.0);
  c.inputs["rois"] = Tensor({1, 5}, 0.0);
  const ValidParams v = op_desc(c.op).parse(c);
  const auto& p = v.as<PsRoiParams>();
  EXPECT_EQ(p.Co, 2);  // 12 channels / (2 * 3) bins
  EXPECT_EQ(p.sampling_ratio, 2);
  EXPECT_EQ(v.output_shape, (Shape{1, 2, 2, 3}));
  EXPECT_THROW(v.as<RoiAlignParams>(), std::logic_error);
}
