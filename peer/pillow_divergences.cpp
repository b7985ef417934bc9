// The pillow peer's named divergences (SPEC §16): what Pillow's Image.resize computes where it
// departs from SPEC §6 and §16, each with the case on which the reference computes the same
// (proven case by case by the comparison). Read from Pillow's libImaging (Resample.c,
// Geometry.c) and measured on Pillow 9.4.
#include <algorithm>
#include <cmath>

#include "peer/interp_equivalents.h"
#include "peer/pillow_backend.h"

namespace oplab {

namespace {

bool filtered(InterpMode m) { return m == InterpMode::Bilinear || m == InterpMode::Bicubic; }

// Image.resize takes the output size: its scale is in/out, never the caller's 1/sf.
std::optional<Case> scale_from_size(const Case& c) {
  const auto p = resize_params(c);
  if (!p || !filtered(p->mode)) return std::nullopt;
  return sized_case(c, *p);
}

// BILINEAR and BICUBIC are always the antialias filters (Resample.c): on a case without
// antialias the peer computes the antialias case. Bilinear upscaling is the same either way
// (SPEC §16); bilinear downscaling and bicubic at any scale are not.
std::optional<Case> always_antialias(const Case& c) {
  const auto p = resize_params(c);
  if (!p || !filtered(p->mode) || p->antialias) return std::nullopt;
  Case e = c;
  e.params["antialias"] = true;
  return e;
}

// NEAREST (Geometry.c, an affine scale) tabulates its source index by adding: x = s / 2, then
// x += s per output pixel, each index int(x), with s = in/out in double. Measured on every size
// pair up to 199 x 199: exactly that; the product int((dst + 0.5) * s) in double differs from it
// on 7138 of the 39601 pairs. SPEC's nearest-exact (float32 scale and product) differs from it
// on 208 of the pairs up to 39 x 39 (2 -> 7 at dst 3: Pillow 0, SPEC 1).
std::vector<int64_t> pillow_nearest_indices(const InterpAxis& a) {
  std::vector<int64_t> src;
  const double s = double(a.in) / double(a.out);
  double x = s * 0.5;
  for (int64_t dst = 0; dst < a.out; ++dst, x += s) src.push_back(std::min(int64_t(x), a.in - 1));
  return src;
}

std::optional<Case> nearest_accumulated_index(const Case& c) {
  const auto p = resize_params(c);
  if (!p || p->mode != InterpMode::NearestExact) return std::nullopt;
  std::vector<std::vector<int64_t>> src;
  bool differs = false;
  for (const InterpAxis& a : p->axes) {
    src.push_back(pillow_nearest_indices(a));
    for (int64_t d = 0; d < a.out; ++d) differs |= src.back()[size_t(d)] != spec_nearest_index(a, d, true);
  }
  if (!differs) return std::nullopt;
  return gathered_case(c, *p, src);
}

// BOX (Resample.c): the filter of SPEC §16 with the box of width 1 (1 on (-0.5, 0.5], support
// 0.5 scaled by max(s, 1)): output o averages the pixels whose centres lie in
// (centre - s/2, centre + s/2]. Area (SPEC §6) averages the integer bins
// [floor(o in/out), ceil((o + 1) in/out)), which overlap on a non-integer ratio: 5 -> 3 reads
// pixels {0, 1}, {2}, {3, 4} in Pillow and {0, 1}, {1, 2, 3}, {3, 4} in area.
AxisMap box_map(const InterpAxis& a) {
  const double s = double(a.in) / double(a.out), scale = std::max(s, 1.0), support = 0.5 * scale;
  AxisMap m(size_t(a.out));
  for (int64_t o = 0; o < a.out; ++o) {
    const double centre = (double(o) + 0.5) * s;
    const int64_t lo = std::max<int64_t>(int64_t(centre - support + 0.5), 0);
    const int64_t hi = std::min<int64_t>(int64_t(centre + support + 0.5), a.in);
    double total = 0;
    for (int64_t i = lo; i < hi; ++i) {
      const double x = (double(i) - centre + 0.5) / scale;
      if (x > -0.5 && x <= 0.5) m[size_t(o)].push_back({i, 1.0}), total += 1;
    }
    for (auto& tap : m[size_t(o)]) tap.second /= total;
  }
  return m;
}

bool box_is_area(const InterpAxis& a, const AxisMap& box) {
  for (int64_t o = 0; o < a.out; ++o) {
    const int64_t start = (o * a.in) / a.out, end = ((o + 1) * a.in + a.out - 1) / a.out;
    const auto& taps = box[size_t(o)];
    if (int64_t(taps.size()) != end - start || (!taps.empty() && taps.front().first != start)) return false;
  }
  return true;
}

std::optional<Case> box_not_area(const Case& c) {
  const auto p = resize_params(c);
  if (!p || p->mode != InterpMode::Area) return std::nullopt;
  const AxisMap rows = box_map(p->axes[0]), cols = box_map(p->axes[1]);
  if (box_is_area(p->axes[0], rows) && box_is_area(p->axes[1], cols)) return std::nullopt;
  return separable_map_case(c, *p, rows, cols);
}

}  // namespace

const std::vector<Divergence>& pillow_divergences() {
  static const std::vector<Divergence> list = {
      {"pillow-scale-from-size",
       "Image.resize takes the output size: its scale is in/out, and a scale_factor whose 1/sf is not in/out is not "
       "honoured (bilinear, bicubic)",
       scale_from_size, nullptr,
       R"({"op":"interpolate","params":{"mode":"bilinear","scale_factor":[1,1.6],"antialias":true},
        "inputs":{"input":{"shape":[1,1,1,2],"data":[0,1]}}})"},
      {"pillow-filters-always-antialias",
       "BILINEAR and BICUBIC are always the antialias filters (support scaled on a downscale, cut and renormalised at "
       "the edges, bicubic a = -0.5): plain bilinear differs on a downscale, plain bicubic (a = -0.75, edge pixels "
       "replicated) everywhere",
       always_antialias, nullptr,
       R"({"op":"interpolate","params":{"mode":"bicubic","size":[1,3],"align_corners":false},
        "inputs":{"input":{"shape":[1,1,1,2],"data":[0,1]}}})"},
      {"pillow-nearest-accumulated-index",
       "NEAREST tabulates its source index by adding in/out (double) to in/(2 out) once per pixel and truncating; "
       "SPEC's nearest-exact multiplies (dst + 0.5) by the float32 scale (2 -> 7 at dst 3: Pillow reads index 0, "
       "SPEC 1: 3.5 * float32(2/7) rounds to 1)",
       nearest_accumulated_index, nullptr,
       R"({"op":"interpolate","params":{"mode":"nearest-exact","size":[1,7]},
        "inputs":{"input":{"shape":[1,1,1,2],"data":[0,1]}}})"},
      {"pillow-box-not-area",
       "BOX averages the pixels whose centres lie within half a scale of the output's centre; SPEC's area averages "
       "overlapping integer bins (5 -> 3 reads {0, 1}, {2}, {3, 4}; area {0, 1}, {1, 2, 3}, {3, 4})",
       box_not_area, nullptr,
       R"({"op":"interpolate","params":{"mode":"area","size":[1,2]},
        "inputs":{"input":{"shape":[1,1,1,3],"data":[0,1,2]}}})"},
  };
  return list;
}

}  // namespace oplab
