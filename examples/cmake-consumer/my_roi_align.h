#pragma once
// The kernel under test: roi_align forward in double, written from the op's definition
// (oplab's docs/spec.md §4). Plain pointers and sizes, no oplab types: the plugin and the
// GoogleTest backend both wrap it.
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace my {

struct RoiAlignArgs {
  int64_t N, C, H, W, K, PH, PW;
  double spatial_scale;
  int64_t sampling_ratio;
  bool aligned, max_mode;
};

inline bool axis(double c, int64_t size, int64_t& i0, int64_t& i1, double& l) {
  if (c < 0) c = 0;
  i0 = int64_t(std::floor(c));
  if (i0 >= size - 1) {
    i0 = i1 = size - 1;
    c = double(size - 1);
  } else {
    i1 = i0 + 1;
  }
  l = c - double(i0);
  return true;
}

// The value at (y, x) of one plane: bilinear within the image, the edge replicated up to one
// pixel outside, 0 beyond. An empty plane (H or W = 0) has no pixel to read: 0.
inline double sample(const double* plane, int64_t H, int64_t W, double y, double x) {
  if (H <= 0 || W <= 0) return 0.0;
  if (!(y >= -1.0 && y <= double(H) && x >= -1.0 && x <= double(W))) return 0.0;
  int64_t y0, y1, x0, x1;
  double ly, lx;
  axis(y, H, y0, y1, ly);
  axis(x, W, x0, x1, lx);
  const double hy = 1.0 - ly, hx = 1.0 - lx;
  return hy * hx * plane[y0 * W + x0] + hy * lx * plane[y0 * W + x1] + ly * hx * plane[y1 * W + x0] +
         ly * lx * plane[y1 * W + x1];
}

inline int64_t grid(int64_t ratio, double extent, int64_t pooled) {
  if (ratio > 0) return ratio;
  const double g = std::ceil(extent / double(pooled));
  if (!(g == g)) return 0;
  return int64_t(std::clamp(g, -2147483647.0, 2147483647.0));
}

// out: K x C x PH x PW.
inline void roi_align_forward(const RoiAlignArgs& a, const double* input, const double* rois, double* out) {
  const double off = a.aligned ? 0.5 : 0.0;
  for (int64_t k = 0; k < a.K; ++k) {
    const double* r = rois + k * 5;
    const int64_t n = int64_t(std::lround(r[0]));
    const double sx = r[1] * a.spatial_scale - off, sy = r[2] * a.spatial_scale - off;
    double rw = r[3] * a.spatial_scale - off - sx, rh = r[4] * a.spatial_scale - off - sy;
    if (!a.aligned) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    const double bh = rh / double(a.PH), bw = rw / double(a.PW);
    const int64_t gh = grid(a.sampling_ratio, rh, a.PH), gw = grid(a.sampling_ratio, rw, a.PW);
    const int64_t count = std::max<int64_t>(gh * gw, 1);
    for (int64_t c = 0; c < a.C; ++c) {
      const double* plane = input + (n * a.C + c) * a.H * a.W;
      for (int64_t ph = 0; ph < a.PH; ++ph)
        for (int64_t pw = 0; pw < a.PW; ++pw) {
          double sum = 0, best = 0;
          bool any = false, winner = false;
          for (int64_t iy = 0; iy < gh; ++iy) {
            const double y = (sy + double(ph) * bh) + (double(iy) + 0.5) * bh / double(gh);
            for (int64_t ix = 0; ix < gw; ++ix) {
              const double x = (sx + double(pw) * bw) + (double(ix) + 0.5) * bw / double(gw);
              const double v = sample(plane, a.H, a.W, y, x);
              any = true;
              sum += v;
              if (!std::isnan(v) && (!winner || v > best)) best = v, winner = true;
            }
          }
          double& o = out[((k * a.C + c) * a.PH + ph) * a.PW + pw];
          if (!a.max_mode) o = sum / double(count);
          else o = (any && !winner) ? NAN : best;
        }
    }
  }
}

}  // namespace my
