#pragma once
// The RoIAlign bilinear rule of SPEC §4 as Halide expressions, shared by the roi_align and
// deform_roi_pool generators: 0 outside [-1, H] x [-1, W]; inside, the coordinate is clamped
// to >= 0 and to the last row/column, so one pixel outside the image replicates the edge.
#include "Halide.h"

namespace oplab_halide {

// One axis of a sample: the two taps, their weights, and whether the coordinate is in range.
struct AxisTaps {
  Halide::Expr valid;  // -1 <= v <= len
  Halide::Expr i0, i1; // taps, always inside [0, len-1] when len > 0
  Halide::Expr w0, w1; // weights of i0 and i1
};

inline AxisTaps roi_axis_taps(Halide::Expr v, Halide::Expr len) {
  using namespace Halide;
  AxisTaps t;
  t.valid = v >= -1.0f && v <= cast<float>(len);
  Expr c = max(v, 0.0f);
  Expr lo = cast<int>(floor(c));
  Expr at_end = lo >= len - 1;
  // At or past the last index both taps are the last pixel and the coordinate sits on it.
  t.i0 = select(at_end, len - 1, lo);
  t.i1 = select(at_end, len - 1, lo + 1);
  Expr frac = select(at_end, 0.0f, c - cast<float>(lo));
  t.w1 = frac;
  t.w0 = 1.0f - frac;
  // Clamp for bounds inference only: valid samples are already inside.
  t.i0 = clamp(t.i0, 0, max(len - 1, 0));
  t.i1 = clamp(t.i1, 0, max(len - 1, 0));
  return t;
}

}  // namespace oplab_halide
