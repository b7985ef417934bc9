// ps_roi_pool on the Halide kernels: float32 copies of the tensors, the feature map and its
// gradient in the position-sensitive view (ps_roi_view.h), and the calls (forward; backward
// when the case has grad_output). The benchmark times the same calls on buffers converted once
// (prepare).
#include <memory>

#include "core/params.h"
#include "halide/glue/ps_roi_view.h"
#include "halide/glue/roi_call.h"
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

class PsRoiPoolCall : public RoiCall {
 public:
  PsRoiPoolCall(const Case& c, HalideDevice device)
      : RoiCall(c, device, parse_ps_roi_pool(c).output_shape(), "ps_roi_pool"), p_(parse_ps_roi_pool(c)) {
    in_b_ = ps_view(input_, p_.PH, p_.PW);
    if (has_grad_) gin_b_ = ps_view(gin_, p_.PH, p_.PW);
    // The kernels round x * s in double, as the reference does (SPEC §11).
    scale_ = p_.spatial_scale;
  }

  void forward() {
    if (!work_) return;
    check(OPLAB_KERNEL(ps_roi_pool_fwd, device_)(&ctx_, in_b_, rois_b_, scale_, out_b_), ctx_, "ps_roi_pool forward");
  }

  void backward() {
    if (!work_ || !has_grad_) return;
    check(OPLAB_KERNEL(ps_roi_pool_bwd, device_)(&ctx_, in_b_, rois_b_, gout_b_, scale_, gin_b_), ctx_,
          "ps_roi_pool backward");
  }

 private:
  PsRoiParams p_;
  double scale_ = 1;
};

const HalideOpRegistrar registrar({"ps_roi_pool", run_call<PsRoiPoolCall>, nullptr, prepare_call<PsRoiPoolCall>});

}  // namespace

}  // namespace oplab::halide_glue
