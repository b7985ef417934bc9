// roi_align on the Halide kernels: float32 copies of the tensors, the largest sampling grid
// of any roi (the kernels' sample-loop extent), and the calls (forward; backward when the case
// has grad_output). The benchmark times the same calls on buffers converted once (prepare).
#include <memory>

#include "core/params.h"
#include "halide/glue/roi_call.h"
#include "halide/glue/roi_grid.h"
#include "halide/halide_glue.h"
#include "halide/ops_glue.h"
#include "roi_align_avg_bwd_cpu.h"
#include "roi_align_avg_bwd_cuda.h"
#include "roi_align_avg_bwd_opencl.h"
#include "roi_align_avg_fwd_cpu.h"
#include "roi_align_avg_fwd_cuda.h"
#include "roi_align_avg_fwd_opencl.h"
#include "roi_align_max_bwd_cpu.h"
#include "roi_align_max_bwd_cuda.h"
#include "roi_align_max_bwd_opencl.h"
#include "roi_align_max_fwd_cpu.h"
#include "roi_align_max_fwd_cuda.h"
#include "roi_align_max_fwd_opencl.h"

namespace oplab::halide_glue {

namespace {

constexpr const char* kForwardAvg = "forward avg";
constexpr const char* kForwardMax = "forward max";
constexpr const char* kBackwardAvg = "backward avg";
constexpr const char* kBackwardMax = "backward max";

class RoiAlignCall : public RoiCall {
 public:
  RoiAlignCall(const Case& c, const ValidParams& vp, HalideDevice device)
      : RoiCall(c, device, vp.output_shape, "roi_align"), p_(vp.as<RoiAlignParams>()),
        s_(roi_sampling(p_.spatial_scale, p_.sampling_ratio, c.in("rois"), p_.PH, p_.PW,
                        p_.aligned ? ref::kAlignedBox : ref::kLegacyBox)) {
    set_cache_order(s_.scale);
  }

  void forward() {
    if (!note_call(p_.mode == PoolMode::Avg ? kForwardAvg : kForwardMax, blocking(), false)) return;
    const int ph = to_int32(p_.PH, "output_size"), pw = to_int32(p_.PW, "output_size");
    const bool a = p_.aligned;
    int status;
    if (p_.mode == PoolMode::Avg)
      status = OPLAB_KERNEL(roi_align_avg_fwd, device_)(&ctx_, in_b_, rois_b_, s_.scale, s_.sr, a, ph, pw, s_.grid, order_b_, out_b_);
    else
      status = OPLAB_KERNEL(roi_align_max_fwd, device_)(&ctx_, in_b_, rois_b_, s_.scale, s_.sr, a, ph, pw, s_.grid, order_b_, out_b_);
    check(status, ctx_, "roi_align forward");
  }

  void backward() {
    if (!has_grad_ || !note_call(p_.mode == PoolMode::Avg ? kBackwardAvg : kBackwardMax, blocking(), true)) return;
    const bool a = p_.aligned;
    int status;
    if (p_.mode == PoolMode::Avg)
      status = OPLAB_KERNEL(roi_align_avg_bwd, device_)(&ctx_, in_b_, rois_b_, gout_b_, s_.scale, s_.sr, a, s_.grid, gin_b_);
    else
      status = OPLAB_KERNEL(roi_align_max_bwd, device_)(&ctx_, in_b_, rois_b_, gout_b_, s_.scale, s_.sr, a, s_.grid, gin_b_);
    check(status, ctx_, "roi_align backward");
  }

 private:
  Blocking blocking() const { return {input_.shape[1], oplab_widths::kRoiLanes, kRoiChannelBlocks, kRoiWideScatter}; }
  RoiAlignParams p_;
  RoiSampling s_;
};

const HalideOpRegistrar registrar({"roi_align", run_call<RoiAlignCall>, nullptr, prepare_call<RoiAlignCall>,
                                   roi_paths({{kForwardAvg}, {kForwardMax}, {kBackwardAvg}, {kBackwardMax}}, kRoiChannelBlocks, kRoiWideScatter)});

}  // namespace

}  // namespace oplab::halide_glue
