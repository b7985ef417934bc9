#include "compare/accuracy_stats.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "compare/op_compare.h"

namespace oplab::compare {

void AccuracyStats::add(const Case& c, const FloatOutcome& o) {
  if (o.kind != FloatOutcome::Pass && o.kind != FloatOutcome::Flip) return;
  ++cases_;
  flip_budget_ = o.flip_budget;
  rule_ = o.rule;
  // A flipped case is counted, not measured: its flipped elements are off by a discrete
  // decision, not by rounding, and would swamp the metrics of everything else.
  if (o.kind == FloatOutcome::Flip) {
    ++flips_;
    for (size_t k = 0; k < kFlipKinds; ++k) {
      flip_elements_[k] += o.flips[k];
      if (o.flips[k]) ++flip_cases_[k];
    }
    return;
  }
  worst_ratio_ = std::max(worst_ratio_, o.worst_ratio);
  const Metrics& m = o.output_metrics;
  max_abs_ = std::max(max_abs_, m.max_abs);
  max_rel_ = std::max(max_rel_, m.max_rel);
  max_abs_small_ = std::max(max_abs_small_, m.max_abs_small);
  diff1_ = std::max(diff1_, m.diff1);
  diff2_ = std::max(diff2_, m.diff2);
  max_ulp_ = std::max(max_ulp_, m.max_ulp);

  // ULP histogram and the heatmap over the last two dims of the output (relative position).
  const Shape& s = o.output_shape;
  const int64_t W = s.empty() ? 1 : s.back(), H = s.size() >= 2 ? s[s.size() - 2] : 1;
  double case_worst = 0;
  for (size_t i = 0; i < o.output_ulp.size(); ++i) {
    const double u = o.output_ulp[i], r = o.output_ratio[i];
    if (std::isnan(u)) continue;
    ++elements_;
    const int b = u == 0 ? 0 : std::min(kUlpBuckets - 1, 1 + int(std::floor(std::log2(u))));
    ++ulp_hist_[size_t(b)];
    case_worst = std::max(case_worst, r);
    const int64_t x = int64_t(i) % W, y = (int64_t(i) / W) % H;
    const int cx = W > 1 ? int(std::min<int64_t>(kHeat - 1, x * kHeat / W)) : 0;
    const int cy = H > 1 ? int(std::min<int64_t>(kHeat - 1, y * kHeat / H)) : 0;
    heat_sum_[size_t(cy * kHeat + cx)] += r;
    ++heat_n_[size_t(cy * kHeat + cx)];
  }
  const DrivingParameter d = op_compare(c.op).driving(c);
  driving_name_ = d.name;
  if (driving_.size() < 2000) driving_.emplace_back(d.value, case_worst);
}

std::string AccuracyStats::flip_summary() const {
  std::ostringstream os;
  os << flips_ << " of " << cases_ << " cases (budget " << flip_budget_ * 100 << "%, " << flip_rule_name(rule_) << ")";
  const char* sep = ": ";
  for (size_t k = 0; k < kFlipKinds; ++k)
    if (flip_cases_[k]) {
      os << sep << flip_kind_name(FlipKind(k)) << " " << flip_cases_[k];
      sep = ", ";
    }
  return os.str();
}

json AccuracyStats::to_json() const {
  json heat = json::array();
  for (int y = 0; y < kHeat; ++y) {
    json row = json::array();
    for (int x = 0; x < kHeat; ++x) {
      const size_t k = size_t(y * kHeat + x);
      row.push_back(heat_n_[k] ? heat_sum_[k] / double(heat_n_[k]) : 0.0);
    }
    heat.push_back(row);
  }
  json driving = json::array();
  for (const auto& [p, r] : driving_) driving.push_back({p, r});
  json kinds = json::object(), kind_elements = json::object();
  for (size_t k = 0; k < kFlipKinds; ++k) {
    kinds[flip_kind_name(FlipKind(k))] = flip_cases_[k];
    kind_elements[flip_kind_name(FlipKind(k))] = flip_elements_[k];
  }
  return json{{"cases", cases_},
              {"elements", elements_},
              {"boundary_flips", flips_},
              {"boundary_flips_by_kind", kinds},
              {"flipped_elements_by_kind", kind_elements},
              {"flip_rule", flip_rule_name(rule_)},
              {"flip_budget", flip_budget_},
              {"flips_over_budget", over_flip_budget()},
              {"worst_error_over_bound", worst_ratio_},
              {"max_abs", max_abs_},
              {"max_rel", max_rel_},
              {"diff1", diff1_},
              {"diff2", diff2_},
              {"diff3", {{"max_rel_above_th", max_rel_}, {"max_abs_below_th", max_abs_small_}, {"th", 1e-6}}},
              {"max_ulp", max_ulp_},
              {"ulp_histogram", ulp_hist_},
              {"driving_parameter", driving_name_},
              {"error_vs_driving", driving},
              {"heatmap_mean_error_over_bound", heat}};
}

}  // namespace oplab::compare
