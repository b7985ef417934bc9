#pragma once
// How the RoI references walk their outputs (k, c, ph, pw), rois outermost, and which input
// plane each output element reads: the forward reads that plane and the backward scatters into
// the same plane of the gradient, so an op's forward and backward (and roi_align's max range)
// walk alike. Written once here so that they cannot drift apart; the bodies stay in the ops.
#include <cstdint>

#include "core/params.h"
#include "reference/roi_geometry.h"

namespace oplab::ref {

// roi_align and deform_roi_pool (P: RoiAlignParams, DeformRoiPoolParams): output channel c
// reads channel c of the roi's image. Calls f(r, c, ph, pw, b, plane) with b = box(r), built
// once per roi, and plane = (b.n * C + c) * H * W, the offset of that channel's H x W plane.
template <class P, class Box, class F>
void for_each_roi_output(const P& p, Box box, F f) {
  for (int64_t r = 0; r < p.K; ++r) {
    const RoiBox b = box(r);
    for (int64_t c = 0; c < p.C; ++c) {
      const int64_t plane = (b.n * p.C + c) * p.H * p.W;
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw) f(r, c, ph, pw, b, plane);
    }
  }
}

// ps_roi_align and ps_roi_pool (SPEC §11): output channel c of bin (ph, pw) reads the one input
// channel (c*PH + ph)*PW + pw of the roi's image. Calls f(r, c, ph, pw, plane) for c < Co with
// plane the offset of that channel's H x W plane.
template <class F>
void for_each_ps_output(const PsRoiParams& p, const Tensor& rois, F f) {
  for (int64_t r = 0; r < p.K; ++r) {
    const int64_t n = int64_t(rois.at(r, 0));  // validated: an integer in [0, N)
    for (int64_t c = 0; c < p.Co; ++c)
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw) f(r, c, ph, pw, (n * p.C + p.input_channel(c, ph, pw)) * p.H * p.W);
  }
}

}  // namespace oplab::ref
