// The onnxruntime peer (Node bridge, onnxruntime-node CPU): agreement with the reference on
// hand-derived cases, each named divergence proven (the reference on its equivalent case
// reproduces the peer), a missing node saying so in one line.
#include <cstdlib>

#include <gtest/gtest.h>

#include "compare/float_compare.h"
#include "compare/float_divergence.h"
#include "compare/judge.h"
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

TEST_F(PeerOnnxruntime, NearestExactNearTieRoundsUp) {
  // 12 -> 115 at sf 9.642857142857142 (135/14), dst 67: exactly 67.5 * 14/135 - 0.5 = 6.5, a tie.
  // In float32 float(sf) = 9.64285755 > 135/14, so (67.5f / s) - 0.5f = 6.49999952: 6 by
  // rounding, 6 by SPEC's floor(67.5 * float(1/sf)) = floor(6.99999952). ORT 1.30 reads 7: it
  // counts a fraction within 1e-6 of 0.5 as a tie (measured, docs/semantics.md).
  std::vector<double> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = double(i);
  const Case c = interp({1, 1, 12}, x, {{"mode", "nearest-exact"}, {"scale_factor", {9.642857142857142}}});
  EXPECT_EQ(out(ort(), c).data[67], 7);
  EXPECT_EQ(out(*ref, c).data[67], 6);
  proves("ort-resize-nearest-float-division", c, 0.5, 1e-6);
}

TEST_F(PeerOnnxruntime, BicubicWeightsAreFloat32) {
  // 7 -> 14 at sf 2.1, dst 9: src = 9.5 / 2.1 - 0.5 = 4 + 1/42, t = 1/42; only the tap at
  // index 6 (weight W(2 - t) = -0.75 (t^2 - t^3)) reads a 1: SPEC -4.15047e-4. ORT evaluates
  // the weight in float32 from 2 - t, where its terms (~3) cancel to ~4e-4: -4.14610e-4, off
  // by 4.4e-7 (1e-2 of the value), ~13 times the float32 bound of Σ |w x|.
  const Case c = interp({1, 1, 1, 7}, {1, 0, 0, 0, 0, 0, 1},
                        {{"mode", "bicubic"}, {"scale_factor", {1.0, 2.1}}, {"align_corners", false}});
  const double t = 1.0 / 42;
  EXPECT_NEAR(out(*ref, c).data[9], -0.75 * (t * t - t * t * t), 1e-15);
  EXPECT_NEAR(out(ort(), c).data[9], -4.1461e-4, 1e-8);
  // Float32 rounding is not a divergence (SPEC §15): the reference with its weights formed in
  // float32 (core/geometry_rounding.h) measures that slope, and the judge agrees. The named
  // divergence still proves the mechanism on its equivalent case.
  EXPECT_EQ(compare::compare_float_backend(*ref, ort(), c, compare::kDefaultBoundMultiple).verdict, compare::Verdict::Agree);
  EXPECT_EQ(compare::float_divergence(*ref, ort(), c, false, compare::kDefaultBoundMultiple).value_or(""),
            "ort-resize-cubic-float32-weights");
  // The equivalent carries ORT's float32 weights: element 9 (one weight times 1) is ORT's value
  // exactly; elsewhere ORT's float32 sums of up to four weights are off by an ulp or so of ~1.
  const auto eq = divergence(ort(), "ort-resize-cubic-float32-weights").peer_equivalent(c);
  ASSERT_TRUE(eq);
  const Tensor got = out(ort(), c), emulated = out(*ref, *eq);
  EXPECT_EQ(got.data[9], emulated.data[9]);
  EXPECT_LT(max_diff(got, emulated), 1.5e-7);
}

TEST_F(PeerOnnxruntime, BilinearCoordinatesAreFloat32) {
  // 6 -> 12 at sf 2.111 on [0, 1, 0, 1, 0, 1], dst 9: src = 9.5 / 2.111 - 0.5 = 4 + 0.0005 / 2.111,
  // so SPEC gives lambda = 2.36855e-4 (pixel 5 is 1, pixel 4 is 0). ORT's float32 coordinate
  // near 4.5 lies on a grid of 2^-21: 4.5 + 496 * 2^-21 - 0.5, lambda = 496 * 2^-21 = 2.36511e-4,
  // off by 3.4e-7, ~20 times the float32 bound of Σ |w x| (it has no term for |x| times the
  // coordinate's own rounding).
  const Case c = interp({1, 1, 1, 6}, {0, 1, 0, 1, 0, 1},
                        {{"mode", "bilinear"}, {"scale_factor", {1.0, 2.111}}, {"align_corners", false}});
  EXPECT_NEAR(out(*ref, c).data[9], 0.0005 / 2.111, 1e-15);
  EXPECT_EQ(out(ort(), c).data[9], 496.0 / (1 << 21));
  // Absorbed by the float32 rule (SPEC §15): the reference with its coordinates formed in
  // float32 measures the slope; the named divergence still proves the mechanism.
  EXPECT_EQ(compare::compare_float_backend(*ref, ort(), c, compare::kDefaultBoundMultiple).verdict, compare::Verdict::Agree);
  EXPECT_EQ(compare::float_divergence(*ref, ort(), c, false, compare::kDefaultBoundMultiple).value_or(""),
            "ort-resize-bilinear-float32-coordinates");
  proves("ort-resize-bilinear-float32-coordinates", c, 3e-7, 1.5e-7);
}

