// The case generators reach the edges the fuzz issue lists (shown by counting case features
// over fixed-seed campaign cases, not assumed), every valid case validates, and the invalid
// generator breaks a rule almost always.
#include <gtest/gtest.h>

#include <iostream>
#include <map>

#include "core/backend.h"
#include "core/op_desc.h"
#include "fuzz/features.h"
#include "fuzz/generators.h"
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

TEST(FuzzGenerators, InterpolateEdges) {
  const auto f = features_of("interpolate", 600);
  expect_covered(f, kEveryOp);
  expect_covered(f, {"nearest 1-D", "nearest 2-D", "nearest 3-D", "nearest-exact 1-D", "nearest-exact 2-D",
                     "nearest-exact 3-D", "area 1-D", "area 2-D", "area 3-D", "linear 1-D", "bilinear 2-D",
                     "bicubic 2-D", "trilinear 3-D", "align_corners=true", "align_corners=false", "recompute=true",
                     "recompute=false", "recompute=null", "output size 1", "same size", "downsampling",
                     "non-integer scale factor", "scale factor < 1", "in*sf within 1e-12 of an integer",
                     "nearest source index on a tie"});
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
