#include "peer/uint8_two_pass.h"

#include <algorithm>
#include <cmath>

namespace oplab {

namespace {

double abs_sum_max(const AxisWeights& taps) {
  double most = 0;
  for (const auto& t : taps) {
    double a = 0;
    for (const auto& [i, w] : t) a += std::fabs(w);
    most = std::max(most, a);
  }
  return most;
}

size_t most_taps(const AxisWeights& taps) {
  size_t n = 0;
  for (const auto& t : taps) n = std::max(n, t.size());
  return n;
}

}  // namespace

Uint8Error two_pass_uint8_error(const AxisWeights& rows, const AxisWeights& cols, const Tensor& input, bool w_first,
                                int frac_bits) {
  const int64_t H = input.dim(2), W = input.dim(3), planes = input.dim(0) * input.dim(1);
  const AxisWeights& first = w_first ? cols : rows;
  const AxisWeights& second = w_first ? rows : cols;
  const double a2 = abs_sum_max(second);
  const double fixed = 255.0 * std::ldexp(1.0, -frac_bits) * (double(most_taps(first)) * std::max(a2, 1.0) + double(most_taps(second)));
  if (int64_t(cols.size()) == W || int64_t(rows.size()) == H) return {fixed, 0};  // one axis changes at most: one pass
  // The first pass's values over every line of the plane: how far they leave 0..255.
  double overshoot = 0;
  for (int64_t n = 0; n < planes; ++n)
    for (int64_t line = 0; line < (w_first ? H : W); ++line)
      for (const auto& t : first) {
        double v = 0;
        for (const auto& [i, w] : t)
          v += w * input.data[size_t(w_first ? (n * H + line) * W + i : (n * H + i) * W + line)];
        overshoot = std::max({overshoot, v - 255.0, -v});
      }
  return {a2 * 0.5 + fixed, a2 * overshoot};
}

}  // namespace oplab
