#pragma once
// What a report shows about a float32 backend's accuracy on one op, accumulated over cases:
// the SPEC §9 metrics, a ULP histogram, error against the driving parameter, and a heatmap
// of error over the output plane (borders against interior).
#include <array>
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
  json to_json() const;

 private:
  int64_t cases_ = 0, flips_ = 0, elements_ = 0;
  double worst_ratio_ = 0, max_abs_ = 0, max_rel_ = 0, max_abs_small_ = 0, diff1_ = 0, diff2_ = 0, max_ulp_ = 0;
  std::array<int64_t, kUlpBuckets> ulp_hist_{};
  std::string driving_name_;
  std::vector<std::pair<double, double>> driving_;  // (parameter, worst error/bound of the case)
  std::array<double, kHeat * kHeat> heat_sum_{};
  std::array<int64_t, kHeat * kHeat> heat_n_{};
};

}  // namespace oplab::compare
