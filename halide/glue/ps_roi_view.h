#pragma once
// The view of a feature map (or its gradient) that the ps_roi_align and ps_roi_pool kernels
// take: [N, C, H, W] read as [N, Co, PH, PW, H, W] with C = Co * PH * PW, i.e. the Halide dims
// (x, y, pw, ph, c, n). Channel (c * PH + ph) * PW + pw, the one that bin (ph, pw) of output
// channel c reads, is then indexed by the bin itself. No copy; host-dirty, as view().
#include <cstdint>

#include <HalideBuffer.h>

#include "core/tensor.h"
#include "halide/halide_glue.h"

namespace oplab::halide_glue {

inline Halide::Runtime::Buffer<float> ps_view(TensorF& t, int64_t PH, int64_t PW) {
  const int64_t N = t.dim(0), C = t.dim(1), H = t.dim(2), W = t.dim(3);
  const int64_t plane = H * W;
  halide_dimension_t dims[6] = {{0, int32_t(W), 1},
                                {0, int32_t(H), int32_t(W)},
                                {0, int32_t(PW), int32_t(plane)},
                                {0, int32_t(PH), int32_t(PW * plane)},
                                {0, int32_t(C / (PH * PW)), int32_t(PH * PW * plane)},
                                {0, int32_t(N), int32_t(C * plane)}};
  Halide::Runtime::Buffer<float> b(t.data.data(), 6, dims);
  b.set_host_dirty();
  return b;
}

}  // namespace oplab::halide_glue
