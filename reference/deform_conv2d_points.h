#pragma once
// The sampling points of deform_conv2d (SPEC §2) and where a point's offsets and mask lie, for
// the code outside the reference that walks them one point at a time: the study variants
// (variants/dcn_*.cpp) and the kink finder (gradcheck/kinks_deform_conv2d.cpp). They visit the
// same points in the same order and read the same channels, so the walk is written once here.
// (The reference itself loops per output channel and reaches the points from there.)
#include <cstdint>

#include "core/params.h"

namespace oplab::ref {

// Point (n, d, i, j, oy, ox): tap (i, j) of offset group d at output pixel (oy, ox) of image n.
struct DcnPoint {
  int64_t n = 0, d = 0, i = 0, j = 0, oy = 0, ox = 0;
  int64_t k = 0;         // the tap's index in its kernel: i * kw + j
  int64_t dy_chan = 0;   // offset channel of its Δy (rows), 2 (dK + k); Δx is the next one
  int64_t mask_chan = 0; // mask channel, dK + k
};

// Calls f(point) for every point, image outermost, then offset group, tap row, tap column,
// output row, output column.
template <class F>
void for_each_dcn_point(const DeformConvParams& p, F f) {
  const int64_t K = p.kh * p.kw;
  DcnPoint q;
  for (q.n = 0; q.n < p.N; ++q.n)
    for (q.d = 0; q.d < p.D; ++q.d)
      for (q.i = 0; q.i < p.kh; ++q.i)
        for (q.j = 0; q.j < p.kw; ++q.j) {
          q.k = q.i * p.kw + q.j;
          q.mask_chan = q.d * K + q.k;
          q.dy_chan = 2 * q.mask_chan;
          for (q.oy = 0; q.oy < p.Ho; ++q.oy)
            for (q.ox = 0; q.ox < p.Wo; ++q.ox) f(static_cast<const DcnPoint&>(q));
        }
}

}  // namespace oplab::ref
