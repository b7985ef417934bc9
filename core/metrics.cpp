#include "core/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

namespace oplab {

namespace {

// Map a float's bits onto a monotonic integer line so that adjacent floats differ by 1.
int64_t ordered_bits(double v, Dtype dtype) {
  if (dtype == Dtype::F32) {
    const float f = static_cast<float>(v);
    int32_t i;
    std::memcpy(&i, &f, sizeof f);
    return i < 0 ? int64_t(INT32_MIN) - int64_t(i) : int64_t(i);
  }
  int64_t i;
  std::memcpy(&i, &v, sizeof v);
  return i < 0 ? INT64_MIN - i : i;
}

int nonfinite_class(double v) {
  if (std::isnan(v)) return 1;
  if (std::isinf(v)) return v > 0 ? 2 : 3;
  return 0;
}

}  // namespace

double ulp_distance(double a, double b, Dtype dtype) {
  const long double d = (long double)ordered_bits(a, dtype) - (long double)ordered_bits(b, dtype);
  return double(d < 0 ? -d : d);
}

Metrics measure(const Tensor& ref, const Tensor& got, Dtype dtype, double th) {
  Metrics m;
  if (ref.shape != got.shape) {
    m.shape_mismatch = true;
    return m;
  }
  long double sum_abs_err = 0, sum_abs_ref = 0, sum_sq_err = 0, sum_sq_ref = 0;
  for (size_t i = 0; i < ref.data.size(); ++i) {
    const double r = ref.data[i], e = got.data[i];
    ++m.count;
    const int cr = nonfinite_class(r), ce = nonfinite_class(e);
    if (cr || ce) {
      if (cr != ce) ++m.nonfinite_mismatch;
      continue;
    }
    const double err = std::fabs(e - r);
    if (m.worst_index < 0 || err > m.max_abs) {
      m.max_abs = err;
      m.worst_index = int64_t(i);
    }
    if (std::fabs(r) > th) m.max_rel = std::max(m.max_rel, err / std::fabs(r));
    else m.max_abs_small = std::max(m.max_abs_small, err);
    sum_abs_err += err;
    sum_abs_ref += std::fabs(r);
    sum_sq_err += (long double)err * err;
    sum_sq_ref += (long double)r * r;
    m.max_ulp = std::max(m.max_ulp, ulp_distance(r, e, dtype));
  }
  m.diff1 = sum_abs_ref > 0 ? double(sum_abs_err / sum_abs_ref) : double(sum_abs_err);
  m.diff2 = sum_sq_ref > 0 ? double(std::sqrt(sum_sq_err / sum_sq_ref)) : double(std::sqrt(sum_sq_err));
  return m;
}

bool all_close(const Tensor& ref, const Tensor& got, double rtol, double atol, int64_t* first_bad) {
  if (ref.shape != got.shape) {
    if (first_bad) *first_bad = -1;
    return false;
  }
  for (size_t i = 0; i < ref.data.size(); ++i) {
    const double r = ref.data[i], e = got.data[i];
    const int cr = nonfinite_class(r), ce = nonfinite_class(e);
    const bool ok = (cr || ce) ? cr == ce : std::fabs(e - r) <= atol + rtol * std::fabs(r);
    if (!ok) {
      if (first_bad) *first_bad = int64_t(i);
      return false;
    }
  }
  return true;
}

std::string metrics_summary(const Metrics& m) {
  if (m.shape_mismatch) return "shape mismatch";
  std::ostringstream os;
  os.precision(3);
  os << "max_abs=" << m.max_abs << " max_rel=" << m.max_rel << " diff1=" << m.diff1 << " diff2=" << m.diff2
     << " max_ulp=" << m.max_ulp;
  if (m.nonfinite_mismatch) os << " nonfinite_mismatch=" << m.nonfinite_mismatch;
  return os.str();
}

}  // namespace oplab
