// The case generators reach the edges the fuzz issue lists (shown by counting case features
// over fixed-seed campaign cases, not assumed), every valid case validates, and the invalid
// generator breaks a rule almost always.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>

#include "core/backend.h"
#include "core/op_desc.h"
#include "fuzz/features.h"
#include "fuzz/generators.h"
#include "fuzz/ops/interpolate_nearest.h"
#include "fuzz/seeds.h"

namespace oplab {
namespace {

std::map<std::string, int> features_of(const std::string& op, int n) {
  std::map<std::string, int> f;
  for (int i = 0; i < n; ++i) {
    const uint64_t seed = fuzz::case_seed(1, op, uint64_t(i));
    const Case c = fuzz::draw_case(fuzz::gen_case(op), seed, fuzz::case_size(seed));
    EXPECT_NO_THROW(validate_case(c)) << op << " case " << i;
    for (const auto& name : fuzz::case_features(c)) ++f[name];
  }
  std::cout << "[generators] " << op << ":";
  for (const auto& [name, k] : f) std::cout << " {" << name << "}=" << k;
  std::cout << "\n";
  return f;
}

void expect_covered(const std::map<std::string, int>& f, const std::vector<std::string>& edges) {
  for (const auto& e : edges) EXPECT_TRUE(f.count(e)) << "no case exercises: " << e;
}

const std::vector<std::string> kEveryOp = {"N=0", "constant input (ties for max)", "spatial size 1", "odd prime spatial size"};

TEST(FuzzGenerators, DeformConv2dEdges) {
  const auto f = features_of("deform_conv2d", 400);
  expect_covered(f, kEveryOp);
  expect_covered(f, {"sample y=-1", "sample y=0", "sample y=len-1", "sample y=len", "sample x=-1", "sample x=len",
                     "sample y a hair from a border", "sample y far outside", "sample x on an interior lattice point",
                     "weight groups", "offset groups", "mask", "bias", "stride>1", "dilation>1", "padding 0",
                     "1x1 output", "kernel 4 or 5"});
}

TEST(FuzzGenerators, RoiEdges) {
  for (const char* op : {"roi_align", "deform_roi_pool"}) {
    const auto f = features_of(op, 400);
    expect_covered(f, kEveryOp);
    expect_covered(f, {"K=0", "H=0 or W=0", "reversed box", "zero-size box", "box outside the image",
                       "bins with no samples", "sample y=-1", "sample y=0", "sample y=len-1", "sample y=len",
                       "sample y a hair from a border", "sample y far outside", "fixed grid", "adaptive grid",
                       "adaptive grid on an exact integer", "adaptive grid a hair from an integer (ceil jumps)"});
  }
  const auto f = features_of("roi_pool", 400);
  expect_covered(f, kEveryOp);
  expect_covered(f, {"K=0", "round tie (x*s = n + 0.5)", "reversed box", "box outside the image (empty bins)",
                     "more bins than pixels (overlapping bins)"});
}

// One case in eight holds a NaN or +-Inf in its feature map (gen_case): the only way to
// see a kernel that masks an outside tap from one that multiplies an edge pixel by 0, and max
// modes skip NaN.
TEST(FuzzGenerators, FeatureMapsSometimesHoldNonFiniteValues) {
  for (const char* op : {"deform_conv2d", "roi_align", "roi_pool", "deform_roi_pool", "ps_roi_align", "ps_roi_pool",
                         "grid_sample", "ms_deform_attn", "interpolate"}) {
    const auto f = features_of(op, 240);
    const int k = f.count("non-finite feature value") ? f.at("non-finite feature value") : 0;
    EXPECT_GE(k, 10) << op;
    EXPECT_LE(k, 60) << op;
  }
}

TEST(FuzzGenerators, InterpolateEdges) {
  const auto f = features_of("interpolate", 600);
  expect_covered(f, kEveryOp);
  expect_covered(f, {"nearest 1-D", "nearest 2-D", "nearest 3-D", "nearest-exact 1-D", "nearest-exact 2-D",
                     "nearest-exact 3-D", "area 1-D", "area 2-D", "area 3-D", "linear 1-D", "bilinear 2-D",
                     "bicubic 2-D", "trilinear 3-D", "align_corners=true", "align_corners=false", "recompute=true",
                     "recompute=false", "recompute=null", "output size 1", "same size", "downsampling",
                     "non-integer scale factor", "scale factor < 1", "in*sf within 1e-12 of an integer",
                     "nearest source index on a tie", "nearest index differs in float32 and double",
                     "bicubic weights between pixels", "align_corners scale (in-1)/(out-1) not 0 or 1",
                     "linear or cubic axis of several pixels to size 1"});
  // Drawn on purpose, not met by chance: the sizes and factors people write give a float32
  // index that differs from the double one about once in 600 cases; the tables of
  // fuzz/ops/interpolate_nearest.h make it one case in twenty at least.
  const std::string differs = "nearest index differs in float32 and double";
  EXPECT_GE(f.count(differs) ? f.at(differs) : 0, 30);
}

// The index functions the search is built on, on two axes derived by hand (u = 2^-24):
//  * nearest 14 -> 46, dst 23 (exactly 23 * 14/46 = 7). float32: 7/23 lies in [1/4, 1/2), ulp
//    2^-25; 7 * 2^25 / 23 = 10212218.43, so float(7/23) = 10212218 * 2^-25 (rounded down), and
//    23 times it is 234881014 * 2^-25, which float32 (ulp 2^-21 near 7) rounds to
//    14680063 * 2^-21 = 7 - 2^-21: index 6. double: 2^54 = 12 (mod 23), so 7 * 2^54 / 23 has
//    fraction 15/23 and double(7/23) rounds up; 23 times it is >= 7: index 7.
//  * nearest 2 -> 82, dst 41 (exactly 1). float32: 2^29 = 20 (mod 41), fraction 20/41, so
//    float(1/41) rounds down to (2^29 - 20)/41 * 2^-29; 41 times it is 1 - 20 * 2^-29 = 1 - 0.625u,
//    nearer to 1 - u than to 1: index 0. double: 2^58 = 31 (mod 41), fraction 31/41, rounds up:
//    index 1. nearest-exact 2 -> 41 at dst 20 is the same product, (20.5) * float(2/41): 0 and 1.
TEST(FuzzGenerators, NearestFloat32IndexByHand) {
  const InterpAxis a{14, 46, std::nullopt}, b{2, 82, std::nullopt}, e{2, 41, std::nullopt};
  EXPECT_EQ(fuzz::nearest_index_float(a, false, 23), 6);
  EXPECT_EQ(fuzz::nearest_index_double(a, false, 23), 7);
  EXPECT_EQ(fuzz::nearest_index_disagreement(a, false), 23);
  EXPECT_EQ(fuzz::nearest_index_float(b, false, 41), 0);
  EXPECT_EQ(fuzz::nearest_index_double(b, false, 41), 1);
  EXPECT_EQ(fuzz::nearest_index_float(e, true, 20), 0);
  EXPECT_EQ(fuzz::nearest_index_double(e, true, 20), 1);
  // Lattice points both compute exactly: 3 -> 6 (scale 1/2) never differs.
  EXPECT_EQ(fuzz::nearest_index_disagreement(InterpAxis{3, 6, std::nullopt}, false), -1);
}

// The tables the generator draws from: the hand-derived axes are in them, simplest first (so a
// pick shrinks to in = 2), and every entry differs where it says. Among sizes up to 16 -> 64,
// nearest has the one pair 14 -> 46 (the tables stop at in = 13, the largest drawn extent).
TEST(FuzzGenerators, NearestFloat32Tables) {
  auto has = [](const std::vector<fuzz::NearestF32Axis>& t, int64_t in, int64_t out) {
    return std::any_of(t.begin(), t.end(), [&](const auto& x) { return x.in == in && x.out == out; });
  };
  const auto& plain = fuzz::nearest_f32_sizes(false);
  const auto& exact = fuzz::nearest_f32_sizes(true);
  ASSERT_FALSE(plain.empty());
  ASSERT_FALSE(exact.empty());
  EXPECT_EQ(plain[0].in, 2);
  EXPECT_EQ(plain[0].out, 82);
  EXPECT_EQ(exact[0].in, 2);
  EXPECT_EQ(exact[0].out, 41);
  EXPECT_TRUE(has(plain, 2, 82));
  EXPECT_TRUE(has(exact, 2, 41));
  const auto small = fuzz::find_nearest_f32_sizes(false, 16, 64);
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(small[0].in, 14);
  EXPECT_EQ(small[0].out, 46);
  EXPECT_EQ(small[0].dst, 23);
  for (bool ex : {false, true})
    for (const auto* t : {&fuzz::nearest_f32_sizes(ex), &fuzz::nearest_f32_scale_factors(ex)})
      for (const auto& x : *t) {
        const InterpAxis ax{x.in, x.out, x.scale_factor};
        EXPECT_NE(fuzz::nearest_index_float(ax, ex, x.dst), fuzz::nearest_index_double(ax, ex, x.dst));
        if (x.scale_factor) EXPECT_EQ(x.out, int64_t(std::floor(double(x.in) * *x.scale_factor)));
      }
  std::cout << "[generators] float32 nearest tables: " << plain.size() << " sizes, "
            << fuzz::nearest_f32_scale_factors(false).size() << " scale factors (nearest); " << exact.size()
            << " sizes, " << fuzz::nearest_f32_scale_factors(true).size() << " scale factors (nearest-exact)\n";
}

TEST(FuzzGenerators, InvalidCasesBreakARule) {
  for (const auto& d : all_ops()) {
    int refused = 0;
    const int n = 200;
    for (int i = 0; i < n; ++i) {
      const uint64_t seed = fuzz::case_seed(1, d.name, uint64_t(i));
      const Case c = fuzz::draw_case(fuzz::gen_invalid_case(d.name), seed, fuzz::case_size(seed));
      try {
        validate_case(c);
      } catch (const InvalidCase& e) {
        ++refused;
        EXPECT_EQ(std::string(e.what()).rfind(d.name + ": ", 0), 0u) << e.what();
      }
    }
    EXPECT_GE(refused, n * 95 / 100) << d.name;
  }
}

}  // namespace
}  // namespace oplab
