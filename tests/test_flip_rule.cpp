// The flip rule (compare/flip_rule.h): a boundary flip may only explain what the backend's own
// rounding can do. For a float32 backend that follows the Halide kernels' precision, a failing
// element is a flip only when the reference on the float32-rounded case (with the op's kernel
// rounding) or a max tie explains it; coordinates nudged a few ulps away no longer do, since a
// real border bug looks exactly like such a nudge. Flips are counted per decision kind and
// held to a budget per op x backend.
//
// The proof: two seeded float32 bugs (variants/bug_roialign_end_cutoff.cpp,
// variants/bug_roipool_half_even.cpp) that the nudges passed as flips now fail the fixed
// 300-case sample, while every Halide backend passes that sample of every op within its budget.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iostream>
#include <memory>

#include "cli/builtin_backends.h"
#include "compare/accuracy_stats.h"
#include "compare/float_compare.h"
#include "compare/op_compare.h"
#include "core/op_desc.h"
#include "fuzz/generators.h"
#include "tests/halide_backends.h"

namespace oplab {
namespace {

constexpr int kSampleCases = 300;
constexpr uint64_t kSampleSeed = 1;

Backend& ref() { return *builtin_backends().find("ref"); }

Backend& backend(const std::string& name) {
  Backend* b = builtin_backends().find(name);
  if (!b) throw std::runtime_error(name + " is not built in");
  return *b;
}

// A float32 kernel in a test: the reference on a transformed case, stored as float32, that
// declares the Halide kernels' precision (Backend::geometry_as_reference, compare/flip_rule.h).
class Float32Fake : public Backend {
 public:
  explicit Float32Fake(std::function<Case(Case)> on_case) : on_case_(std::move(on_case)) {}
  std::string name() const override { return "float32-fake"; }
  std::string description() const override { return "test double"; }
  bool is_float32() const override { return true; }
  bool geometry_as_reference() const override { return true; }
  Result run(const Case& c, const ValidParams&) override {
    Result r = evaluate(ref(), on_case_(c));  // validated again: the transform may change params
    for (auto* m : {&r.outputs, &r.grads})
      for (auto& [k, t] : *m)
        for (double& v : t.data) v = double(float(v));
    return r;
  }

 private:
  std::function<Case(Case)> on_case_;
};

// The same backend with its precision undeclared: judged by the nudging rule, the rule every
// float32 backend was judged by before.
class Undeclared : public Backend {
 public:
  explicit Undeclared(Backend& inner) : inner_(inner) {}
  std::string name() const override { return inner_.name() + " (undeclared precision)"; }
  std::string description() const override { return inner_.description(); }
  bool is_float32() const override { return inner_.is_float32(); }  // float32, rounding undeclared
  std::optional<std::string> unavailable_reason() const override { return inner_.unavailable_reason(); }
  std::optional<std::string> unsupported_reason(const Case& c) const override { return inner_.unsupported_reason(c); }
  Result run(const Case& c, const ValidParams& vp) override { return inner_.run(c, vp); }

