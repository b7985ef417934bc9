// The cases gradcheck checks per op (gradcheck_cases) reach the op's edges: with the 30 cases
// per op of `oplab gradcheck --cases 30 --seed 1` (what scripts/main.sh runs), every op's
// stated features are covered (interpolate's bicubic coefficients and align_corners scale
// among them), at most one case in ten is empty, and the selection is deterministic.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <set>

#include "core/backend.h"
#include "core/case_io.h"
#include "core/op_desc.h"
#include "fuzz/features.h"
#include "gradcheck/runner.h"

namespace oplab::gradcheck {
namespace {

constexpr int kCases = 30;
constexpr uint64_t kSeed = 1;

bool empty_case(const Case& c) {
  for (const auto& [name, t] : c.inputs)
    if (t.numel() == 0) return true;
  return c.grad_output && c.grad_output->numel() == 0;
}

std::map<std::string, int> features_of(const std::vector<Case>& cases) {
  std::map<std::string, int> f;
  for (const Case& c : cases)
    for (const auto& name : fuzz::case_features(c)) ++f[name];
  return f;
}

// What each op's 30 cases must cover: its empty tensors (within the quota of one in ten) and
// the op's own edges that change its backward (modes, groups, strides, coordinates on a border
// or a lattice point, empty bins, adaptive grids on a jump, nearest's float32 index), as
// fuzz/ops/<op>.cpp names them. The plain prefix of the sample that gradcheck took before
// missed, with seed 1: weight and offset groups, stride and dilation (deform_conv2d); sample
// x = 0, interior lattice points, N = 0 and H = 0 (roi_align); interior lattice points
// (deform_roi_pool, ps_roi_align); linear 1-D, trilinear, align_corners=false, a resampling
// align_corners scale and a linear axis to size 1 (interpolate; its 3 bicubic cases had
// weights between pixels only once the generator drew nearest's float32 axes, by chance); and
// 2 ps_roi_pool cases read more than one bin.
const std::map<std::string, std::vector<std::string>> kStated = {
    {"deform_conv2d",
     {"N=0", "mask", "bias", "weight groups", "offset groups", "stride>1", "dilation>1", "padding 0", "kernel 4 or 5",
      "sample y=-1", "sample y=len", "sample x=-1", "sample x=len", "sample y a hair from a border",
      "sample y on an interior lattice point", "sample x on an interior lattice point"}},
    {"roi_pool",
     {"N=0", "K=0", "H=0 or W=0", "round tie (x*s = n + 0.5)", "reversed box",
      "box outside the image (empty bins)", "more bins than pixels (overlapping bins)"}},
    {"roi_align",
     {"N=0", "K=0", "H=0 or W=0", "max mode", "avg mode", "aligned", "not aligned", "fixed grid", "adaptive grid",
      "bins with no samples", "adaptive grid on an exact integer", "adaptive grid a hair from an integer (ceil jumps)",
      "sample y=-1", "sample y=0", "sample y=len-1", "sample y=len", "sample x=-1", "sample x=0", "sample x=len",
      "sample y on an interior lattice point", "sample x on an interior lattice point"}},
    {"deform_roi_pool",
     {"N=0", "K=0", "H=0 or W=0", "offset", "no offset", "fixed grid", "adaptive grid", "bins with no samples",
      "sample y=-1", "sample y=len", "sample x=-1", "sample x=len", "sample y on an interior lattice point",
      "sample x on an interior lattice point"}},
    {"interpolate",
     {"N=0", "nearest 1-D", "nearest 2-D", "nearest 3-D", "nearest-exact 1-D", "nearest-exact 2-D", "nearest-exact 3-D",
      "area 1-D", "area 2-D", "area 3-D", "linear 1-D", "bilinear 2-D", "bicubic 2-D", "trilinear 3-D",
      "bicubic weights between pixels", "align_corners=true", "align_corners=false",
      "align_corners scale (in-1)/(out-1) not 0 or 1", "linear or cubic axis of several pixels to size 1",
      "recompute=true", "downsampling", "scale factor < 1", "nearest source index on a tie",
      "nearest index differs in float32 and double"}},
    {"ps_roi_align",
     {"N=0", "K=0", "H=0 or W=0", "several bins reading the image", "fixed grid", "adaptive grid",
      "bins with no samples", "sample y=-1", "sample y=len", "sample x=-1", "sample x=len",
      "sample y on an interior lattice point", "sample x on an interior lattice point"}},
    {"ps_roi_pool",
     {"N=0", "K=0", "H=0 or W=0", "several bins reading the image", "round tie (x*s = n + 0.5)", "reversed box",
      "more bins than pixels (overlapping bins)"}},
    {"grid_sample",
     {"bilinear 2-D", "nearest 2-D", "bicubic 2-D", "bilinear 3-D", "padding zeros", "padding border",
      "padding reflection", "align_corners=true", "align_corners=false", "coordinate on a pixel centre",
      "coordinate on a half-pixel edge", "grid value outside [-1, 1]", "axis of one pixel"}},
    {"ms_deform_attn",
     {"N=0", "1 level", "4 levels", "level of size 1", "sample on a pixel centre (floor switch)",
      "sample exactly on a cut-off (-1 or size)", "sample partly outside its level", "sample outside its level",
      "location exactly 0 or 1"}},
};

// The position-sensitive ops' drawn boxes mostly read no pixel (a zero gradient), so covering
// the one case that does is not enough: a fifth of their cases must read several bins.
const std::map<std::string, std::pair<std::string, int>> kAtLeast = {
    {"ps_roi_align", {"several bins reading the image", kCases / 5}},
    {"ps_roi_pool", {"several bins reading the image", kCases / 5}},
};

class GradcheckCases : public ::testing::TestWithParam<std::string> {};

TEST_P(GradcheckCases, CoverTheStatedFeatures) {
  const std::string op = GetParam();
  const std::vector<Case> cases = gradcheck_cases(op, kCases, kSeed);
  const auto f = features_of(cases);
  std::cout << "[gradcheck cases] " << op << ":";
  for (const auto& [name, k] : f) std::cout << " {" << name << "}=" << k;
  std::cout << "\n";
  if (auto it = kAtLeast.find(op); it != kAtLeast.end()) {
    const auto& [name, least] = it->second;
    EXPECT_GE(f.count(name) ? f.at(name) : 0, least) << op << ": too few gradcheck cases exercise " << name;
  }
  ASSERT_EQ(int(cases.size()), kCases);
  for (const auto& name : kStated.at(op)) EXPECT_TRUE(f.count(name)) << op << ": no gradcheck case exercises " << name;
}

INSTANTIATE_TEST_SUITE_P(AllOps, GradcheckCases, ::testing::Values("deform_conv2d", "roi_pool", "roi_align",
                                                                    "deform_roi_pool", "interpolate", "ps_roi_align",
                                                                    "ps_roi_pool", "grid_sample", "ms_deform_attn"));

TEST(GradcheckCases, EveryOpIsStated) {
  for (const auto& d : all_ops()) EXPECT_TRUE(kStated.count(d.name)) << d.name;
}

// One empty case in ten at most (a finite difference has nothing to say about them), every
// case valid, and the same cases for the same seed.
TEST(GradcheckCases, FewEmptiesValidAndDeterministic) {
  for (const auto& d : all_ops()) {
    const std::vector<Case> a = gradcheck_cases(d.name, kCases, kSeed), b = gradcheck_cases(d.name, kCases, kSeed);
    int empties = 0;
    for (const Case& c : a) {
      empties += empty_case(c);
      EXPECT_NO_THROW(validate_case(c)) << d.name;
    }
    EXPECT_LE(empties, kCases / 10) << d.name;
    ASSERT_EQ(a.size(), b.size()) << d.name;
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_EQ(case_to_json(a[i]).dump(), case_to_json(b[i]).dump()) << d.name << " case " << i;
  }
}

}  // namespace
}  // namespace oplab::gradcheck
