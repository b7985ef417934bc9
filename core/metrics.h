#pragma once
// Accuracy metrics of SPEC §9 for one tensor of a backend against the reference.
#include <string>

#include "core/tensor.h"

namespace oplab {

enum class Dtype { F32, F64 };

struct Metrics {
  int64_t count = 0;            // elements compared
  double max_abs = 0;           // max |e - r| over finite pairs
  double max_rel = 0;           // max |e - r| / |r| over |r| > th
  double max_abs_small = 0;     // max |e - r| over |r| <= th (diff3's second half)
  double diff1 = 0;             // sum|e - r| / sum|r|
  double diff2 = 0;             // sqrt(sum (e - r)^2 / sum r^2)
  double max_ulp = 0;           // in the kernel's dtype
  int64_t nonfinite_mismatch = 0;  // positions where NaN/+Inf/-Inf disagree
  int64_t worst_index = -1;     // flat index of the largest |e - r|
  bool shape_mismatch = false;
};

// th: relative-error threshold (1e-6 for fp32 kernels, SPEC §9).
Metrics measure(const Tensor& ref, const Tensor& got, Dtype dtype, double th);

// Relative agreement used for double-against-double checks: |e - r| <= tol * max(|r|, scale),
// where scale guards elements near zero (pass the tensor's max |r|, or 1).
bool all_close(const Tensor& ref, const Tensor& got, double rtol, double atol, int64_t* first_bad = nullptr);

// Distance in units in the last place of `dtype` between two finite values.
double ulp_distance(double a, double b, Dtype dtype);

std::string metrics_summary(const Metrics& m);

}  // namespace oplab
