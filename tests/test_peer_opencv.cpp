// The opencv peer (cv::resize): agreement with the reference on hand-derived cases, and each
// named divergence proven: the peer departs from the reference on the case, and the reference
// on the divergence's equivalent case reproduces the peer. Expected values are derived by hand
// in the comments (SPEC §6 for the reference, OpenCV's resize.cpp rules for the peer).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "peer/opencv_backend.h"
#include "reference/ref_backend.h"
#include "tests/peer_divergence_helpers.h"

namespace oplab {
namespace {

using testing::divergence;
using testing::interp;
using testing::max_diff;

#define REQUIRE_OPENCV(b)                                                  \
  if (auto why = (b).unavailable_reason()) GTEST_SKIP() << *why;

struct PeerOpencv : ::testing::Test {
  std::unique_ptr<Backend> cv = make_opencv_backend();
  std::unique_ptr<Backend> ref = make_ref_backend();
  Tensor out(Backend& b, const Case& c) { return evaluate(b, c).outputs.at("output"); }
  // The divergence applies, the peer differs from the reference by more than `gap`, and the
  // reference on the equivalent case agrees with the peer to 1e-6 (float32 weights).
  void proves(const std::string& name, const Case& c, double gap) {
    const auto eq = divergence(*cv, name).peer_equivalent(c);
    ASSERT_TRUE(eq) << name << " does not apply";
    const Tensor got = out(*cv, c);
    EXPECT_GT(max_diff(got, out(*ref, c)), gap) << name;
    EXPECT_LT(max_diff(got, out(*ref, *eq)), 1e-6) << name;
  }
};

TEST_F(PeerOpencv, AvailableWhenBuiltWithOpencvElseOneLine) {
  if (opencv_version()) {
    EXPECT_FALSE(cv->unavailable_reason());
    EXPECT_NE(cv->description().find(*opencv_version()), std::string::npos);
  } else {
    const auto why = cv->unavailable_reason();
    ASSERT_TRUE(why);
    EXPECT_EQ(why->find('\n'), std::string::npos);
    EXPECT_NE(why->find("libopencv-dev"), std::string::npos);
  }
}

TEST_F(PeerOpencv, BilinearRampUpscaleMatchesHandDerivation) {
  REQUIRE_OPENCV(*cv);
  // W 4 -> 8, scale 1/2: src = 0.5*dst - 0.25, negative clamped to 0, past 3 held at 3.
  const Case c = interp({1, 1, 1, 4}, {0, 1, 2, 3}, {{"mode", "bilinear"}, {"size", {1, 8}}});
  const std::vector<double> want{0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3};
  const Tensor got = out(*cv, c);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.data[i], want[i], 1e-6) << i;
  EXPECT_LT(max_diff(got, out(*ref, c)), 1e-6);
}

TEST_F(PeerOpencv, Float32PlanesAreOptInAndAgree) {
  // opencv-f32: the same ramp on CV_32F planes, judged at float32 (opt-in like the other
  // float32 peers).
  std::unique_ptr<Backend> f32 = make_opencv_backend(OpencvDepth::F32);
  REQUIRE_OPENCV(*f32);
  EXPECT_EQ(f32->name(), "opencv-f32");
  EXPECT_TRUE(f32->opt_in());
  EXPECT_EQ(f32->dtype("interpolate"), DType::Float32);
  const Case c = interp({1, 1, 1, 4}, {0, 1, 2, 3}, {{"mode", "bilinear"}, {"size", {1, 8}}});
  const std::vector<double> want{0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3};
  const Tensor got = out(*f32, c);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.data[i], want[i], 1e-6) << i;
}

TEST_F(PeerOpencv, DeclinesAntialias) {
  REQUIRE_OPENCV(*cv);
  EXPECT_THROW(evaluate(*cv, interp({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}, {{"mode", "bilinear"}, {"antialias", true}, {"size", {1, 2}}})),
               Unsupported);
}

TEST_F(PeerOpencv, NearestIntegerUpscaleAndAreaIntegerShrinkAgree) {
  REQUIRE_OPENCV(*cv);
  // 2 -> 4 nearest repeats each pixel twice; 4 -> 2 area averages pairs: (1+2)/2, (3+4)/2.
  EXPECT_EQ(out(*cv, interp({1, 1, 1, 2}, {5, 7}, {{"mode", "nearest"}, {"size", {1, 4}}})).data,
            (std::vector<double>{5, 5, 7, 7}));
  EXPECT_EQ(out(*cv, interp({1, 1, 1, 4}, {1, 2, 3, 4}, {{"mode", "area"}, {"size", {1, 2}}})).data,
            (std::vector<double>{1.5, 3.5}));
}

TEST_F(PeerOpencv, NearestExactTwoToOneReadsIndexZero) {
  REQUIRE_OPENCV(*cv);
  // Fixed point: step (2 << 16) / 1 = 131072, start 65536 - 1 -> index 0; SPEC: floor(0.5 * 2) = 1.
  const Case c = interp({1, 1, 1, 2}, {10, 20}, {{"mode", "nearest-exact"}, {"size", {1, 1}}});
  EXPECT_EQ(out(*cv, c).data, std::vector<double>{10});
  EXPECT_EQ(out(*ref, c).data, std::vector<double>{20});
  proves("opencv-nearest-exact-fixed-point", c, 5);
}

TEST_F(PeerOpencv, NearestSixToThirtyFourInDouble) {
  REQUIRE_OPENCV(*cv);
  // dst 17: 17 * (1 / (34 / 6)) = 2.9999999999999996 in double -> 2; float32 scale -> 3 (SPEC §8).
  std::vector<double> x{0, 1, 2, 3, 4, 5};
  const Case c = interp({1, 1, 1, 6}, x, {{"mode", "nearest"}, {"size", {1, 34}}});
  EXPECT_EQ(out(*cv, c).data[17], 2);
  EXPECT_EQ(out(*ref, c).data[17], 3);
  proves("opencv-nearest-double-index", c, 0.5);
}