TEST_F(PeerOnnxruntime, SameShapeIsCopied) {
  // W 5, sf 1.1: out floor(5.5) = 5 = in; ORT copies; SPEC samples at (dst + 0.5) / 1.1 - 0.5.
  const Case c = interp({1, 1, 5}, {0, 1, 4, 9, 16},
                        {{"mode", "linear"}, {"scale_factor", 1.1}, {"align_corners", false}});
  EXPECT_EQ(out(ort(), c).data, (std::vector<double>{0, 1, 4, 9, 16}));
  proves("ort-resize-same-shape-copy", c, 0.1, 1e-6);
}

TEST_F(PeerOnnxruntime, AntialiasCutsAndRenormalisesAtTheEdges) {
  // Resize antialias=1, exclude_outside=1, half_pixel (the bridge's mapping of SPEC §16): 8 -> 2
  // bilinear of an impulse at 3 gives 0.625 / 3.5 and 0.375 / 3.5
  // (tests/test_ref_interpolate_antialias.cpp); bicubic takes a = -0.5 (2 -> 4 on [0, 1]:
  // -0.0703125 / 0.796875 at output 0).
  const Tensor a = out(ort(), interp({1, 1, 1, 8}, {0, 0, 0, 1, 0, 0, 0, 0},
                                     {{"mode", "bilinear"}, {"antialias", true}, {"size", {1, 2}}}));
  EXPECT_NEAR(a.data[0], 0.625 / 3.5, 1e-7);
  EXPECT_NEAR(a.data[1], 0.375 / 3.5, 1e-7);
  const Tensor b = out(ort(), interp({1, 1, 1, 2}, {0, 1}, {{"mode", "bicubic"}, {"antialias", true}, {"size", {1, 4}}}));
  EXPECT_NEAR(b.data[0], -0.0703125 / 0.796875, 1e-7);
}

TEST_F(PeerOnnxruntime, AntialiasCopiesAnAxisOfTheSameSize) {
  // [1, 1, 1, 6] at scale factors [4, 1.03]: the width keeps its size and ORT copies it; SPEC
  // filters it at scale 1/1.03 (the impulse at 3 spreads to its neighbours).
  const Case c = interp({1, 1, 1, 6}, {0, 0, 0, 1, 0, 0},
                        {{"mode", "bilinear"}, {"antialias", true}, {"scale_factor", {4.0, 1.03}}});
  EXPECT_EQ(out(ort(), c).data[3], 1.0);
  proves("ort-resize-antialias-same-size-axis-copy", c, 0.05, 1e-6);
}

