// The kink finders (gradcheck/kinks_*.cpp): what a step meets, on hand-built cases where the
// kinks are known, and on the fixed-seed edge-aimed cases of every op, where a finder that
// missed a kink would let a "smooth" interval contain one (the third differences show it).
#include <gtest/gtest.h>

#include <cmath>

#include "core/op_desc.h"
#include "fuzz/generators.h"
#include "gradcheck/eval.h"
#include "gradcheck/fd.h"
#include "gradcheck/kinks.h"
#include "gradcheck/kinks_ops.h"
#include "reference/ref_backend.h"

namespace oplab::gradcheck {
namespace {

Tensor tensor(Shape s, std::vector<double> d) {
  Tensor t(std::move(s));
  t.data = std::move(d);
  return t;
}

TEST(GradKinks, LatticeSourceReach) {
  KinkSource s = zero_padded_axis(2.25, 5, {{0, 1.0}}, true);
  KinkReach r;
  add_source_reach(s, 1.0, r);
  EXPECT_DOUBLE_EQ(r.ahead, 0.75);
  EXPECT_DOUBLE_EQ(r.behind, 0.25);
  EXPECT_FALSE(r.on_kink());
  // A falling coordinate meets the integer below first: t is in input units (rate -2).
  KinkReach f;
  add_source_reach(s, -2.0, f);
  EXPECT_DOUBLE_EQ(f.ahead, 0.125);
  EXPECT_DOUBLE_EQ(f.behind, 0.375);
  // Exactly on -1: a kink at t = 0, named; the next ones are 0 above and none below.
  KinkReach e;
  add_source_reach(zero_padded_axis(-1.0, 5, {{0, 1.0}}, true), 1.0, e);
  EXPECT_EQ(e.at, std::set<std::string>{"y=-1"});
  EXPECT_DOUBLE_EQ(e.ahead, 1.0);
  EXPECT_EQ(e.behind, kInf);
  // Far outside the range: the nearest kink is the range's end.
  KinkReach o;
  add_source_reach(zero_padded_axis(-7.5, 5, {{0, 1.0}}, true), 1.0, o);
  EXPECT_DOUBLE_EQ(o.ahead, 6.5);
  EXPECT_EQ(o.behind, kInf);
  // A coordinate that does not move meets nothing.
  KinkReach z;
  add_source_reach(s, 0.0, z);
  EXPECT_EQ(z.clearance(), kInf);
}

TEST(GradKinks, RoiRuleNamesItsKinks) {
  for (auto [v, name] : std::vector<std::pair<double, std::string>>{
           {-1, "y=-1 (jump)"}, {0, "y=0 (clamp)"}, {2, "y=1..H-2"}, {4, "y=H-1 (clamp)"}, {5, "y=H (jump)"}}) {
    KinkReach r;
    add_source_reach(roi_rule_axis(v, 5, {{0, 1.0}}, true), 1.0, r);
    EXPECT_EQ(r.at, std::set<std::string>{name}) << v;
  }
}

// deform_conv2d, 1x1 kernel on a 1x1x3x3 image: offset elements 0 (Δy) and 1 (Δx) of the
// single output pixel (0, 0) move its sample row and column at rate 1.
Case dcn_case(double dy, double dx) {
  Case c;
  c.op = "deform_conv2d";
  c.inputs["input"] = tensor({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  c.inputs["offset"] = tensor({1, 2, 3, 3}, std::vector<double>(18, 0.25));
  c.inputs["offset"].data[0] = dy;
  c.inputs["offset"].data[9] = dx;
  c.inputs["weight"] = tensor({1, 1, 1, 1}, {1.5});
  c.grad_output = tensor({1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  return c;
}

TEST(GradKinks, DeformConvOffsetMovesItsSample) {
  const Case c = dcn_case(-1.0, 0.5);
  const auto r = reach_each(c, "offset");
  EXPECT_EQ(r[0].at, std::set<std::string>{"y=-1"});
  EXPECT_DOUBLE_EQ(r[9].clearance(), 0.5);  // x = 0.5: integers 0 and 1 at distance 0.5
  EXPECT_DOUBLE_EQ(r[1].clearance(), 0.25);  // a neighbour at 0.25 from its lattice point
  EXPECT_TRUE(op_kinks("deform_conv2d").affine(c, "input"));
  EXPECT_TRUE(op_kinks("deform_conv2d").affine(c, "weight"));
  EXPECT_FALSE(op_kinks("deform_conv2d").affine(c, "offset"));
  for (const auto& e : reach_each(c, "input")) EXPECT_EQ(e.clearance(), kInf);
}

Case roi_pool_case(std::vector<double> pixels) {
  Case c;
  c.op = "roi_pool";
  c.params = json{{"output_size", {1, 1}}, {"spatial_scale", 1.0}};
  c.inputs["input"] = tensor({1, 1, 1, 3}, std::move(pixels));
  c.inputs["rois"] = tensor({1, 5}, {0, 0, 0, 2, 0});  // the whole row: one bin of 3 pixels
  c.grad_output = tensor({1, 1, 1, 1}, {1});
  return c;
}

TEST(GradKinks, RoiPoolArgmaxFromTheValues) {
  // 5 wins; 3 is 2 below it: raising pixel 0 by 2 (or lowering pixel 1 by 2) switches.
  const auto r = reach_each(roi_pool_case({3, 5, 1}), "input");
  EXPECT_DOUBLE_EQ(r[0].ahead, 2.0);
  EXPECT_EQ(r[0].behind, kInf);
  EXPECT_DOUBLE_EQ(r[1].behind, 2.0);
  EXPECT_DOUBLE_EQ(r[2].ahead, 4.0);
  // A tie: the first pixel wins; moving either of the two is a kink at t = 0.
  const auto t = reach_each(roi_pool_case({5, 5, 1}), "input");
  EXPECT_EQ(t[0].at, std::set<std::string>{"argmax tie"});
  EXPECT_EQ(t[1].at, std::set<std::string>{"argmax tie"});
  EXPECT_FALSE(t[2].on_kink());
}

TEST(GradKinks, RoiAlignMaxTiesAndAvgIsAffine) {
  Case c;
  c.op = "roi_align";
  c.params = json{{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", 2}, {"aligned", false},
                  {"pool_mode", "max"}};
  // Box x in [0, 2] on a 1x1x1x3 row: samples at x = 0.5 and 1.5 (both rows y = 0.25, 0.75
  // clamp to row 0), values 1.5 and 1.5 on [1, 2, 1]: an exact tie.
  c.inputs["input"] = tensor({1, 1, 1, 3}, {1, 2, 1});
  c.inputs["rois"] = tensor({1, 5}, {0, 0, 0, 2, 1});
  c.grad_output = tensor({1, 1, 1, 1}, {1});
  const auto r = reach_each(c, "input");
  EXPECT_EQ(r[0].at, std::set<std::string>{"max tie"});
  EXPECT_EQ(r[2].at, std::set<std::string>{"max tie"});
  // Pixel 1 is read by both tied samples with the same weight: the tie moves with it.
  EXPECT_FALSE(r[1].on_kink());
  c.params["pool_mode"] = "avg";
  EXPECT_TRUE(op_kinks("roi_align").affine(c, "input"));
  for (const auto& e : reach_each(c, "input")) EXPECT_EQ(e.clearance(), kInf);
}

TEST(GradKinks, DeformRoiPoolOffsetRateIsGammaTimesBox) {
  Case c;
  c.op = "deform_roi_pool";
  c.params = json{{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", 1}, {"gamma", 0.5}};
  c.inputs["input"] = Tensor(Shape{1, 1, 4, 4}, 1.0);
  // Aligned box from (0.5, 0.5) to (2.5, 2.5) -> start 0, size 2, one sample at (1, 1).
  c.inputs["rois"] = tensor({1, 5}, {0, 0.5, 0.5, 2.5, 2.5});
  c.inputs["offset"] = tensor({1, 2, 1, 1}, {0.25, 0.0});  // x moves by 0.5 * 2 * 0.25 = 0.25
  c.grad_output = tensor({1, 1, 1, 1}, {1});
  const auto r = reach_each(c, "offset");
  // x = 1.25: integers 1 and 2 at 0.25 and 0.75, in offset units / (gamma * rw = 1).
  EXPECT_DOUBLE_EQ(r[0].behind, 0.25);
  EXPECT_DOUBLE_EQ(r[0].ahead, 0.75);
  EXPECT_EQ(r[1].at, std::set<std::string>{"y=1..H-2"});  // y = 1 exactly
}

TEST(GradKinks, UnknownOpHasNoFinder) {
  EXPECT_FALSE(has_kink_finder("no_such_op"));
  // A missing finder is an error naming the op, never a finder that silently knows no kinks.
  EXPECT_THROW(op_kinks("no_such_op"), MissingTrait);
  for (const auto& d : all_ops()) EXPECT_TRUE(has_kink_finder(d.name)) << d.name;
}

// Completeness, on the edge-aimed fixed-seed cases of every op: wherever a finder says an
// element's kinks are at least `clearance` away, s(t) = <v, f(x + t e_i)> is one quadratic on
// [-clearance/2, clearance/2], so its third differences vanish to rounding (its fourth, for an
// op whose pieces are cubic). A missed kink
// (a floor, a cut-off, a switched winner) inside that interval would break them.
TEST(GradKinks, FindersMissNoKinkOnTheFixedSeedCases) {
  auto ref = make_ref_backend();
  int intervals = 0;
  for (const auto& d : all_ops()) {
    for (const Case& c : fuzz::sample_cases(d.name, 24, 1234)) {
      if (!all_finite(c)) continue;
      for (const std::string& input : grad_inputs(c)) {
        const Tensor& x = c.in(input);
        const auto reach = reach_each(c, input);
        const double h0 = base_step(c, input);
        for (int64_t i = 0; i < x.numel(); i += std::max<int64_t>(1, x.numel() / 6)) {
          const KinkReach& r = reach[size_t(i)];
          if (r.on_kink()) continue;
          const double d4 = std::min(h0, r.clearance() / 2) / 2;  // points at 0, ±d4, ±2 d4
          std::vector<double> s;
          double mag = 0;
          for (int k = -2; k <= 2; ++k) {
            Tensor xt = x;
            xt.data[size_t(i)] += k * d4;
            const Tensor f = forward(*ref, with_input(c, input, xt));
            s.push_back(dot(*c.grad_output, f));
            for (size_t j = 0; j < f.data.size(); ++j) mag += std::fabs(c.grad_output->data[j] * f.data[j]);
          }
          double third1 = s[3] - 3 * s[2] + 3 * s[1] - s[0], third2 = s[4] - 3 * s[3] + 3 * s[2] - s[1];
          // A cubic piece (grid_sample's bicubic, OpKinks::piece_degree): its fourth difference
          // vanishes instead.
          if (piece_degree(c, input) == 3) third1 = third2 = s[4] - 4 * s[3] + 6 * s[2] - 4 * s[1] + s[0];
          // Rounding: of each evaluation (64 u of the terms' magnitude), and of the perturbed
          // input itself, x + k d4 held to a double's u (|x| + 1) -- the + 1 for a normalised
          // coordinate, which grid_sample shifts by 1 before scaling it by W / 2 -- which moves
          // s by up to that times its slope; the differences weigh four values by at most 1, 3,
          // 3, 1 (8 in all; on grid_sample's 9-pixel axes this is the larger term). A missed
          // kink moves them by its jump times d4, orders of magnitude more.
          const double slope = std::fabs(s[3] - s[1]) / (2 * d4);
          const double noise =
              64 * 0x1.0p-53 * mag + 8 * 0x1.0p-53 * (std::fabs(x.data[size_t(i)]) + 1 + 2 * d4) * slope;
          EXPECT_LE(std::fabs(third1), noise) << d.name << " " << input << "[" << i << "] clearance " << r.clearance();
          EXPECT_LE(std::fabs(third2), noise) << d.name << " " << input << "[" << i << "] clearance " << r.clearance();
          ++intervals;
        }
      }
    }
  }
  EXPECT_GT(intervals, 300);
}

}  // namespace
}  // namespace oplab::gradcheck
