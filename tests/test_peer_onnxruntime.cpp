// The onnxruntime peer (Node bridge, onnxruntime-node CPU): agreement with the reference on
// hand-derived cases, each named divergence proven (the reference on its equivalent case
// reproduces the peer), a missing node saying so in one line.
#include <cstdlib>

#include <gtest/gtest.h>

#include "peer/onnxruntime_backend.h"
#include "reference/ref_backend.h"
#include "tests/peer_divergence_helpers.h"

namespace oplab {
namespace {

using testing::divergence;
using testing::interp;
using testing::max_diff;
using testing::T;

struct PeerOnnxruntime : ::testing::Test {
  static Backend& ort() {
    static std::unique_ptr<Backend> b = make_onnxruntime_backend();  // one bridge for the suite
    return *b;
  }
  std::unique_ptr<Backend> ref = make_ref_backend();
  void SetUp() override {
    if (auto why = ort().unavailable_reason()) GTEST_SKIP() << *why;
  }
  Tensor out(Backend& b, const Case& c) { return evaluate(b, c).outputs.at("output"); }
  void proves(const std::string& name, const Case& c, double gap, double tol) {
    const auto eq = divergence(ort(), name).peer_equivalent(c);
    ASSERT_TRUE(eq) << name << " does not apply";
    const Tensor got = out(ort(), c);
    EXPECT_GT(max_diff(got, out(*ref, c)), gap) << name;
    EXPECT_LT(max_diff(got, out(*ref, *eq)), tol) << name;
  }
};

Case roi_align(Tensor x, Tensor rois, json params) {
  Case c;
  c.op = "roi_align";
  c.params = std::move(params);
  c.inputs["input"] = std::move(x);
  c.inputs["rois"] = std::move(rois);
  return c;
}

TEST_F(PeerOnnxruntime, DeclaresDoubleWhereOrtHasDoubleKernels) {
  EXPECT_EQ(ort().dtype("roi_align"), DType::Float64);
  EXPECT_EQ(ort().dtype("deform_conv2d"), DType::Float64);
  EXPECT_EQ(ort().dtype("interpolate"), DType::Float32);
  EXPECT_EQ(ort().dtype("roi_pool"), DType::Float32);
  EXPECT_FALSE(ort().computes_grads("roi_align"));
  EXPECT_EQ(onnxruntime_version().value_or(""), "1.30.0");
}

TEST_F(PeerOnnxruntime, DeformConvZeroOffsetIsWeightTimesInputPlusBias) {
  // 1x1 kernel, zero offset: out = 2 * x + 0.5, exactly, in double.
  Case c;
  c.op = "deform_conv2d";
  c.inputs["input"] = T({1, 1, 2, 2}, {1, 2, 3, 4});
  c.inputs["offset"] = T({1, 2, 2, 2}, std::vector<double>(8, 0.0));
  c.inputs["weight"] = T({1, 1, 1, 1}, {2});
  c.inputs["bias"] = T({1}, {0.5});
  EXPECT_EQ(out(ort(), c).data, (std::vector<double>{2.5, 4.5, 6.5, 8.5}));
}

TEST_F(PeerOnnxruntime, RoiAlignOfConstantImageIsTheConstant) {
  const Case c = roi_align(T({1, 1, 4, 4}, std::vector<double>(16, 3.0)), T({1, 5}, {0, 0.5, 0.5, 2.5, 3}),
                           {{"output_size", {2, 2}}, {"spatial_scale", 1.0}, {"sampling_ratio", 2}, {"aligned", true}});
  for (double v : out(ort(), c).data) EXPECT_DOUBLE_EQ(v, 3.0);
}

TEST_F(PeerOnnxruntime, FloatSpatialScaleMovesASampleOffTheImage) {
  // aligned=false, one sample at y = y1*s + 0.5: with s = 0.3 and y1 = -5, y = -1 in double
  // (the edge row, 7), but 0.3f = 0.30000001192 puts it at -1.00000006 (outside: 0).
  const Case c = roi_align(T({1, 1, 1, 1}, {7}), T({1, 5}, {0, 0, -5, 0, -5}),
                           {{"output_size", {1, 1}}, {"spatial_scale", 0.3}, {"sampling_ratio", 1}, {"aligned", false}});
  EXPECT_EQ(out(ort(), c).data, std::vector<double>{0});
  EXPECT_EQ(out(*ref, c).data, std::vector<double>{7});
  proves("ort-float32-spatial-scale", c, 1, 1e-12);
}

TEST_F(PeerOnnxruntime, NegativeAdaptiveGridRaises) {
  // aligned, adaptive grid: rw = 3 -> gw = 3, rh = -2 -> gh = -2: gh*gw < 0; the spec gives 0.
  const Case c = roi_align(T({1, 1, 4, 4}, std::vector<double>(16, 1.0)), T({1, 5}, {0, 0, 2, 3, 0}),
                           {{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", -1}, {"aligned", true}});
  EXPECT_EQ(out(*ref, c).data, std::vector<double>{0});
  EXPECT_THROW(evaluate(ort(), c), std::runtime_error);
  EXPECT_TRUE(divergence(ort(), "ort-roi_align-negative-grid-raises").peer_raises(c));
}

TEST_F(PeerOnnxruntime, Bilinear2x2To1x1ReadsTheOrigin) {
  // pytorch_half_pixel: output size 1 -> source 0 -> 1.0; SPEC: the centre, (1+2+3+4)/4 = 2.5.
  const Case c = interp({1, 1, 2, 2}, {1, 2, 3, 4}, {{"mode", "bilinear"}, {"size", {1, 1}}, {"align_corners", false}});
  EXPECT_NEAR(out(ort(), c).data[0], 1.0, 1e-6);
  EXPECT_EQ(out(*ref, c).data[0], 2.5);
  proves("ort-resize-size1-origin", c, 1, 1e-6);
}

TEST_F(PeerOnnxruntime, NearestExactDividesByTheFloatScale) {
  // 4 -> 122, dst 30: (30.5) / 30.5f - 0.5 = 0.5 -> rounds up to 1; SPEC: 30.5 * float(4/122)
  // = 0.99999994 -> floor 0.
  const Case c = interp({1, 1, 4}, {10, 11, 12, 13}, {{"mode", "nearest-exact"}, {"size", {122}}});
  EXPECT_EQ(out(ort(), c).data[30], 11);
  EXPECT_EQ(out(*ref, c).data[30], 10);
  proves("ort-resize-nearest-float-division", c, 0.5, 1e-6);
}

TEST_F(PeerOnnxruntime, SameShapeIsCopied) {
  // W 5, sf 1.1: out floor(5.5) = 5 = in; ORT copies; SPEC samples at (dst + 0.5) / 1.1 - 0.5.
  const Case c = interp({1, 1, 5}, {0, 1, 4, 9, 16},
                        {{"mode", "linear"}, {"scale_factor", 1.1}, {"align_corners", false}});
  EXPECT_EQ(out(ort(), c).data, (std::vector<double>{0, 1, 4, 9, 16}));
  proves("ort-resize-same-shape-copy", c, 0.1, 1e-6);
}

TEST_F(PeerOnnxruntime, FloatScaleThatChangesTheSizeIsRefused) {
  // 10 * 0.299999999 = 2.99999999 -> 2 in double, but float32(0.299999999) = 0.3000000119 -> 3.
  const Case c = interp({1, 1, 10}, std::vector<double>(10, 1.0),
                        {{"mode", "linear"}, {"scale_factor", 0.299999999}, {"align_corners", false}});
  try {
    evaluate(ort(), c);
    ADD_FAILURE() << "expected a refusal";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("floor(in * float32(sf))"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(divergence(ort(), "ort-resize-float-scale-size").peer_raises(c));
}

TEST(PeerOnnxruntimeMissing, NoNodeSaysSoInOneLine) {
  setenv("OPLAB_NODE", "/nonexistent/node", 1);
  const auto b = make_onnxruntime_backend();
  const auto why = b->unavailable_reason();
  EXPECT_THROW(evaluate(*b, interp({1, 1, 2}, {1, 2}, {{"mode", "nearest"}, {"size", {4}}})), BackendUnavailable);
  unsetenv("OPLAB_NODE");
  ASSERT_TRUE(why);
  EXPECT_EQ(why->find('\n'), std::string::npos);
  EXPECT_NE(why->find("node"), std::string::npos);
}

}  // namespace
}  // namespace oplab