TEST_F(PeerOnnxruntime, FloatScaleThatChangesTheSizeIsRefused) {
  // 10 * 0.299999999 = 2.99999999 -> 2 in double, but float32(0.299999999) = 0.3000000119 -> 3.
  const Case c = interp({1, 1, 10}, std::vector<double>(10, 1.0),
                        {{"mode", "linear"}, {"scale_factor", 0.299999999}, {"align_corners", false}});
  try {
    evaluate(ort(), c);
    ADD_FAILURE() << "expected a refusal";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("float32 product"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(divergence(ort(), "ort-resize-float-scale-size").peer_raises(c));
}

TEST_F(PeerOnnxruntime, OutputSizeIsTheFloat32ProductTruncated) {
  // The product is rounded to float32 too: float(1.3999999999999) = 11744051 / 2^23 =
  // 1.39999997615814, times 5 = 6.99999988079071, within half a float32 step (2^-22 near 7)
  // of 7, so ORT sizes 7; the case's floor(5 * 1.3999999999999) = floor(6.9999999999995) = 6,
  // and floor(5 * float(sf)) in double would be 6 as well. Likewise 3 * float(1.6666666666665668)
  // = 4.99999988 -> 5.0f, the case 4 (both as the fuzzer drew them: 2-D bilinear, 1-D nearest).
  const auto& d = divergence(ort(), "ort-resize-float-scale-size");
  const Case bilinear = interp({1, 1, 1, 5}, std::vector<double>(5, 0.0),
                               {{"mode", "bilinear"}, {"scale_factor", {2.0, 1.3999999999999}}, {"align_corners", nullptr}});
  const Case nearest = interp({1, 1, 3}, {0, 0, 0}, {{"mode", "nearest"}, {"scale_factor", {1.6666666666665668}}});
  for (const Case& c : {bilinear, nearest}) {
    EXPECT_TRUE(d.peer_raises(c)) << c.params.dump();
    try {  // the bridge's refusal, not a shape ORT produced against the protocol
      evaluate(ort(), c);
      ADD_FAILURE() << "expected a refusal: " << c.params.dump();
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("float32 product"), std::string::npos) << e.what();
    }
  }
  // 7 * float(1.4285714) = 9.99999940, 9.99999905 in float32: 9 either way, ORT computes the case's size.
  const Case same = interp({1, 1, 7}, std::vector<double>(7, 1.0),
                           {{"mode", "linear"}, {"scale_factor", 1.4285714}, {"align_corners", false}});
  EXPECT_FALSE(d.peer_raises(same));
  EXPECT_EQ(out(ort(), same).shape, (Shape{1, 1, 9}));
}

// The bench sends a case less the inputs it describes as random, and the bridge draws those
// itself (a standard RoI shape's feature map, sent as one JSON line, is past what Node can
// hold). Without the draw the bridge would build roi_align with no feature map and refuse.
// It times ORT's float32 kernel (roi_align's evaluations run its double one): the session
// answers the element type it timed, and start_onnxruntime_bench refuses any but float32.
TEST_F(PeerOnnxruntime, BenchDrawsTheRandomInputsItIsNotSent) {
  const Case c = roi_align(T({1, 2, 8, 8}, std::vector<double>(128, 1.0)), T({1, 5}, {0, 0, 0, 4, 4}),
                           {{"output_size", {2, 2}}, {"spatial_scale", 1.0}, {"sampling_ratio", 2}, {"aligned", true}});
  const json random{{"input", {{"shape", {1, 2, 8, 8}}, {"low", -1.0}, {"high", 1.0}}}};
  OnnxruntimeBench b = start_onnxruntime_bench(c, 1, random);
  EXPECT_GT(b.probe_ms, 0.0);
  EXPECT_GT(b.run(0), 0.0);
  EXPECT_GT(b.run(1), 0.0);  // a pre-run in the same request
  // A shape the draw cannot feed to roi_align (rank 3) is refused by the bridge, not ignored:
  // the drawn input is what the session runs on.
  const json wrong{{"input", {{"shape", {2, 8, 8}}, {"low", -1.0}, {"high", 1.0}}}};
  EXPECT_ANY_THROW(start_onnxruntime_bench(c, 1, wrong));
  // An op ORT lacks is declined as such (the bench lists it as a peer without the case, not
  // as a failure).
  Case ps = c;
  ps.op = "ps_roi_align";
  EXPECT_THROW(start_onnxruntime_bench(ps, 1, random), Unsupported);
}

// onnxruntime-f32: ONNX Runtime's float32 kernels, judged at their own precision. docs/divergences.md's
// smallest ort-float32-spatial-scale case (a 1x1 map of 7, roi (0, 0, -5, 0, -5), scale 0.3,
// sampling 1): the spec's sample sits at y = -1.5 + 0.5 = -1 (in range: the edge row, 7). The
// double kernel multiplies by the float attribute 0.30000001192 in double, -1.5000000596, and
// samples y < -1 (0: the named divergence); the float32 kernel's product rounds back to -1.5
// (a tie, to even), so it answers 7 and agrees.
TEST(PeerOnnxruntimeF32, Float32KernelsAreJudgedAtTheirPrecision) {
  const auto f32 = make_onnxruntime_backend(OrtPrecision::Float32);
  if (auto why = f32->unavailable_reason()) GTEST_SKIP() << *why;
  const auto mixed = make_onnxruntime_backend();
  EXPECT_EQ(f32->name(), "onnxruntime-f32");
  EXPECT_TRUE(f32->opt_in());
  EXPECT_FALSE(mixed->opt_in());
  for (const char* op : {"deform_conv2d", "roi_align", "grid_sample", "interpolate", "roi_pool"}) {
    EXPECT_EQ(f32->dtype(op), DType::Float32) << op;
    EXPECT_EQ(mixed->dtype(op), std::string(op) == "interpolate" || std::string(op) == "roi_pool" ? DType::Float32 : DType::Float64)
        << op;
  }
  Case c;
  c.op = "roi_align";
  c.params = json{{"output_size", {1, 1}}, {"spatial_scale", 0.3}, {"sampling_ratio", 1}, {"aligned", false}};
  c.inputs["input"] = T({1, 1, 1, 1}, {7});
  c.inputs["rois"] = T({1, 5}, {0, 0, -5, 0, -5});
  const auto ref = make_ref_backend();
  EXPECT_EQ(evaluate(*ref, c).outputs.at("output").data[0], 7.0);
  EXPECT_EQ(evaluate(*mixed, c).outputs.at("output").data[0], 0.0);
  EXPECT_EQ(evaluate(*f32, c).outputs.at("output").data[0], 7.0);
  EXPECT_EQ(compare::judge(*mixed, *ref, c).verdict, compare::Verdict::NamedDivergence);
  const compare::Judgement j = compare::judge(*f32, *ref, c);
  EXPECT_EQ(j.verdict, compare::Verdict::Agree) << j.detail;
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