TEST_F(PeerOpencv, AreaFiveToThreeWeightsTheCutPixels) {
  REQUIRE_OPENCV(*cv);
  // Cells of 5/3: [0, 1.67) -> 0.6*1 + 0.4*2 = 1.4; [1.67, 3.33) -> 0.2*2 + 0.6*3 + 0.2*4 = 3;
  // [3.33, 5) -> 0.4*4 + 0.6*5 = 4.6. SPEC (integer bins [0,2), [1,4), [3,5)): 1.5, 3, 4.5.
  const Case c = interp({1, 1, 1, 5}, {1, 2, 3, 4, 5}, {{"mode", "area"}, {"size", {1, 3}}});
  const Tensor got = out(*cv, c);
  EXPECT_NEAR(got.data[0], 1.4, 1e-6);
  EXPECT_NEAR(got.data[1], 3.0, 1e-6);
  EXPECT_NEAR(got.data[2], 4.6, 1e-6);
  EXPECT_EQ(out(*ref, c).data, (std::vector<double>{1.5, 3, 4.5}));
  proves("opencv-area-fractional", c, 0.05);
}

TEST_F(PeerOpencv, AreaLargeShrinkHasAnEquivalentAsSmallAsItsTaps) {
  REQUIRE_OPENCV(*cv);
  // 40 x 300 -> 3 x 7: cells of 13.3 x 42.9 pixels, at most 15 x 44 of them weighted. The
  // equivalent convolution strides over the image with a kernel of those taps; one as wide as
  // in - out + 1 (38 x 294) would need 25 times the offsets (and at 512 -> 128, 38 GB).
  std::vector<double> v(40 * 300);
  for (size_t i = 0; i < v.size(); ++i) v[i] = double((i * 7919) % 251) / 25.0;
  const Case c = interp({1, 1, 40, 300}, v, {{"mode", "area"}, {"size", {3, 7}}});
  const auto eq = divergence(*cv, "opencv-area-fractional").peer_equivalent(c);
  ASSERT_TRUE(eq);
  EXPECT_LE(eq->in("offset").shape[1], 2 * 15 * 44);
  EXPECT_EQ(eq->in("offset").shape[2], 3);
  EXPECT_EQ(eq->in("offset").shape[3], 7);
  proves("opencv-area-fractional", c, 1e-3);
}

TEST_F(PeerOpencv, AreaGrowingIsALinearFilter) {
  REQUIRE_OPENCV(*cv);
  // 3 -> 4, s = 3/4: dx 1: sx = 0, f = 2 - 4/3 = 2/3 -> x0/3 + 2*x1/3 = 2 on [0, 3, 6];
  // dx 2: sx = 1, f = 3 - 8/3 = 1/3 -> 2*x1/3 + x2/3 = 4. SPEC bins [0,2), [1,3): 1.5, 4.5.
  const Case c = interp({1, 1, 1, 3}, {0, 3, 6}, {{"mode", "area"}, {"size", {1, 4}}});
  const Tensor got = out(*cv, c);
  EXPECT_NEAR(got.data[1], 2.0, 1e-6);
  EXPECT_NEAR(got.data[2], 4.0, 1e-6);
  EXPECT_EQ(out(*ref, c).data, (std::vector<double>{0, 1.5, 4.5, 6}));
  proves("opencv-area-grow-linear", c, 0.5);
}

TEST_F(PeerOpencv, ScaleFactorIsReplacedByTheSizes) {
  REQUIRE_OPENCV(*cv);
  // W 5, sf 1.5: out 7; SPEC's scale 2/3, cv::resize's 5/7 (SPEC §8 "linear, W=5, sf=1.5").
  const Case c = interp({1, 1, 1, 5}, {0, 1, 4, 9, 16},
                        {{"mode", "bilinear"}, {"scale_factor", {1.0, 1.5}}, {"align_corners", false}});
  proves("opencv-scale-from-size", c, 0.01);
}

TEST_F(PeerOpencv, DeclinesWhatCvResizeCannotExpress) {
  REQUIRE_OPENCV(*cv);
  EXPECT_THROW(evaluate(*cv, interp({1, 1, 4}, {1, 2, 3, 4}, {{"mode", "linear"}, {"size", {8}}})), Unsupported);
  EXPECT_THROW(evaluate(*cv, interp({1, 1, 2, 2}, {1, 2, 3, 4}, {{"mode", "bilinear"}, {"size", {3, 3}}, {"align_corners", true}})),
               Unsupported);
}

// The bench's timed run: float32 planes split among the threads. It runs every plane of a batch
// (one plane per image and channel, more planes than threads) and declines as evaluate() does.
TEST_F(PeerOpencv, BenchTimesEveryPlaneAndDeclinesAsEvaluateDoes) {
  REQUIRE_OPENCV(*cv);
  std::vector<double> x(3 * 5 * 4 * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = double(i % 7);
  const std::function<double(int)> run = start_opencv_bench(interp({3, 5, 4, 4}, x, {{"mode", "bilinear"}, {"size", {8, 8}}}), 2);
  for (int pre_runs : {0, 1}) {
    const double ms = run(pre_runs);
    EXPECT_TRUE(std::isfinite(ms) && ms >= 0) << ms;
  }
  EXPECT_THROW(start_opencv_bench(interp({1, 1, 4}, {1, 2, 3, 4}, {{"mode", "linear"}, {"size", {8}}}), 2), Unsupported);
}

}  // namespace
}  // namespace oplab
