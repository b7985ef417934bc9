#pragma once
// One sampling point of deform_conv2d (SPEC §2) as Halide expressions, shared by the forward
// and every backward generator: the coordinate, its four corners, the bilinear fractions and
// the range tests of the two rules the op uses.
//
//  * Rule B (the forward value, grad_input, grad_mask): 0 unless y in (-1, H) and x in (-1, W);
//    inside, the four-corner blend at floor(y), floor(x), each corner outside the image read as 0.
//  * The coordinate derivative (grad_offset): the same blend with no outer cut-off (the
//    right-sided derivative, reference/deform_conv2d.cpp); corners outside the image read 0,
//    which already makes it 0 for y < -1 or y >= H.
//
// Halide compiles without strict_float, so floating-point code may assume finite values. A
// non-finite offset therefore never reaches the arithmetic: it is replaced by a coordinate of
// -2, outside both rules, and `finite` is kept so the caller can zero the sample's value and
// gradients (docs/semantics.md). Finite coordinates far outside are clamped to [-2, len + 1],
// still outside, so that floor() fits an int32.
#include "Halide.h"

namespace oplab_halide {

struct DcnPoint {
  Halide::Expr finite;                // both offsets finite
  Halide::Expr in_range;              // rule B's open box (-1, H) x (-1, W)
  Halide::Expr y0, y1, x0, x1;        // corner rows/columns, clamped into the image (safe to read)
  Halide::Expr in_y0, in_y1, in_x0, in_x1;  // whether that row/column lies inside the image
  Halide::Expr ly, lx;                // y - floor(y), x - floor(x)
};

// base_y, base_x: the integer position oy*sh - ph + i*dh (and along x) of the undeformed tap.
inline DcnPoint dcn_point(Halide::Expr base_y, Halide::Expr base_x, Halide::Expr off_y, Halide::Expr off_x,
                          Halide::Expr H, Halide::Expr W) {
  using namespace Halide;
  DcnPoint p;
  p.finite = is_finite(off_y) && is_finite(off_x);
  Expr fH = cast<float>(H), fW = cast<float>(W);
  // One rounding, as float(base) + float(offset): the base is an exact small integer.
  Expr y = select(p.finite, clamp(cast<float>(base_y) + off_y, -2.0f, fH + 1.0f), -2.0f);
  Expr x = select(p.finite, clamp(cast<float>(base_x) + off_x, -2.0f, fW + 1.0f), -2.0f);
  Expr fy = floor(y), fx = floor(x);
  Expr iy = cast<int>(fy), ix = cast<int>(fx);
  p.ly = y - fy;
  p.lx = x - fx;
  p.in_range = y > -1.0f && y < fH && x > -1.0f && x < fW;
  p.in_y0 = iy >= 0 && iy < H;
  p.in_y1 = iy >= -1 && iy + 1 < H;
  p.in_x0 = ix >= 0 && ix < W;
  p.in_x1 = ix >= -1 && ix + 1 < W;
  // The glue never calls a kernel on an empty image, so H - 1 and W - 1 are >= 0.
  p.y0 = clamp(iy, 0, H - 1);
  p.y1 = clamp(iy + 1, 0, H - 1);
  p.x0 = clamp(ix, 0, W - 1);
  p.x1 = clamp(ix + 1, 0, W - 1);
  return p;
}

// Corner (a, b) = (y0 + a, x0 + b) is bit 2a + b of the packed corner flags.
inline Halide::Expr dcn_corner_bits(Halide::Expr f00, Halide::Expr f01, Halide::Expr f10, Halide::Expr f11) {
  using namespace Halide;
  return cast<uint8_t>(select(f00, 1, 0) | select(f01, 2, 0) | select(f10, 4, 0) | select(f11, 8, 0));
}

inline Halide::Expr dcn_corner_on(Halide::Expr bits, int a, int b) {
  using namespace Halide;
  return (bits & cast<uint8_t>(1 << (2 * a + b))) != cast<uint8_t>(0);
}

}  // namespace oplab_halide
