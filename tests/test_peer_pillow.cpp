// The pillow peer (Image.resize on mode F): agreement with hand-derived antialias values, and
// each named divergence proven: the peer departs from the reference on the case, and the
// reference on the divergence's equivalent case reproduces the peer. Expected values are
// derived by hand in the comments (SPEC §16 for the reference, Pillow's Resample.c and
// Geometry.c rules for the peer).
#include <gtest/gtest.h>

#include "peer/pillow_backend.h"
#include "reference/ref_backend.h"
#include "tests/peer_divergence_helpers.h"

namespace oplab {
namespace {

using testing::divergence;
using testing::interp;
using testing::max_diff;

#define REQUIRE_PILLOW(b) \
  if (auto why = (b).unavailable_reason()) GTEST_SKIP() << *why;

struct PeerPillow : ::testing::Test {
  std::unique_ptr<Backend> pil = make_pillow_backend();
  std::unique_ptr<Backend> ref = make_ref_backend();
  Tensor out(Backend& b, const Case& c) { return evaluate(b, c).outputs.at("output"); }
  // The divergence applies, the peer differs from the reference by more than `gap`, and the
  // reference on the equivalent case agrees with the peer to float32 rounding.
  void proves(const std::string& name, const Case& c, double gap) {
    const auto eq = divergence(*pil, name).peer_equivalent(c);
    ASSERT_TRUE(eq) << name << " does not apply";
    const Tensor got = out(*pil, c);
    EXPECT_GT(max_diff(got, out(*ref, c)), gap) << name;
    EXPECT_LT(max_diff(got, out(*ref, *eq)), 1e-6) << name;
  }
};

TEST_F(PeerPillow, UnavailableSaysWhyInOneLine) {
  if (auto why = pil->unavailable_reason()) EXPECT_EQ(why->find('\n'), std::string::npos);
  else EXPECT_NE(pil->description().find("Pillow"), std::string::npos);
}

TEST_F(PeerPillow, AntialiasBilinearEightToTwoMatchesHandDerivation) {
  REQUIRE_PILLOW(*pil);
  // tests/test_ref_interpolate_antialias.cpp derives 0.625 / 3.5 and 0.375 / 3.5.
  const Case c = interp({1, 1, 1, 8}, {0, 0, 0, 1, 0, 0, 0, 0},
                        {{"mode", "bilinear"}, {"antialias", true}, {"size", {1, 2}}});
  const Tensor got = out(*pil, c);
  EXPECT_NEAR(got.data[0], 0.625 / 3.5, 1e-7);
  EXPECT_NEAR(got.data[1], 0.375 / 3.5, 1e-7);
}

TEST_F(PeerPillow, PlainBicubicIsTheAntialiasFilter) {
  REQUIRE_PILLOW(*pil);
  // 2 -> 4 on [0, 1]: Pillow's BICUBIC gives -0.0703125 / 0.796875 = -0.0882 at output 0 (a =
  // -0.5, the edge cut), plain bicubic -0.10546875 (tests/test_ref_interpolate_antialias.cpp).
  const Case c = interp({1, 1, 1, 2}, {0, 1}, {{"mode", "bicubic"}, {"size", {1, 4}}});
  EXPECT_NEAR(out(*pil, c).data[0], -0.0703125 / 0.796875, 1e-7);
  proves("pillow-filters-always-antialias", c, 0.01);
}

TEST_F(PeerPillow, PlainBilinearDownscaleIsTheAntialiasFilter) {
  REQUIRE_PILLOW(*pil);
  const Case c = interp({1, 1, 1, 8}, {0, 0, 0, 1, 0, 0, 0, 0}, {{"mode", "bilinear"}, {"size", {1, 2}}});
  proves("pillow-filters-always-antialias", c, 0.1);
}

TEST_F(PeerPillow, NearestTwoToSevenAddsItsSteps) {
  REQUIRE_PILLOW(*pil);
  // s = 2/7: x = 1/7 + 3 * 2/7 = 0.99999999999999989 in double (added step by step): index 0 at
  // dst 3. SPEC: 3.5 * float32(2/7) = 1.0000000 in float32: index 1.
  const Case c = interp({1, 1, 1, 2}, {10, 20}, {{"mode", "nearest-exact"}, {"size", {1, 7}}});
  const Tensor got = out(*pil, c);
  EXPECT_EQ(got.data[3], 10);
  EXPECT_EQ(out(*ref, c).data[3], 20);
  proves("pillow-nearest-accumulated-index", c, 5);
}

TEST_F(PeerPillow, BoxFiveToThreeIsNotArea) {
  REQUIRE_PILLOW(*pil);
  // s = 5/3: output 1's centre 2.5, the box (1.67, 3.33] holds pixel 2's centre only: 4.
  // Area's bin [1, 4): (2 + 4 + 8) / 3. Outputs 0 and 2 read {0, 1} and {3, 4} in both.
  const Case c = interp({1, 1, 1, 5}, {1, 2, 4, 8, 16}, {{"mode", "area"}, {"size", {1, 3}}});
  const Tensor got = out(*pil, c);
  EXPECT_NEAR(got.data[0], 1.5, 1e-6);
  EXPECT_NEAR(got.data[1], 4.0, 1e-6);
  EXPECT_NEAR(got.data[2], 12.0, 1e-6);
  EXPECT_NEAR(out(*ref, c).data[1], 14.0 / 3.0, 1e-12);
  proves("pillow-box-not-area", c, 0.5);
}

TEST_F(PeerPillow, ScaleFactorIsReplacedByTheSizes) {
  REQUIRE_PILLOW(*pil);
  // W 5, sf 1.5: out 7; SPEC's scale 2/3, Image.resize's 5/7.
  const Case c = interp({1, 1, 1, 5}, {0, 1, 4, 9, 16},
                        {{"mode", "bilinear"}, {"antialias", true}, {"scale_factor", {1.0, 1.5}}});
  proves("pillow-scale-from-size", c, 0.01);
}

TEST_F(PeerPillow, DeclinesWhatImageResizeCannotExpress) {
  REQUIRE_PILLOW(*pil);
  EXPECT_THROW(evaluate(*pil, interp({1, 1, 4}, {1, 2, 3, 4}, {{"mode", "linear"}, {"size", {8}}})), Unsupported);
  EXPECT_THROW(evaluate(*pil, interp({1, 1, 2, 2}, {1, 2, 3, 4}, {{"mode", "nearest"}, {"size", {3, 3}}})), Unsupported);
  EXPECT_THROW(evaluate(*pil, interp({1, 1, 2, 2}, {1, 2, 3, 4}, {{"mode", "bilinear"}, {"size", {3, 3}}, {"align_corners", true}})),
               Unsupported);
}

}  // namespace
}  // namespace oplab
