#pragma once
// What the glue of ps_roi_align and ps_roi_pool shares. The view of a feature map (or its
// gradient) that their kernels take: [N, C, H, W] read as [N, Co, PH, PW, H, W] with
// C = Co * PH * PW, i.e. the Halide dims (x, y, pw, ph, c, n). Channel (c * PH + ph) * PW + pw,
// the one that bin (ph, pw) of output channel c reads, is then indexed by the bin itself. No
// copy; host-dirty, as view(). And their call: a RoiCall over that view, with the op's params.
#include <cstdint>
#include <string>
#include <utility>

#include <HalideBuffer.h>

#include "core/op_desc.h"
#include "core/params.h"
#include "core/tensor.h"
#include "halide/glue/roi_call.h"
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

// Both kernels take the scale in double: ps_roi_align forms its coordinates in double, and
// ps_roi_pool rounds x * s in double, as the reference does (SPEC §11).
class PsRoiCall : public RoiCall {
 public:
  PsRoiCall(const Case& c, const ValidParams& vp, HalideDevice device, std::string op)
      : RoiCall(c, device, vp.output_shape, std::move(op)), p_(vp.as<PsRoiParams>()) {
    in_b_ = ps_view(input_, p_.PH, p_.PW);
    if (has_grad_) gin_b_ = ps_view(gin_, p_.PH, p_.PW);
  }

  static constexpr const char* kForward = "forward";
  static constexpr const char* kBackward = "backward";
  // Both ops' paths (HalideOp::paths): blocks of output channels, tiles on the CPU.
  static std::vector<KernelPath> paths() { return roi_paths({{kForward}, {kBackward}}, kPsChannelBlocks, kPsWideScatter); }

 protected:
  Blocking blocking() const { return {p_.Co, oplab_widths::kPsLanes, kPsChannelBlocks, kPsWideScatter, false}; }
  PsRoiParams p_;
};

}  // namespace oplab::halide_glue
