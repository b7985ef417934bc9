// The opencv peer's named divergences (SPEC §8, §14): what OpenCV 4.6's cv::resize computes on
// CV_64F planes where it departs from SPEC §6, each with the case on which the reference
// computes the same. Read from OpenCV's imgproc/src/resize.cpp and proven case by case by the
// comparison (the reference on the equivalent case must reproduce OpenCV within the bound).
#include <algorithm>
#include <cmath>

#include "peer/interp_equivalents.h"
#include "peer/opencv_backend.h"

namespace oplab {

namespace {

// cv::resize given the output size takes the scale in/out, never the caller's scale factor: a
// case with scale_factor (no recompute) whose 1/sf is not in/out is computed as if it gave size.
std::optional<Case> scale_from_size(const Case& c) {
  const auto p = resize_params(c);
  if (!p || (p->mode != InterpMode::Bilinear && p->mode != InterpMode::Bicubic)) return std::nullopt;
  return sized_case(c, *p);
}

// Both nearest flags index the source their own way, from the sizes alone: INTER_NEAREST
// floors dst * (1 / (out / in)) in double, INTER_NEAREST_EXACT in 16.16 fixed point, a step of
// ((in << 16) + out / 2) / out starting from half a step minus one unit (OpenCV 4.6; later
// versions subtract in % 2 instead).
int64_t cv_nearest(const InterpAxis& a, int64_t dst) {
  const double ifx = 1.0 / (double(a.out) / double(a.in));
  return std::min(int64_t(std::floor(double(dst) * ifx)), a.in - 1);
}
int64_t cv_nearest_exact(const InterpAxis& a, int64_t dst) {
  const int64_t ifx = ((a.in << 16) + a.out / 2) / a.out;
  const int64_t ifx0 = ifx / 2 - 1;
  return std::min((ifx * dst + ifx0) >> 16, a.in - 1);
}

std::optional<Case> nearest_index(const Case& c, InterpMode mode, int64_t (*index)(const InterpAxis&, int64_t)) {
  const auto p = resize_params(c);
  if (!p || p->mode != mode) return std::nullopt;
  std::vector<std::vector<int64_t>> src;
  bool differs = false;
  for (const InterpAxis& a : p->axes) {
    src.emplace_back();
    for (int64_t d = 0; d < a.out; ++d) {
      src.back().push_back(index(a, d));
      differs |= src.back().back() != spec_nearest_index(a, d, mode == InterpMode::NearestExact);
    }
  }
  if (!differs) return std::nullopt;
  return gathered_case(c, *p, src);
}

// INTER_AREA shrinking by a non-integer factor: each output is the average of the input under
// its cell [dx*s, (dx+1)*s) (s = in/out), pixels cut by the cell's edges weighted by the part
// inside (weights 1e-3 or less dropped, weights in float32); SPEC (PyTorch) averages whole
// overlapping integer bins instead.
AxisMap area_fraction_map(const InterpAxis& a) {
  const double scale = double(a.in) / double(a.out);
  AxisMap m(size_t(a.out));
  for (int64_t dx = 0; dx < a.out; ++dx) {
    const double f1 = double(dx) * scale, f2 = f1 + scale;
    const double cell = std::min(scale, double(a.in) - f1);
    int64_t s2 = std::min(int64_t(std::floor(f2)), a.in - 1);
    int64_t s1 = std::min(int64_t(std::ceil(f1)), s2);
    auto& taps = m[size_t(dx)];
    if (double(s1) - f1 > 1e-3) taps.push_back({s1 - 1, double(float((double(s1) - f1) / cell))});
    for (int64_t s = s1; s < s2; ++s) taps.push_back({s, double(float(1.0 / cell))});
    if (f2 - double(s2) > 1e-3) taps.push_back({s2, double(float(std::min(std::min(f2 - double(s2), 1.0), cell) / cell))});
  }
  return m;
}

// INTER_AREA where some axis grows: a two-tap linear filter on both axes whose weight is the
// part of the output cell past the source pixel's edge: sx = floor(dx*s),
// f = (dx+1) - (sx+1)/s, weight f - floor(f) if f > 0 else 0 (float32); at the last pixel both
// taps read it. SPEC averages the integer bins (on a growing axis: one pixel each).
AxisMap area_linear_map(const InterpAxis& a) {
  const double scale = double(a.in) / double(a.out), inv = double(a.out) / double(a.in);
  AxisMap m(size_t(a.out));
  for (int64_t dx = 0; dx < a.out; ++dx) {
    int64_t sx = int64_t(std::floor(double(dx) * scale));
    float f = float(double(dx + 1) - double(sx + 1) * inv);
    f = f <= 0 ? 0.f : f - std::floor(f);
    if (sx >= a.in - 1) f = 0.f, sx = a.in - 1;
    m[size_t(dx)] = {{sx, double(1.f - f)}, {std::min(sx + 1, a.in - 1), double(f)}};
  }
  return m;
}

bool integer_shrink(const InterpAxis& a) { return a.in >= a.out && a.in % a.out == 0; }
bool shrinks(const InterpAxis& a) { return a.in >= a.out; }

std::optional<Case> area_fraction(const Case& c) {
  const auto p = resize_params(c);
  if (!p || p->mode != InterpMode::Area) return std::nullopt;
  const InterpAxis &h = p->axes[0], &w = p->axes[1];
  if (!shrinks(h) || !shrinks(w) || (integer_shrink(h) && integer_shrink(w))) return std::nullopt;
  return separable_map_case(c, *p, area_fraction_map(h), area_fraction_map(w));
}

std::optional<Case> area_grow(const Case& c) {
  const auto p = resize_params(c);
  if (!p || p->mode != InterpMode::Area) return std::nullopt;
  const InterpAxis &h = p->axes[0], &w = p->axes[1];
  if (shrinks(h) && shrinks(w)) return std::nullopt;
  return separable_map_case(c, *p, area_linear_map(h), area_linear_map(w));
}

}  // namespace

const std::vector<Divergence>& opencv_divergences() {
  static const std::vector<Divergence> list = {
      {"opencv-scale-from-size",
       "cv::resize given the output size uses the scale in/out: a scale_factor whose 1/sf is not in/out is not honoured "
       "(bilinear, bicubic)",
       scale_from_size, nullptr,
       R"({"op":"interpolate","params":{"mode":"bilinear","scale_factor":[1,1.6],"align_corners":false},
        "inputs":{"input":{"shape":[1,1,1,2],"data":[0,1]}}})"},
      {"opencv-nearest-double-index",
       "INTER_NEAREST takes source index floor(dst * in/out) with the scale in double (SPEC, PyTorch: float32 scale, "
       "or 1/sf)",
       [](const Case& c) { return nearest_index(c, InterpMode::Nearest, cv_nearest); }, nullptr,
       R"({"op":"interpolate","params":{"mode":"nearest","scale_factor":[1,1.2]},
        "inputs":{"input":{"shape":[1,1,1,2],"data":[0,1]}}})"},
      {"opencv-nearest-exact-fixed-point",
       "INTER_NEAREST_EXACT computes the source index in 16.16 fixed point from the sizes, starting half a step "
       "less one unit in (2 -> 1 reads index 0, 4 -> 1 index 1; SPEC: 1 and 2)",
       [](const Case& c) { return nearest_index(c, InterpMode::NearestExact, cv_nearest_exact); }, nullptr,
       R"({"op":"interpolate","params":{"mode":"nearest-exact","size":[1,1]},
        "inputs":{"input":{"shape":[1,1,1,2],"data":[0,1]}}})"},
      {"opencv-area-fractional",
       "INTER_AREA shrinking by a non-integer factor weights the pixels its cell cuts by the part inside (5 -> 3 on "
       "[1..5]: 1.4, 3, 4.6); SPEC averages overlapping integer bins (1.5, 3, 4.5)",
       area_fraction, nullptr,
       R"({"op":"interpolate","params":{"mode":"area","size":[1,2]},
        "inputs":{"input":{"shape":[1,1,1,3],"data":[0,1,2]}}})"},
      {"opencv-area-grow-linear",
       "INTER_AREA growing an axis is a two-tap linear filter weighted by the part of the output cell past the pixel "
       "edge (both axes); SPEC averages integer bins (one pixel each on a growing axis)",
       area_grow, nullptr,
       R"({"op":"interpolate","params":{"mode":"area","size":[2,1]},
        "inputs":{"input":{"shape":[1,1,1,3],"data":[0,1,2]}}})"},
  };
  return list;
}

}  // namespace oplab
