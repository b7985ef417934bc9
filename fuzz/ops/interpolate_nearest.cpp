#include "fuzz/ops/interpolate_nearest.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

namespace oplab::fuzz {

int64_t nearest_index_float(const InterpAxis& a, bool exact, int64_t dst) {
  const float scale = interp_nearest_scale(a);
  const float pos = exact ? float(double(dst) + 0.5) * scale : float(dst) * scale;
  return std::min(int64_t(std::floor(pos)), a.in - 1);
}

int64_t nearest_index_double(const InterpAxis& a, bool exact, int64_t dst) {
  const double scale = a.scale_factor ? 1.0 / *a.scale_factor : double(a.in) / double(a.out);
  const double pos = exact ? (double(dst) + 0.5) * scale : double(dst) * scale;
  return std::min(int64_t(std::floor(pos)), a.in - 1);
}

int64_t nearest_index_disagreement(const InterpAxis& a, bool exact) {
  for (int64_t dst = 0; dst < a.out; ++dst)
    if (nearest_index_float(a, exact, dst) != nearest_index_double(a, exact, dst)) return dst;
  return -1;
}

namespace {

void add_if_differs(InterpAxis a, bool exact, std::vector<NearestF32Axis>& found) {
  // PyTorch's CPU kernels copy an axis with out == in and read dst >> 1 where out == 2*in
  // whatever the scale (SPEC §6): there the float32 index is never computed.
  if (a.out == a.in || a.out == 2 * a.in) return;
  const int64_t dst = nearest_index_disagreement(a, exact);
  if (dst >= 0) found.push_back({a.in, a.out, a.scale_factor, dst});
}

void sort_simplest_first(std::vector<NearestF32Axis>& v) {
  std::sort(v.begin(), v.end(), [](const NearestF32Axis& x, const NearestF32Axis& y) {
    return std::make_tuple(x.in, x.out, x.scale_factor.value_or(0)) <
           std::make_tuple(y.in, y.out, y.scale_factor.value_or(0));
  });
}

}  // namespace

std::vector<NearestF32Axis> find_nearest_f32_sizes(bool exact, int64_t max_in, int64_t max_out) {
  std::vector<NearestF32Axis> found;
  // in = 1 has the single index 0 whatever the scale.
  for (int64_t in = 2; in <= max_in; ++in)
    for (int64_t out = 1; out <= max_out; ++out) add_if_differs(InterpAxis{in, out, std::nullopt}, exact, found);
  sort_simplest_first(found);
  return found;
}

std::vector<NearestF32Axis> find_nearest_f32_scale_factors(bool exact, int64_t max_in, int64_t max_out) {
  std::set<double> factors;
  for (int k = 1; k <= 1600; ++k) factors.insert(double(k) / 100.0);
  for (int q = 1; q <= 16; ++q)
    for (int p = 1; p <= 16 * q; ++p) factors.insert(double(p) / double(q));
  std::vector<NearestF32Axis> found;
  for (int64_t in = 2; in <= max_in; ++in)
    for (double sf : factors) {
      // The output size as validation computes it: floor(in * sf) in double.
      const double out = std::floor(double(in) * sf);
      if (out < 1 || out > double(max_out)) continue;
      add_if_differs(InterpAxis{in, int64_t(out), sf}, exact, found);
    }
  sort_simplest_first(found);
  return found;
}

const std::vector<NearestF32Axis>& nearest_f32_sizes(bool exact) {
  static const std::vector<NearestF32Axis> plain = find_nearest_f32_sizes(false, 13, 128);
  static const std::vector<NearestF32Axis> with_half = find_nearest_f32_sizes(true, 13, 128);
  return exact ? with_half : plain;
}

const std::vector<NearestF32Axis>& nearest_f32_scale_factors(bool exact) {
  static const std::vector<NearestF32Axis> plain = find_nearest_f32_scale_factors(false, 13, 128);
  static const std::vector<NearestF32Axis> with_half = find_nearest_f32_scale_factors(true, 13, 128);
  return exact ? with_half : plain;
}

}  // namespace oplab::fuzz
