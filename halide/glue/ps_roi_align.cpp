// ps_roi_align on the Halide kernels: float32 copies of the tensors, the feature map and its
// gradient in the position-sensitive view (ps_roi_view.h), the largest sampling grid of any
// roi (the kernels' sample-loop extent), and the calls (forward; backward when the case has
// grad_output). The benchmark times the same calls on buffers converted once (prepare).
#include <algorithm>
#include <memory>

#include "core/params.h"
#include "halide/glue/ps_roi_view.h"
#include "halide/glue/roi_call.h"
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

class PsRoiAlignCall : public RoiCall {
 public:
  PsRoiAlignCall(const Case& c, HalideDevice device)
      : RoiCall(c, device, parse_ps_roi_align(c).output_shape(), "ps_roi_align"), p_(parse_ps_roi_align(c)) {
    in_b_ = ps_view(input_, p_.PH, p_.PW);
    if (has_grad_) gin_b_ = ps_view(gin_, p_.PH, p_.PW);
    scale_ = p_.spatial_scale;  // the kernels form coordinates in double
    sr_ = int(std::max<int64_t>(std::min<int64_t>(p_.sampling_ratio, 1 << 30), -1));
    grid_ = roi_max_grid(p_.sampling_ratio, c.in("rois"), p_.spatial_scale, p_.PH, p_.PW, ref::kAlignedBox);
  }

  void forward() {
    if (!work_) return;
    check(OPLAB_KERNEL(ps_roi_align_fwd, device_)(&ctx_, in_b_, rois_b_, scale_, sr_, grid_, out_b_), ctx_,
          "ps_roi_align forward");
  }

  void backward() {
    if (!work_ || !has_grad_) return;
    check(OPLAB_KERNEL(ps_roi_align_bwd, device_)(&ctx_, in_b_, rois_b_, gout_b_, scale_, sr_, grid_, gin_b_), ctx_,
          "ps_roi_align backward");
  }

 private:
  PsRoiParams p_;
  double scale_ = 1;
  int sr_ = 0, grid_ = 1;
};

const HalideOpRegistrar registrar({"ps_roi_align", run_call<PsRoiAlignCall>, nullptr, prepare_call<PsRoiAlignCall>});

}  // namespace

}  // namespace oplab::halide_glue
