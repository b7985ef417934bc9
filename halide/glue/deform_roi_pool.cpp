// deform_roi_pool on the Halide kernels: float32 copies of the tensors, the largest sampling
// grid of any roi, and the calls (forward; backward when the case has grad_output). Cases
// without an offset run the kernels built without it (no offset input, no grad_offset). The
// benchmark times the same calls on buffers converted once (prepare).
#include <memory>

#include "core/params.h"
#include "halide/glue/roi_call.h"
#include "halide/glue/roi_grid.h"
#include "halide/halide_glue.h"
#include "halide/ops_glue.h"
#include "deform_roi_pool_bwd_cpu.h"
#include "deform_roi_pool_bwd_cuda.h"
#include "deform_roi_pool_bwd_opencl.h"
#include "deform_roi_pool_fwd_cpu.h"
#include "deform_roi_pool_fwd_cuda.h"
#include "deform_roi_pool_fwd_opencl.h"
#include "deform_roi_pool_plain_bwd_cpu.h"
#include "deform_roi_pool_plain_bwd_cuda.h"
#include "deform_roi_pool_plain_bwd_opencl.h"
#include "deform_roi_pool_plain_fwd_cpu.h"
#include "deform_roi_pool_plain_fwd_cuda.h"
#include "deform_roi_pool_plain_fwd_opencl.h"

namespace oplab::halide_glue {

namespace {

constexpr const char* kForwardOffset = "forward with offset";
constexpr const char* kForwardPlain = "forward without offset";
constexpr const char* kBackwardOffset = "backward with offset";
constexpr const char* kBackwardPlain = "backward without offset";

class DeformRoiPoolCall : public RoiCall {
 public:
  DeformRoiPoolCall(const Case& c, const ValidParams& vp, HalideDevice device)
      : RoiCall(c, device, vp.output_shape, "deform_roi_pool"),
        p_(vp.as<DeformRoiPoolParams>()),
        s_(roi_sampling(p_.spatial_scale, p_.sampling_ratio, c.in("rois"), p_.PH, p_.PW, ref::kAlignedBox)) {
    if (p_.has_offset) offset_ = to_float(c.in("offset")), off_b_ = view(offset_);
    if (has_grad_ && p_.has_offset) goff_ = TensorF(offset_.shape), goff_b_ = view(goff_);
    set_cache_order(s_.scale);
  }
  ~DeformRoiPoolCall() override {
    for (Buf* b : {&off_b_, &goff_b_})
      if (b->data()) release(*b);
  }

  void forward() {
    if (!note_call(p_.has_offset ? kForwardOffset : kForwardPlain, blocking(), false)) return;
    const int ph = to_int32(p_.PH, "output_size"), pw = to_int32(p_.PW, "output_size");
    int status;
    if (p_.has_offset)
      status = OPLAB_KERNEL(deform_roi_pool_fwd, device_)(&ctx_, in_b_, rois_b_, s_.scale, s_.sr, p_.gamma, ph, pw, s_.grid, order_b_, off_b_, out_b_);
    else
      status = OPLAB_KERNEL(deform_roi_pool_plain_fwd, device_)(&ctx_, in_b_, rois_b_, s_.scale, s_.sr, p_.gamma, ph, pw, s_.grid, order_b_, out_b_);
    check(status, ctx_, "deform_roi_pool forward");
  }

  void backward() {
    if (!has_grad_ || !note_call(p_.has_offset ? kBackwardOffset : kBackwardPlain, blocking(), true)) return;
    int status;
    if (p_.has_offset)
      status = OPLAB_KERNEL(deform_roi_pool_bwd, device_)(&ctx_, in_b_, rois_b_, gout_b_, s_.scale, s_.sr, p_.gamma, s_.grid, off_b_,
                                                gin_b_, goff_b_);
    else
      status = OPLAB_KERNEL(deform_roi_pool_plain_bwd, device_)(&ctx_, in_b_, rois_b_, gout_b_, s_.scale, s_.sr, p_.gamma, s_.grid, gin_b_);
    check(status, ctx_, "deform_roi_pool backward");
  }

  // The base's results, and grad_offset when the case has an offset.
  Result result() {
    Result r = RoiCall::result();
    if (has_grad_ && p_.has_offset) {
      if (work_) finish(device_, goff_b_);
      r.grads["offset"] = to_double(goff_);
    }
    return r;
  }

 private:
  Blocking blocking() const { return {input_.shape[1], oplab_widths::kRoiLanes, kRoiChannelBlocks, kRoiWideScatter}; }
  DeformRoiPoolParams p_;
  RoiSampling s_;
  TensorF offset_, goff_;
  Buf off_b_, goff_b_;
};

const HalideOpRegistrar registrar({"deform_roi_pool", run_call<DeformRoiPoolCall>, nullptr, prepare_call<DeformRoiPoolCall>,
                                   roi_paths({{kForwardOffset}, {kForwardPlain}, {kBackwardOffset}, {kBackwardPlain}},
                                             kRoiChannelBlocks, kRoiWideScatter)});

}  // namespace

}  // namespace oplab::halide_glue
