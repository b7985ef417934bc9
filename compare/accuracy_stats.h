#pragma once
// What a report shows about a float32 backend's accuracy on one op, accumulated over cases:
// the SPEC §9 metrics, a ULP histogram, error against the driving parameter, a heatmap
// of error over the output plane (borders against interior), and the boundary flips per
// decision kind against the op x backend's flip budget (compare/flip_rule.h).
#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/case.h"
#include "compare/float_compare.h"

namespace oplab::compare {

class AccuracyStats {
 public:
  static constexpr int kUlpBuckets = 26;  // 0: exact; b >= 1: ulp in [2^(b-1), 2^b); last: beyond
  static constexpr int kHeat = 8;         // heatmap cells per side over relative (y, x)

  void add(const Case& c, const FloatOutcome& o);
  // Another accumulation (one case judged in a forked child, a shard of a campaign) added to
  // this one, as if its cases had been added here.
  void merge(const AccuracyStats& other);
  // to_json is lossless: from_json(to_json()) merges like the original (the heatmap keeps its
  // sums and counts beside the means a report plots).
  json to_json() const;
  static AccuracyStats from_json(const json& j);

  int64_t cases() const { return cases_; }
  int64_t flipped_cases() const { return flips_; }
  // Cases with at least one flip of that kind, and flipped elements of that kind.
  int64_t flipped_cases(FlipKind k) const { return flip_cases_[size_t(k)]; }
  int64_t flipped_elements(FlipKind k) const { return flip_elements_[size_t(k)]; }
  double flip_budget() const { return flip_budget_; }
  // More flipped cases than the budget allows, ceil(budget x cases): a finding, not a pass.
  // Rounded up so that a short campaign of a budgeted op may still show one flip.
  bool over_flip_budget() const { return double(flips_) > std::ceil(flip_budget_ * double(cases_)); }
  // "12 of 300 cases (budget 5%): range cut-off 10, floor 2", for logs and test messages.
  std::string flip_summary() const;

 private:
  int64_t cases_ = 0, flips_ = 0, elements_ = 0;
  std::array<int64_t, kFlipKinds> flip_cases_{}, flip_elements_{};
  double flip_budget_ = 0;
  std::string rule_;  // flip_rule_name of the backend's rule, once a case was added
  // The largest of each SPEC §9 metric over the measured cases.
  struct Peaks {
    double worst_ratio = 0, max_abs = 0, max_rel = 0, max_abs_small = 0, diff1 = 0, diff2 = 0, max_ulp = 0;
    void raise_to(const Peaks& p);
  } peaks_;
  std::array<int64_t, kUlpBuckets> ulp_hist_{};
  std::string driving_name_;
  std::vector<std::pair<double, double>> driving_;  // (parameter, worst error/bound of the case)
  std::array<double, kHeat * kHeat> heat_sum_{};
  std::array<int64_t, kHeat * kHeat> heat_n_{};
};

}  // namespace oplab::compare
