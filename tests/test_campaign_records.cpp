// The campaign's records (fuzz/campaign_records.h) and the one verdict vocabulary
// (compare/verdict.h): counts by verdict name, shards that add up to the whole, accuracy
// statistics that survive JSON, and boundary flips over the op's budget as a finding.
#include <gtest/gtest.h>

#include "compare/accuracy_stats.h"
#include "compare/verdict.h"
#include "fuzz/campaign_records.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

using compare::Verdict;
using nlohmann::json;

TEST(Verdicts, NamesRoundTripAndOnlyDisagreeAndErrorFail) {
  int failing = 0;
  for (int i = 0; i < compare::kVerdicts; ++i) {
    const Verdict v = Verdict(i);
    EXPECT_EQ(compare::verdict_from_name(compare::verdict_name(v)), v);
    failing += compare::is_failure(v);
  }
  EXPECT_EQ(failing, 2);
  EXPECT_TRUE(compare::is_failure(Verdict::Disagree));
  EXPECT_TRUE(compare::is_failure(Verdict::Error));
  EXPECT_FALSE(compare::is_failure(Verdict::BoundaryFlip));
  EXPECT_FALSE(compare::verdict_from_name("pass"));  // the old words are gone, not aliases
}

// A float32 outcome of one case: agreeing with the given error / bound, or a flip of `kind`.
compare::FloatOutcome outcome(bool flip, double ratio, double budget = 0.05) {
  compare::FloatOutcome o;
  o.verdict = flip ? Verdict::BoundaryFlip : Verdict::Agree;
  o.worst_ratio = ratio;
  o.flip_budget = budget;
  if (flip) o.flips[size_t(compare::FlipKind::Floor)] = 2;
  o.output_shape = {1, 1, 2, 2};
  o.output_ratio = {ratio, ratio / 2, 0, ratio};
  o.output_ulp = {4, 1, 0, 300};
  o.output_metrics.max_abs = ratio * 1e-7;
  return o;
}

Case roi_case() {
  Case c;
  c.op = "roi_align";
  c.params = {{"output_size", {2, 2}}, {"spatial_scale", 1.0}, {"sampling_ratio", 2}, {"aligned", true}};
  c.inputs["input"] = Tensor({1, 1, 4, 4});
  Tensor rois({1, 5});
  rois.data = {0, 0, 0, 3, 3};
  c.inputs["rois"] = rois;
  return c;
}

fuzz::CheckResult as_check(const compare::FloatOutcome& o) {
  compare::AccuracyStats one;
  one.add(roi_case(), o);
  fuzz::CheckResult r;
  r.verdict = o.verdict;
  r.detail = o.verdict == Verdict::BoundaryFlip ? one.flip_summary() : "";
  r.worst = o.worst_ratio;
  r.accuracy = one;
  return r;
}

TEST(AccuracyStats, JsonIsLosslessAndMergeEqualsOneAccumulation) {
  compare::AccuracyStats whole, a, b;
  const std::vector<compare::FloatOutcome> outcomes = {outcome(false, 0.5), outcome(true, 0), outcome(false, 2.0),
                                                       outcome(false, 0.25)};
  for (size_t i = 0; i < outcomes.size(); ++i) {
    whole.add(roi_case(), outcomes[i]);
    (i < 2 ? a : b).add(roi_case(), outcomes[i]);
  }
  compare::AccuracyStats merged = compare::AccuracyStats::from_json(a.to_json());
  merged.merge(compare::AccuracyStats::from_json(b.to_json()));
  EXPECT_EQ(merged.to_json(), whole.to_json());
  EXPECT_EQ(whole.cases(), 4);
  EXPECT_EQ(whole.flipped_cases(), 1);
  EXPECT_EQ(whole.to_json().at("worst_error_over_bound"), 2.0);
}

TEST(CampaignRecords, CountVerdictsAndAddShardsUp) {
  const std::unique_ptr<Backend> ref_backend = make_ref_backend();
  const Backend& ref = *ref_backend;
  fuzz::CampaignRecords whole, shard0, shard1;
  const std::vector<fuzz::CheckResult> checks = {
      fuzz::CheckResult::pass(), fuzz::CheckResult::explained(Verdict::NamedDivergence, "div-a"),
      fuzz::CheckResult::fail("x differs"), fuzz::CheckResult::unsupported("no backward"),
      fuzz::CheckResult::explained(Verdict::NamedDivergence, "div-a")};
  for (size_t i = 0; i < checks.size(); ++i) {
    whole.at("roi_pool", ref, *fuzz::find_property("differential"), "torchvision").add(checks[i], 0.5);
    (i % 2 ? shard1 : shard0).at("roi_pool", ref, *fuzz::find_property("differential"), "torchvision").add(checks[i], 0.5);
  }
  const json w = whole.to_json().at(0);
  EXPECT_EQ(w.at("cases"), 5);
  EXPECT_EQ(w.at("verdicts"), json({{"agree", 1}, {"named-divergence", 2}, {"DISAGREE", 1}, {"unsupported", 1}}));
  EXPECT_EQ(w.at("divergences"), json({{"div-a", 2}}));
  EXPECT_EQ(w.at("role"), "implementation");
  EXPECT_DOUBLE_EQ(w.at("cases_per_second").get<double>(), 2.0);
  fuzz::CampaignRecords merged;
  merged.merge(shard0.to_json());
  merged.merge(shard1.to_json());
  EXPECT_EQ(merged.to_json(), whole.to_json());
}

TEST(CampaignRecords, BoundaryFlipsOverBudgetAreAFinding) {
  const std::unique_ptr<Backend> ref_backend = make_ref_backend();
  const Backend& ref = *ref_backend;
  fuzz::CampaignRecords within, over;
  // Budget 5% of 40 cases: ceil(2) flips allowed.
  for (int i = 0; i < 40; ++i) {
    within.at("roi_align", ref, *fuzz::find_property("differential"), "ref").add(as_check(outcome(i < 2, 0.5)), 0.01);
    over.at("roi_align", ref, *fuzz::find_property("differential"), "ref").add(as_check(outcome(i < 3, 0.5)), 0.01);
  }
  EXPECT_TRUE(within.findings().empty()) << within.findings().dump();
  EXPECT_FALSE(within.to_json().at(0).contains("finding"));
  ASSERT_EQ(over.findings().size(), 1u);
  EXPECT_EQ(over.findings().at(0).at("finding"), "boundary flips over budget");
  EXPECT_EQ(over.to_json().at(0).at("verdicts").at("boundary-flip"), 3);
  EXPECT_EQ(over.to_json().at(0).at("accuracy").at("boundary_flips"), 3);
}

}  // namespace
}  // namespace oplab
