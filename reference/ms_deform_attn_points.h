#pragma once
// The sampling points of ms_deform_attn (SPEC §13), walked the same way by the reference, the
// seeded bugs, the kink finder and the comparison traits: point (n, q, m, l, p) of query q,
// head m, level l, with its normalised location (x first) and the pixel coordinates the rule
// samples at, y = loc_y * H_l - 0.5 and x = loc_x * W_l - 0.5 (formed in double exactly so).
#include "core/geometry_rounding.h"
#include <cmath>
#include <cstdint>

#include "core/params.h"

namespace oplab::ref {

// The pixel coordinate of a normalised location along an axis of `size` pixels.
inline double msda_pixel(double loc, int64_t size) { return geom(geom(loc * double(size)) - 0.5); }

struct MsdaPoint {
  int64_t n = 0, q = 0, m = 0, l = 0, p = 0;
  int64_t aw = 0;   // flat index in attention_weights
  int64_t loc = 0;  // flat index of loc_x in sampling_locations (loc_y is the next element)
  double y = 0, x = 0;  // pixel coordinates on level l
  // Both locations finite. A non-finite location samples nothing: its value, and every
  // gradient it would give or take, is 0 (docs/semantics.md).
  bool finite = true;
};

// Calls f(point) for every point in row-major order of attention_weights.
template <class F>
void for_each_msda_point(const MsDeformAttnParams& p, const Tensor& loc, F f) {
  MsdaPoint s;
  for (s.n = 0; s.n < p.N; ++s.n)
    for (s.q = 0; s.q < p.Lq; ++s.q)
      for (s.m = 0; s.m < p.M; ++s.m)
        for (s.l = 0; s.l < p.L; ++s.l)
          for (s.p = 0; s.p < p.P; ++s.p) {
            s.loc = 2 * s.aw;
            const double lx = loc.data[size_t(s.loc)], ly = loc.data[size_t(s.loc + 1)];
            s.finite = std::isfinite(lx) && std::isfinite(ly);
            s.x = msda_pixel(lx, p.W[size_t(s.l)]);
            s.y = msda_pixel(ly, p.H[size_t(s.l)]);
            f(static_cast<const MsdaPoint&>(s));
            ++s.aw;
          }
}

}  // namespace oplab::ref
