// ps_roi_pool on the Halide kernels: float32 copies of the tensors, the feature map and its
// gradient in the position-sensitive view (ps_roi_view.h), and the calls (forward; backward
// when the case has grad_output). The benchmark times the same calls on buffers converted once
// (prepare).
#include <memory>

#include "core/params.h"
#include "halide/glue/ps_roi_view.h"
#include "halide/halide_glue.h"
#include "halide/ops_glue.h"
#include "ps_roi_pool_bwd_cpu.h"
#include "ps_roi_pool_bwd_cuda.h"
#include "ps_roi_pool_bwd_opencl.h"
#include "ps_roi_pool_fwd_cpu.h"
#include "ps_roi_pool_fwd_cuda.h"
#include "ps_roi_pool_fwd_opencl.h"

namespace oplab::halide_glue {

namespace {

class PsRoiPoolCall : public PsRoiCall {
 public:
  PsRoiPoolCall(const Case& c, const ValidParams& vp, HalideDevice device) : PsRoiCall(c, vp, device, "ps_roi_pool") {}

  // The forward's bins never read the last column: its tasks copy W - 1 of them. The CPU
  // backward adds into the planes themselves (no channel blocks, nothing transposed).
  Blocking blocking() const {
    Blocking b = PsRoiCall::blocking();
    b.copied_width_less = 1;
    b.wide_scatter = false;
    return b;
  }
  static std::vector<KernelPath> paths() { return roi_paths({{kForward}, {kBackward}}, kPsChannelBlocks, false); }

  void forward() {
    if (!note_call(kForward, blocking(), false)) return;
    check(OPLAB_KERNEL(ps_roi_pool_fwd, device_)(&ctx_, in_b_, rois_b_, p_.spatial_scale, out_b_), ctx_,
          "ps_roi_pool forward");
  }

  void backward() {
    if (!has_grad_ || !note_call(kBackward, blocking(), true)) return;
    check(OPLAB_KERNEL(ps_roi_pool_bwd, device_)(&ctx_, in_b_, rois_b_, gout_b_, p_.spatial_scale, gin_b_), ctx_,
          "ps_roi_pool backward");
  }
};

const HalideOpRegistrar registrar({"ps_roi_pool", run_call<PsRoiPoolCall>, nullptr, prepare_call<PsRoiPoolCall>,
                                   PsRoiPoolCall::paths()});

}  // namespace

}  // namespace oplab::halide_glue