 private:
  Backend& inner_;
};

int64_t flips_of(const compare::FloatOutcome& o, compare::FlipKind k) { return o.flips[size_t(k)]; }

// A kernel that decides as the reference does has the op's budget (none for interpolate,
// whose Halide kernels never flip); one that rounds its coordinates its own way gets at least
// 2% of cases.
TEST(FlipRule, ABackendOfItsOwnRoundingHasASmallBudgetWhereTheOpHasNone) {
  Float32Fake declared([](Case c) { return c; });
  Undeclared undeclared(declared);
  EXPECT_EQ(compare::flip_budget("interpolate", declared), 0.0);
  EXPECT_EQ(compare::flip_budget("interpolate", undeclared), 0.02);
  const double roi_align = compare::op_compare("roi_align").flip_budget;
  EXPECT_EQ(compare::flip_budget("roi_align", declared), roi_align);
  EXPECT_EQ(compare::flip_budget("roi_align", undeclared), std::max(roi_align, 0.02));
}

// ---------------------------------------------------------------- the rule on hand cases

// roi_align over a 1x1x4x4 ramp, one bin, fixed grid 2: aligned=false, y1 = -1.5, y2 = 0.5
// puts the first sample row exactly on y = -1, the range cut-off (in range, reads row 0).
Case cutoff_case(double y1 = -1.5) {
  Case c;
  c.op = "roi_align";
  c.params = json{{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", 2}, {"aligned", false}};
  Tensor x({1, 1, 4, 4});
  for (int i = 0; i < 16; ++i) x.data[size_t(i)] = 1 + i;
  c.inputs["input"] = x;
  Tensor rois({1, 5});
  rois.data = {0, 0.25, y1, 2.25, 0.5};
  c.inputs["rois"] = rois;
  return c;
}

TEST(FlipRule, EveryOpListsItsDecisionsAndStatesABudget) {
  for (const std::string& op : op_names()) {
    const compare::OpCompare& t = compare::op_compare(op);
    EXPECT_NE(t.decisions, nullptr) << op;
    EXPECT_GE(t.flip_budget, 0.0) << op;
    EXPECT_LT(t.flip_budget, 0.5) << op << ": a budget that allows most cases to flip decides nothing";
    // A case differs from itself in no decision: its flips are named by the value kind.
    for (const Case& c : fuzz::sample_cases(op, 5, kSampleSeed))
      EXPECT_EQ(compare::flip_kind_between(c, c), t.value_flip) << op;
  }
}

TEST(FlipRule, TheHalideKernelsAreJudgedByTheirRounding) {
  for (Backend* b : runnable_halide_backends("flip"))
    EXPECT_EQ(compare::flip_rule(*b), compare::FlipRule::KernelRounding) << b->name();
  EXPECT_EQ(compare::flip_rule(backend("bug-roialign-end-cutoff")), compare::FlipRule::KernelRounding);
  EXPECT_EQ(compare::flip_rule(backend("bug-roipool-half-even")), compare::FlipRule::KernelRounding);
  Undeclared u(ref());
  EXPECT_EQ(compare::flip_rule(u), compare::FlipRule::NearbyCoordinates);
}

TEST(FlipRule, ANudgeExplainsNothingForAKernelThatRoundsOnlyItsInputs) {
  // The box starts one float32 ulp lower than the case says, though -1.5 is a float32: the
  // kernel's own rounding cannot have moved it, so the sample falling just outside is a bug.
  Float32Fake shifted([](Case c) {
    c.inputs["rois"].at(0, 2) = double(std::nextafter(-1.5f, -2.0f));
    return c;
  });
  const Case c = cutoff_case();
  ASSERT_NE(evaluate(ref(), c).outputs.at("output").data[0], evaluate(shifted, c).outputs.at("output").data[0]);
  const compare::FloatOutcome strict = compare::compare_float_backend(ref(), shifted, c);
  EXPECT_EQ(strict.verdict, compare::Verdict::Disagree) << strict.detail;
  EXPECT_EQ(strict.rule, compare::FlipRule::KernelRounding);
  // Of undeclared precision, the same result is a range cut-off flip (the old rule).
  Undeclared nearby(shifted);
  const compare::FloatOutcome loose = compare::compare_float_backend(ref(), nearby, c);
  EXPECT_EQ(loose.verdict, compare::Verdict::BoundaryFlip) << loose.detail;
  EXPECT_GT(flips_of(loose, compare::FlipKind::RangeCutoff), 0);
}

TEST(FlipRule, TheRoundingOfADoubleCoordinateIsARangeCutoffFlip) {
  // y1 = -1.5 - 1e-12 is no float32: in double the first sample row lies just below -1 (out of
  // range, 0), while the kernel reads y1 = -1.5f and samples exactly -1 (in range, row 0).
  const Case c = cutoff_case(-1.5 - 1e-12);
  Float32Fake kernel([](Case k) { return compare::float_rounded_case(k); });
  ASSERT_NE(evaluate(ref(), c).outputs.at("output").data[0], evaluate(kernel, c).outputs.at("output").data[0]);
  const compare::FloatOutcome o = compare::compare_float_backend(ref(), kernel, c);
  EXPECT_EQ(o.verdict, compare::Verdict::BoundaryFlip) << o.detail;
  EXPECT_EQ(flips_of(o, compare::FlipKind::RangeCutoff), 1);
  EXPECT_EQ(compare::flip_kind_between(c, compare::float_rounded_case(c)), compare::FlipKind::RangeCutoff);
}

// roi_pool over one row of 40 pixels, 1e3 planted at column 31; box x from 45 to 47 at
// spatial_scale 0.7. In double 45 * 0.7 = 31.499999999999996 rounds to 31 and the bin is
// columns 31..33 (max 1e3); the kernels scale in float32, 45 * 0.7f = 31.5 exactly, which
// rounds to 32: columns 32..33.
Case roi_pool_case(double x1, double x2, double scale) {
  Case c;
  c.op = "roi_pool";
  c.params = json{{"output_size", {1, 1}}, {"spatial_scale", scale}};
  Tensor x({1, 1, 1, 40});
  for (int i = 0; i < 40; ++i) x.data[size_t(i)] = i;
  x.data[31] = 1e3;
  c.inputs["input"] = x;
  Tensor rois({1, 5});
  rois.data = {0, x1, 0, x2, 0};
  c.inputs["rois"] = rois;
  Tensor g({1, 1, 1, 1});
  g.data = {1};
  c.grad_output = g;
  return c;
}

TEST(FlipRule, RoiPoolCornersAreScaledInFloat32LikeTheKernels) {
  const Case c = roi_pool_case(45, 47, 0.7);
  Float32Fake kernel([](Case k) { return compare::float_rounded_case(k); });
  ASSERT_EQ(evaluate(ref(), c).outputs.at("output").data[0], 1e3);
  ASSERT_EQ(evaluate(kernel, c).outputs.at("output").data[0], 33);
  const compare::FloatOutcome o = compare::compare_float_backend(ref(), kernel, c);
  EXPECT_EQ(o.verdict, compare::Verdict::BoundaryFlip) << o.detail;
  EXPECT_GT(flips_of(o, compare::FlipKind::Round), 0);
  // Every halide backend takes this decision the same way.
  for (Backend* b : runnable_halide_backends()) {
    const compare::FloatOutcome h = compare::compare_float_backend(ref(), *b, c);
    EXPECT_EQ(h.verdict, compare::Verdict::BoundaryFlip) << b->name() << ": " << h.detail;
  }
}

TEST(FlipRule, RoundingHalfToEvenFailsWhereNudgesCalledItAFlip) {
  // x1 * s = 2.5 and x2 * s = 4.5 exactly, in double and in float32: C round gives 3 and 5
  // (columns 3..5, max 5), half to even 2 and 4 (columns 2..4, max 1e3 planted at 2).
  Case c = roi_pool_case(5, 9, 0.5);
  c.inputs["input"].data[2] = 1e3;
  Backend& bug = backend("bug-roipool-half-even");
  ASSERT_EQ(evaluate(ref(), c).outputs.at("output").data[0], 5);
  ASSERT_EQ(evaluate(bug, c).outputs.at("output").data[0], 1e3);
  EXPECT_EQ(compare::compare_float_backend(ref(), bug, c).verdict, compare::Verdict::Disagree);
  Undeclared nearby(bug);
  const compare::FloatOutcome loose = compare::compare_float_backend(ref(), nearby, c);
  EXPECT_EQ(loose.verdict, compare::Verdict::BoundaryFlip) << loose.detail;
  EXPECT_GT(flips_of(loose, compare::FlipKind::Round), 0);
}

TEST(FlipRule, ASampleExactlyOnTheFarEdgeFailsWhereNudgesCalledItAFlip) {
  // Legacy box y from 3.5 to 4.5 on the 4-row ramp, one bin, one sample: y = 3.5 + 0.5 = 4 = H,
  // in range (row 3 replicated, 14.25 at x = 1.25). The bug reads 0; a box nudged a few ulps
  // down the same.
  Case c = cutoff_case();
  c.params["sampling_ratio"] = 1;
  c.inputs["rois"].data = {0, 0.25, 3.5, 2.25, 4.5};
  Tensor g({1, 1, 1, 1});
  g.data = {1};
  c.grad_output = g;
  Backend& bug = backend("bug-roialign-end-cutoff");
  ASSERT_NE(evaluate(ref(), c).outputs.at("output").data[0], 0.0);
  ASSERT_EQ(evaluate(bug, c).outputs.at("output").data[0], 0.0);
  EXPECT_EQ(compare::compare_float_backend(ref(), bug, c).verdict, compare::Verdict::Disagree);
  Undeclared nearby(bug);
  const compare::FloatOutcome loose = compare::compare_float_backend(ref(), nearby, c);
  EXPECT_EQ(loose.verdict, compare::Verdict::BoundaryFlip) << loose.detail;
  EXPECT_GT(flips_of(loose, compare::FlipKind::RangeCutoff), 0);
}

TEST(FlipRule, FlipsAreCountedPerKindAgainstTheBudget) {
  compare::AccuracyStats stats;
  compare::FloatOutcome pass, flip;
  pass.flip_budget = flip.flip_budget = 0.1;
  flip.verdict = compare::Verdict::BoundaryFlip;
  flip.flips[size_t(compare::FlipKind::Floor)] = 3;
  flip.flips[size_t(compare::FlipKind::RangeCutoff)] = 1;
  const Case c = cutoff_case();
  for (int i = 0; i < 9; ++i) stats.add(c, pass);
  stats.add(c, flip);
  EXPECT_EQ(stats.cases(), 10);
  EXPECT_EQ(stats.flipped_cases(), 1);
  EXPECT_EQ(stats.flipped_cases(compare::FlipKind::Floor), 1);
  EXPECT_EQ(stats.flipped_elements(compare::FlipKind::Floor), 3);
  EXPECT_EQ(stats.flipped_cases(compare::FlipKind::RangeCutoff), 1);
  EXPECT_FALSE(stats.over_flip_budget()) << stats.flip_summary();  // 1 of 10 is the budget
  const json j = stats.to_json();
  EXPECT_EQ(j.at("boundary_flips_by_kind").at("floor"), 1);
  EXPECT_EQ(j.at("flipped_elements_by_kind").at("floor"), 3);
  EXPECT_EQ(j.at("flip_budget"), 0.1);
  EXPECT_EQ(j.at("flips_over_budget"), false);
  stats.add(c, flip);  // 2 of 11: ceil(1.1) = 2 allowed
  EXPECT_FALSE(stats.over_flip_budget()) << stats.flip_summary();
  stats.add(c, flip);  // 3 of 12: over
  EXPECT_TRUE(stats.over_flip_budget()) << stats.flip_summary();
  EXPECT_EQ(stats.to_json().at("flips_over_budget"), true);
}

// ---------------------------------------------------------------- the fixed 300-case sample

// `usual`: the sample without the cases redrawn for the fast kernels' paths
// (fuzz::sample_usual_cases), on which a seeded bug's counts below were measured and stated.
compare::AccuracyStats judge_sample(Backend& b, const std::string& op, int* failures, std::string* first_failure,
                                    int* unsupported = nullptr, bool usual = false) {
  compare::AccuracyStats stats;
  const std::vector<Case> sample = usual ? fuzz::sample_usual_cases(op, kSampleCases, kSampleSeed)
                                         : fuzz::sample_cases(op, kSampleCases, kSampleSeed);
  for (const Case& c : sample) {
    const compare::FloatOutcome o = compare::compare_float_backend(ref(), b, c);
    if (unsupported && o.verdict == compare::Verdict::Unsupported) ++*unsupported;
    stats.add(c, o);
    if (o.verdict == compare::Verdict::Disagree || o.verdict == compare::Verdict::Error) {
      if (failures && (*failures)++ == 0 && first_failure) *first_failure = o.detail;
    }
  }
  return stats;
}

struct SampleParam {
  std::string op, backend;
};
void PrintTo(const SampleParam& p, std::ostream* os) { *os << p.op << " on " << p.backend; }

class FixedSample : public ::testing::TestWithParam<SampleParam> {};

TEST_P(FixedSample, HalidePassesWithinItsFlipBudget) {
  const SampleParam& p = GetParam();
  Backend& b = backend(p.backend);
  if (auto why = b.unavailable_reason()) GTEST_SKIP() << p.backend << " cannot run here: " << *why;
  int failures = 0, unsupported = 0;
  std::string first;
  const compare::AccuracyStats s = judge_sample(b, p.op, &failures, &first, &unsupported);
  std::cout << "[flips] " << p.op << " on " << p.backend << ": " << s.flip_summary() << "\n";
  EXPECT_EQ(failures, 0) << first;
  // Every case is judged, but for those the kernels decline with a reason (grid_sample's 5-D
  // cases: the Halide kernels are 4-D), which must stay a minority.
  EXPECT_EQ(s.cases() + unsupported, kSampleCases);
  EXPECT_LT(unsupported, kSampleCases / 3) << p.op;
  EXPECT_FALSE(s.over_flip_budget()) << s.flip_summary();
}

std::vector<SampleParam> sample_params() {
  std::vector<SampleParam> v;
  for (HalideDevice d : kHalideDevices)
    for (const std::string& op : op_names()) v.push_back({op, halide_backend_name(d)});
  return v;
}

INSTANTIATE_TEST_SUITE_P(EveryOp, FixedSample, ::testing::ValuesIn(sample_params()), [](const auto& info) {
  std::string s = info.param.op + "_" + info.param.backend;
  for (char& ch : s)
    if (ch == '-') ch = '_';
  return s;
});

struct BugParam {
  std::string backend, op;
  int failing_under_nudges;  // cases of the sample the nudging rule failed
};
void PrintTo(const BugParam& p, std::ostream* os) { *os << p.backend; }

class SeededFloat32Bug : public ::testing::TestWithParam<BugParam> {};

TEST_P(SeededFloat32Bug, FailsTheFixedSampleThatNudgesPassedAsFlips) {
  const BugParam& p = GetParam();
  Backend& bug = backend(p.backend);
  int failures = 0;
  std::string first;
  const compare::AccuracyStats strict = judge_sample(bug, p.op, &failures, &first, nullptr, true);
  std::cout << "[flips] " << p.op << " on " << p.backend << ": " << failures << " failing cases (first: " << first
            << "), flips " << strict.flip_summary() << "\n";
  EXPECT_GT(failures, 0) << p.backend << " passed " << kSampleCases << " cases of " << p.op;
  // Under the nudging rule most of the cases the bug breaks read as flips (roi_pool's all of
  // them; roi_align's all but a few, where the nudges that push the sample out also change the
  // adaptive grid).
  Undeclared nearby(bug);
  int loose_failures = 0;
  const compare::AccuracyStats loose = judge_sample(nearby, p.op, &loose_failures, nullptr, nullptr, true);
  std::cout << "[flips] " << p.op << " on " << nearby.name() << ": " << loose_failures << " failing cases, flips "
            << loose.flip_summary() << "\n";
  // The nudges only add explanations: every case failing now and not then is a flip then, or
  // an agreement. The loose rule judges the case as a kernel of its dtype is sent it, inputs
  // rounded to float32 (compare/dtype_case.h): a case the strict rule calls a flip only
  // through that rounding (a sample on y == H in double, off it in float32) agrees there.
  EXPECT_LE(loose_failures, p.failing_under_nudges);
  EXPECT_GT(failures, loose_failures) << "the rule fails no case the nudges passed";
  EXPECT_LE(loose.flipped_cases(), strict.flipped_cases() + failures - loose_failures);
  EXPECT_GE(loose.flipped_cases(), failures - loose_failures) << "the failures the nudges pass are flips there";
  // And so many flips are themselves a finding: over the op's budget.
  EXPECT_TRUE(loose.over_flip_budget()) << loose.flip_summary();
}

INSTANTIATE_TEST_SUITE_P(Bugs, SeededFloat32Bug,
                         ::testing::Values(BugParam{"bug-roialign-end-cutoff", "roi_align", 3},
                                           BugParam{"bug-roipool-half-even", "roi_pool", 0}),
                         [](const auto& info) {
                           std::string s = info.param.backend;
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

}  // namespace
}  // namespace oplab
