#include "compare/accuracy_stats.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "compare/op_compare.h"

namespace oplab::compare {

void AccuracyStats::add(const Case& c, const FloatOutcome& o) {
  if (o.verdict != Verdict::Agree && o.verdict != Verdict::BoundaryFlip) return;
  ++cases_;
  flip_budget_ = o.flip_budget;
  rule_ = flip_rule_name(o.rule);
  // A flipped case is counted, not measured: its flipped elements are off by a discrete
  // decision, not by rounding, and would swamp the metrics of everything else.
  if (o.verdict == Verdict::BoundaryFlip) {
    ++flips_;
    for (size_t k = 0; k < kFlipKinds; ++k) {
      flip_elements_[k] += o.flips[k];
      if (o.flips[k]) ++flip_cases_[k];
    }
    return;
  }
  const Metrics& m = o.output_metrics;
  peaks_.raise_to({o.worst_ratio, m.max_abs, m.max_rel, m.max_abs_small, m.diff1, m.diff2, m.max_ulp});

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
  os << flips_ << " of " << cases_ << " cases (budget " << flip_budget_ * 100 << "%, " << rule_ << ")";
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
  json heat_sum = json::array(), heat_n = json::array();
  for (size_t k = 0; k < heat_sum_.size(); ++k) heat_sum.push_back(heat_sum_[k]), heat_n.push_back(heat_n_[k]);
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
              {"flip_rule", rule_},
              {"flip_budget", flip_budget_},
              {"flips_over_budget", over_flip_budget()},
              {"worst_error_over_bound", peaks_.worst_ratio},
              {"max_abs", peaks_.max_abs},
              {"max_rel", peaks_.max_rel},
              {"diff1", peaks_.diff1},
              {"diff2", peaks_.diff2},
              {"diff3", {{"max_rel_above_th", peaks_.max_rel}, {"max_abs_below_th", peaks_.max_abs_small}, {"th", 1e-6}}},
              {"max_ulp", peaks_.max_ulp},
              {"ulp_histogram", ulp_hist_},
              {"driving_parameter", driving_name_},
              {"error_vs_driving", driving},
              {"heatmap_mean_error_over_bound", heat},
              {"heatmap_sum", heat_sum},
              {"heatmap_n", heat_n}};
}

void AccuracyStats::Peaks::raise_to(const Peaks& p) {
  for (auto [mine, theirs] : {std::pair{&worst_ratio, p.worst_ratio}, {&max_abs, p.max_abs}, {&max_rel, p.max_rel},
                              {&max_abs_small, p.max_abs_small}, {&diff1, p.diff1}, {&diff2, p.diff2},
                              {&max_ulp, p.max_ulp}})
    *mine = std::max(*mine, theirs);
}

void AccuracyStats::merge(const AccuracyStats& o) {
  if (o.cases_ == 0) return;
  cases_ += o.cases_, flips_ += o.flips_, elements_ += o.elements_;
  for (size_t k = 0; k < kFlipKinds; ++k) flip_cases_[k] += o.flip_cases_[k], flip_elements_[k] += o.flip_elements_[k];
  flip_budget_ = o.flip_budget_;
  rule_ = o.rule_;
  peaks_.raise_to(o.peaks_);
  for (size_t b = 0; b < ulp_hist_.size(); ++b) ulp_hist_[b] += o.ulp_hist_[b];
  if (!o.driving_name_.empty()) driving_name_ = o.driving_name_;
  for (const auto& p : o.driving_)
    if (driving_.size() < 2000) driving_.push_back(p);
  for (size_t k = 0; k < heat_sum_.size(); ++k) heat_sum_[k] += o.heat_sum_[k], heat_n_[k] += o.heat_n_[k];
}

AccuracyStats AccuracyStats::from_json(const json& j) {
  AccuracyStats a;
  a.cases_ = j.at("cases").get<int64_t>();
  a.elements_ = j.at("elements").get<int64_t>();
  a.flips_ = j.at("boundary_flips").get<int64_t>();
  for (size_t k = 0; k < kFlipKinds; ++k) {
    const char* name = flip_kind_name(FlipKind(k));
    a.flip_cases_[k] = j.at("boundary_flips_by_kind").value(name, int64_t(0));
    a.flip_elements_[k] = j.at("flipped_elements_by_kind").value(name, int64_t(0));
  }
  a.rule_ = j.at("flip_rule").get<std::string>();
  a.flip_budget_ = j.at("flip_budget").get<double>();
  a.peaks_ = {j.at("worst_error_over_bound").get<double>(),         j.at("max_abs").get<double>(),
              j.at("max_rel").get<double>(),
              j.at("diff3").at("max_abs_below_th").get<double>(), j.at("diff1").get<double>(),
              j.at("diff2").get<double>(),                         j.at("max_ulp").get<double>()};
  for (size_t b = 0; b < a.ulp_hist_.size(); ++b) a.ulp_hist_[b] = j.at("ulp_histogram").at(b).get<int64_t>();
  a.driving_name_ = j.at("driving_parameter").get<std::string>();
  for (const auto& p : j.at("error_vs_driving")) a.driving_.emplace_back(p.at(0).get<double>(), p.at(1).get<double>());
  for (size_t k = 0; k < a.heat_sum_.size(); ++k) {
    a.heat_sum_[k] = j.at("heatmap_sum").at(k).get<double>();
    a.heat_n_[k] = j.at("heatmap_n").at(k).get<int64_t>();
  }
  return a;
}

}  // namespace oplab::compare
