#pragma once
// The RoIAlign bilinear rule (SPEC §4), shared by roi_align and deform_roi_pool.
// It differs from deform_conv2d's rule: within one pixel outside the image the edge value is
// replicated (the coordinate is clamped), beyond that the sample is 0.
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/tensor.h"
// The grid size (roi_grid_size, roi_grid_count) lived here before the geometry had a header of
// its own; included so that code reaching it through this header still builds.
#include "reference/roi_geometry.h"

namespace oplab::ref {

// Where one sample reads: four corner pixels and their weights.
// Corners are already clamped into the image, so y0 == y1 (or x0 == x1) on the last row
// (column); the two weights then land on the same pixel.
struct RoiBilinear {
  bool in_range = false;       // false: the sample is 0 and gets no gradient
  bool slope_y = false;        // the value changes with y here (0 <= y < H-1)
  bool slope_x = false;        // likewise for x
  int64_t y0 = 0, y1 = 0, x0 = 0, x1 = 0;
  double ly = 0, lx = 0, hy = 0, hx = 0;  // hy = 1 - ly, hx = 1 - lx
  double w00() const { return hy * hx; }  // (y0, x0)
  double w01() const { return hy * lx; }  // (y0, x1)
  double w10() const { return ly * hx; }  // (y1, x0)
  double w11() const { return ly * lx; }  // (y1, x1)
};

// One axis of the rule: clamp the coordinate and pick the two neighbouring indices.
// Returns whether the value varies with the coordinate at this point (taking the side
// toward larger coordinates at a kink: at c = 0 exactly it does, at c = size-1 it does not).
inline bool roi_bilinear_axis(double c, int64_t size, int64_t& i0, int64_t& i1, double& l) {
  // [-1, 0): replicate the edge, the value is flat in c.
  bool slope = c >= 0;
  if (c < 0) c = 0;
  i0 = int64_t(std::floor(c));
  if (i0 >= size - 1) {
    // Last row/column (and up to one pixel beyond it): flat in c as well.
    i0 = i1 = size - 1;
    c = double(size - 1);
    slope = false;
  } else {
    i1 = i0 + 1;
  }
  l = c - double(i0);
  return slope;
}

// The corners and weights of the sample at (y, x) on an H x W plane.
// Out of range: y < -1 or y > H or x < -1 or x > W (y = -1 exactly is in range and reads
// row 0, like torchvision's CPU kernel). An empty plane (H or W = 0) has no in-range sample.
// A non-finite coordinate (only possible from a NaN/Inf deform_roi_pool offset or an
// overflowing roi) counts as out of range: torchvision/mmcv leave it undefined.
inline RoiBilinear roi_bilinear(double y, double x, int64_t H, int64_t W) {
  RoiBilinear b;
  if (H <= 0 || W <= 0) return b;
  // Written as a positive test so that NaN falls out of range.
  if (!(y >= -1.0 && y <= double(H) && x >= -1.0 && x <= double(W))) return b;
  b.in_range = true;
  b.slope_y = roi_bilinear_axis(y, H, b.y0, b.y1, b.ly);
  b.slope_x = roi_bilinear_axis(x, W, b.x0, b.x1, b.lx);
  b.hy = 1.0 - b.ly;
  b.hx = 1.0 - b.lx;
  return b;
}

// The interpolated value on plane (row-major H x W, row stride W). Every corner contributes
// weight * value even when the weight is 0, so NaN/Inf at a corner propagate (0 * inf = NaN)
// like torchvision's CPU kernel.
inline double roi_bilinear_value(const double* plane, int64_t W, const RoiBilinear& b) {
  if (!b.in_range) return 0.0;
  const double v00 = plane[b.y0 * W + b.x0], v01 = plane[b.y0 * W + b.x1];
  const double v10 = plane[b.y1 * W + b.x0], v11 = plane[b.y1 * W + b.x1];
  return b.w00() * v00 + b.w01() * v01 + b.w10() * v10 + b.w11() * v11;
}

// Scatter g * weight / divisor to each corner of grad_plane (the transpose of
// roi_bilinear_value; torchvision's operation order).
inline void roi_bilinear_scatter(double* grad_plane, int64_t W, const RoiBilinear& b, double g,
                                 double divisor = 1.0) {
  if (!b.in_range) return;
  grad_plane[b.y0 * W + b.x0] += g * b.w00() / divisor;
  grad_plane[b.y0 * W + b.x1] += g * b.w01() / divisor;
  grad_plane[b.y1 * W + b.x0] += g * b.w10() / divisor;
  grad_plane[b.y1 * W + b.x1] += g * b.w11() / divisor;
}

// The true partial derivatives of roi_bilinear_value with respect to y and x at the point b
// was built for. Out of range, on [-1, 0) and on [size-1, size] the value is flat in that
// coordinate, so the derivative is exactly 0 there. At a kink the right-sided derivative
// (as the coordinate increases) is taken: at y = 0 exactly the interior slope, at y = H-1
// exactly 0, at y = -1 exactly 0, at an interior integer y = k the slope of [k, k+1].
inline void roi_bilinear_derivative(const double* plane, int64_t W, const RoiBilinear& b, double& dy,
                                    double& dx) {
  dy = 0.0;
  dx = 0.0;
  if (!b.in_range) return;
  const double v00 = plane[b.y0 * W + b.x0], v01 = plane[b.y0 * W + b.x1];
  const double v10 = plane[b.y1 * W + b.x0], v11 = plane[b.y1 * W + b.x1];
  if (b.slope_y) dy = b.hx * (v10 - v00) + b.lx * (v11 - v01);
  if (b.slope_x) dx = b.hy * (v01 - v00) + b.ly * (v11 - v10);
}

}  // namespace oplab::ref
