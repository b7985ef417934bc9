// ps_roi_align on the Halide kernels: float32 copies of the tensors, the feature map and its
// gradient in the position-sensitive view (ps_roi_view.h), the largest sampling grid of any
// roi (the kernels' sample-loop extent), and the calls (forward; backward when the case has
// grad_output). The benchmark times the same calls on buffers converted once (prepare).
#include <memory>

#include "core/params.h"
#include "halide/glue/ps_roi_view.h"
#include "halide/glue/roi_grid.h"
#include "halide/halide_glue.h"
#include "halide/ops_glue.h"
#include "ps_roi_align_bwd_cpu.h"
#include "ps_roi_align_bwd_cuda.h"
#include "ps_roi_align_bwd_opencl.h"
#include "ps_roi_align_fwd_cpu.h"
#include "ps_roi_align_fwd_cuda.h"
#include "ps_roi_align_fwd_opencl.h"

namespace oplab::halide_glue {

namespace {

class PsRoiAlignCall : public PsRoiCall {
 public:
  PsRoiAlignCall(const Case& c, const ValidParams& vp, HalideDevice device)
      : PsRoiCall(c, vp, device, "ps_roi_align"),
        s_(roi_sampling(p_.spatial_scale, p_.sampling_ratio, c.in("rois"), p_.PH, p_.PW, ref::kAlignedBox)) {}

  void forward() {
    if (!note_call(kForward, blocking(), false)) return;
    check(OPLAB_KERNEL(ps_roi_align_fwd, device_)(&ctx_, in_b_, rois_b_, s_.scale, s_.sr, s_.grid, out_b_), ctx_,
          "ps_roi_align forward");
  }

  void backward() {
    if (!has_grad_ || !note_call(kBackward, blocking(), true)) return;
    check(OPLAB_KERNEL(ps_roi_align_bwd, device_)(&ctx_, in_b_, rois_b_, gout_b_, s_.scale, s_.sr, s_.grid, gin_b_),
          ctx_, "ps_roi_align backward");
  }

 private:
  RoiSampling s_;
};

const HalideOpRegistrar registrar({"ps_roi_align", run_call<PsRoiAlignCall>, nullptr, prepare_call<PsRoiAlignCall>,
                                   PsRoiAlignCall::paths()});

}  // namespace

}  // namespace oplab::halide_glue
