#pragma once
// Where interpolate's output position `dst` reads along one axis (SPEC §6), as the reference
// computes it, and, under a judge's geometry-in-T scope, as a kernel of type T does
// (core/geometry_rounding.h). The reference's taps and the comparison's decisions
// (compare/ops/interpolate.cpp) both take them from here.
#include <cstdint>
#include <vector>

#include "core/params.h"

namespace oplab::ref {

// The nearest index: min(floor(dst * s), in - 1), or floor((dst + 0.5) * s) for nearest-exact,
// with s the float32 scale and the product taken in float32, as PyTorch does (6 -> 34 reads
// index 3 at dst 17; in double it would be 2).
int64_t interp_nearest_index(const InterpAxis& a, int64_t dst, bool exact);

// The source coordinate of the linear and cubic modes: scale * dst (align_corners) or
// scale * (dst + 0.5) - 0.5, for the axis' scale (interp_area_scale).
double interp_source_coord(const InterpAxis& a, int64_t dst, bool align_corners);

// One antialias tap along an axis (SPEC §16): the input index, its normalised weight, the
// filter's argument and the sum the weight was divided by (for the judge's bounds).
struct AntialiasTap {
  int64_t src = 0;
  double weight = 0, arg = 0, total = 1;
};
// Per output position, the taps antialias reads along one axis (bilinear or bicubic).
std::vector<std::vector<AntialiasTap>> interp_antialias_taps(InterpMode mode, const InterpAxis& a);

}  // namespace oplab::ref
