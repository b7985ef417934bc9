#pragma once
// deform_conv2d's bilinear rule B (SPEC §2) on one H x W plane read through an accessor, for
// the ops that sample a plane laid out otherwise than NCHW (ms_deform_attn's levels live in
// rows of value [N, S, M, Dh]). The rule and its two conventions are those of
// reference/deform_conv2d.cpp, stated there once:
//  * 0 outside the open range (-1, H) x (-1, W); inside, the four-corner blend at floor(y),
//    floor(x), each corner outside the plane reading 0. Every in-plane corner is added as
//    weight * value even at weight 0 (NaN/Inf in the plane spread as in the peers' kernels).
//  * the coordinate derivative is that of the blend with no outer cut-off, right-sided at
//    integers (at y = -1 exactly the value is 0 but d/dy reads row 0); 0 outside [-1, H) x [-1, W).
// The transpose scatters only to in-plane corners of nonzero weight.
#include <cmath>
#include <cstdint>

namespace oplab::ref {

struct ZeroPadCorners {
  int64_t y0 = 0, x0 = 0;
  double ly = 0, lx = 0;  // y - y0, x - x0
  double weight(int a, int b) const { return (a ? ly : 1.0 - ly) * (b ? lx : 1.0 - lx); }
};

inline ZeroPadCorners zero_pad_corners(double y, double x) {
  ZeroPadCorners q;
  q.y0 = int64_t(std::floor(y));
  q.x0 = int64_t(std::floor(x));
  q.ly = y - double(q.y0);
  q.lx = x - double(q.x0);
  return q;
}

// The open range of rule B; false for NaN.
inline bool zero_pad_in_range(double y, double x, int64_t H, int64_t W) {
  return y > -1.0 && y < double(H) && x > -1.0 && x < double(W);
}

// B(y, x); px(h, w) is called for in-plane pixels only.
template <class Px>
double zero_pad_bilinear(double y, double x, int64_t H, int64_t W, Px px) {
  if (!zero_pad_in_range(y, x, H, W)) return 0.0;
  const ZeroPadCorners q = zero_pad_corners(y, x);
  double v = 0.0;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      const int64_t h = q.y0 + a, w = q.x0 + b;
      if (h >= 0 && h < H && w >= 0 && w < W) v += q.weight(a, b) * px(h, w);
    }
  return v;
}

// The transpose of B: add(h, w, g * weight) for each in-plane corner of nonzero weight.
template <class Add>
void zero_pad_scatter(double y, double x, int64_t H, int64_t W, double g, Add add) {
  if (!zero_pad_in_range(y, x, H, W)) return;
  const ZeroPadCorners q = zero_pad_corners(y, x);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) {
      const int64_t h = q.y0 + a, w = q.x0 + b;
      const double wt = q.weight(a, b);
      if (h < 0 || h >= H || w < 0 || w >= W || wt == 0.0) continue;
      add(h, w, g * wt);
    }
}

struct ZeroPadGrad {
  double dy = 0, dx = 0;
};

// dB/dy and dB/dx with no outer cut-off, right-sided at integers; 0 outside [-1, H) x [-1, W)
// (every corner is outside the plane there; returning early keeps floor() within int64).
template <class Px>
ZeroPadGrad zero_pad_coord_grad(double y, double x, int64_t H, int64_t W, Px px) {
  if (!(y >= -1.0 && y < double(H) && x >= -1.0 && x < double(W))) return {};
  const ZeroPadCorners q = zero_pad_corners(y, x);
  auto v = [&](int64_t h, int64_t w) { return h >= 0 && h < H && w >= 0 && w < W ? px(h, w) : 0.0; };
  const double v00 = v(q.y0, q.x0), v01 = v(q.y0, q.x0 + 1), v10 = v(q.y0 + 1, q.x0), v11 = v(q.y0 + 1, q.x0 + 1);
  ZeroPadGrad g;
  g.dy = (1.0 - q.lx) * (v10 - v00) + q.lx * (v11 - v01);
  g.dx = (1.0 - q.ly) * (v01 - v00) + q.ly * (v11 - v10);
  return g;
}

}  // namespace oplab::ref
