// roi_align on the Halide kernels: float32 copies of the tensors, the largest sampling grid
// of any roi (the kernels' sample-loop extent), and the calls (forward; backward when the case
// has grad_output). The benchmark times the same calls on buffers converted once (prepare).
#include <memory>

#include "core/params.h"
#include "halide/glue/roi_grid.h"
#include "halide/halide_glue.h"
#include "halide/ops_glue.h"
#include "roi_align_avg_bwd_cpu.h"
#include "roi_align_avg_bwd_cuda.h"
#include "roi_align_avg_fwd_cpu.h"
#include "roi_align_avg_fwd_cuda.h"
#include "roi_align_max_bwd_cpu.h"
#include "roi_align_max_bwd_cuda.h"
#include "roi_align_max_fwd_cpu.h"
#include "roi_align_max_fwd_cuda.h"

namespace oplab::halide_glue {

namespace {

using Buf = Halide::Runtime::Buffer<float>;

class RoiAlignCall {
 public:
  RoiAlignCall(const Case& c, HalideDevice device)
      : p_(parse_roi_align(c)),
        cuda_(device == HalideDevice::Cuda),
        device_(device),
        input_(to_float(c.in("input"))),
        rois_(to_float(c.in("rois"))),
        out_(p_.output_shape()) {
    // Nothing to compute: no rois, no channels, or an empty image (every sample out of range,
    // so every output and gradient is 0, which the zero-filled tensors already are).
    work_ = out_.numel() > 0 && p_.H > 0 && p_.W > 0;
    scale_ = p_.spatial_scale;  // the kernels form coordinates in double
    sr_ = int(std::max<int64_t>(std::min<int64_t>(p_.sampling_ratio, 1 << 30), -1));
    grid_ = roi_max_grid(p_.sampling_ratio, c.in("rois"), p_.spatial_scale, p_.PH, p_.PW, !p_.aligned);
    in_b_ = view(input_), rois_b_ = view(rois_), out_b_ = view(out_);
    if (c.grad_output) {
      has_grad_ = true;
      gout_ = to_float(*c.grad_output);
      gin_ = TensorF(input_.shape);
      gout_b_ = view(gout_), gin_b_ = view(gin_);
    }
  }
  ~RoiAlignCall() {
    for (Buf* b : {&in_b_, &rois_b_, &out_b_, &gout_b_, &gin_b_})
      if (b->data()) release(*b);
  }

  void forward() {
    if (!work_) return;
    const int ph = int(p_.PH), pw = int(p_.PW);
    const bool a = p_.aligned;
    int status;
    if (p_.mode == PoolMode::Avg)
      status = cuda_ ? roi_align_avg_fwd_cuda(&ctx_, in_b_, rois_b_, scale_, sr_, a, ph, pw, grid_, out_b_)
                     : roi_align_avg_fwd_cpu(&ctx_, in_b_, rois_b_, scale_, sr_, a, ph, pw, grid_, out_b_);
    else
      status = cuda_ ? roi_align_max_fwd_cuda(&ctx_, in_b_, rois_b_, scale_, sr_, a, ph, pw, grid_, out_b_)
                     : roi_align_max_fwd_cpu(&ctx_, in_b_, rois_b_, scale_, sr_, a, ph, pw, grid_, out_b_);
    check(status, ctx_, "roi_align forward");
  }

  void backward() {
    if (!work_ || !has_grad_) return;
    const bool a = p_.aligned;
    int status;
    if (p_.mode == PoolMode::Avg)
      status = cuda_ ? roi_align_avg_bwd_cuda(&ctx_, in_b_, rois_b_, gout_b_, scale_, sr_, a, grid_, gin_b_)
                     : roi_align_avg_bwd_cpu(&ctx_, in_b_, rois_b_, gout_b_, scale_, sr_, a, grid_, gin_b_);
    else
      status = cuda_ ? roi_align_max_bwd_cuda(&ctx_, in_b_, rois_b_, gout_b_, scale_, sr_, a, grid_, gin_b_)
                     : roi_align_max_bwd_cpu(&ctx_, in_b_, rois_b_, gout_b_, scale_, sr_, a, grid_, gin_b_);
    check(status, ctx_, "roi_align backward");
  }

  void before_timed_backward() {}

  // Waits for the GPU (the benchmark's end of a call); a no-op on the CPU.
  void sync(bool backward) {
    Buf& b = backward ? gin_b_ : out_b_;
    if (cuda_ && b.raw_buffer()->device && b.device_sync() != 0)
      throw std::runtime_error("halide-cuda: roi_align did not finish on the GPU");
  }

  Result result() {
    Result r;
    if (work_) finish(device_, out_b_);
    r.outputs["output"] = to_double(out_);
    if (has_grad_) {
      if (work_) finish(device_, gin_b_);
      r.grads["input"] = to_double(gin_);
    }
    return r;
  }

 private:
  RoiAlignParams p_;
  bool cuda_, work_ = false, has_grad_ = false;
  HalideDevice device_;
  double scale_ = 1;
  int sr_ = 0, grid_ = 1;
  CallContext ctx_;
  TensorF input_, rois_, out_, gout_, gin_;
  Buf in_b_, rois_b_, out_b_, gout_b_, gin_b_;
};

const HalideOpRegistrar registrar({"roi_align", run_call<RoiAlignCall>, nullptr, prepare_call<RoiAlignCall>});

}  // namespace

}  // namespace oplab::halide_glue
