// roi_pool on the Halide kernels: float32 copies of the tensors and the calls (forward;
// backward when the case has grad_output). The forward also records every bin's argmax, which
// the backward scatters to (as torchvision's backward does). The benchmark times the same
// calls on buffers converted once (prepare); its backward runs after one untimed forward.
#include <memory>
#include <vector>

#include "core/params.h"
#include "halide/glue/roi_call.h"
#include "halide/halide_glue.h"
#include "halide/ops_glue.h"
#include "roi_pool_bwd_cpu.h"
#include "roi_pool_bwd_cuda.h"
#include "roi_pool_bwd_opencl.h"
#include "roi_pool_fwd_cpu.h"
#include "roi_pool_fwd_cuda.h"
#include "roi_pool_fwd_opencl.h"

namespace oplab::halide_glue {

namespace {

constexpr const char* kForward = "forward";
constexpr const char* kBackward = "backward";
constexpr const char* kWideBins = "16 or more bins a roi: stored 16 at a time";

class RoiPoolCall : public RoiCall {
 public:
  RoiPoolCall(const Case& c, const ValidParams& vp, HalideDevice device)
      : RoiCall(c, device, vp.output_shape, "roi_pool"), p_(vp.as<RoiPoolParams>()) {
    // torchvision's float kernel rounds x * s in float: so do these kernels.
    scale_ = float(p_.spatial_scale);
    set_cache_order(scale_);
    // The backward kernel sees the gradient as planes of H * W pixels.
    if (has_grad_) gin_b_ = host_buffer(gin_.data.data(), {to_int32(p_.H * p_.W, "a plane's size"), to_int32(p_.C, "channels"), to_int32(p_.N, "a batch")});
    // The argmax has the output's shape; one more element keeps the data pointer valid when
    // the output is empty.
    argmax_.assign(size_t(out_.numel()) + 1, -1);
    std::vector<int> sizes;
    for (auto d = out_.shape.rbegin(); d != out_.shape.rend(); ++d) sizes.push_back(to_int32(*d, "a buffer extent"));
    argmax_b_ = host_buffer(argmax_.data(), sizes);
    // The CPU kernel takes the bins as one dimension (FlatBins, roi_sampling.h): views of the
    // same memory with dims (PH * PW, 1, C, K).
    if (work_ && !on_gpu(device_)) {
      const std::vector<int> flat = {to_int32(p_.PH * p_.PW, "a roi's bins"), 1, sizes[2], sizes[3]};
      out_flat_b_ = host_buffer(out_.data.data(), flat);
      argmax_flat_b_ = host_buffer(argmax_.data(), flat);
    }
  }
  ~RoiPoolCall() override {
    if (argmax_b_.raw_buffer()->device) argmax_b_.device_free();
  }

  void forward() {
    if (!note_call(kForward, blocking(), false)) return;
    if (!on_gpu(device_) && p_.PH * p_.PW >= oplab_widths::kRoiPoolWideBins) paths_.take(kWideBins);
    const int ph = to_int32(p_.PH, "output_size"), pw = to_int32(p_.PW, "output_size");
    const bool gpu = on_gpu(device_);
    const int status = OPLAB_KERNEL(roi_pool_fwd, device_)(&ctx_, in_b_, rois_b_, scale_, ph, pw, order_b_,
                                                           gpu ? out_b_ : out_flat_b_, gpu ? argmax_b_ : argmax_flat_b_);
    check(status, ctx_, "roi_pool forward");
    forward_done_ = true;
  }

  void backward() {
    if (!has_grad_ || !note_call(kBackward, blocking(), true)) return;
    if (!forward_done_) forward();  // the argmax comes from the forward
    const int pixels = to_int32(input_.shape[2] * input_.shape[3], "H * W"), images = to_int32(input_.shape[0], "N");
    const int status = OPLAB_KERNEL(roi_pool_bwd, device_)(&ctx_, argmax_b_, rois_b_, gout_b_, pixels, images, gin_b_);
    check(status, ctx_, "roi_pool backward");
  }

  // torchvision's timed backward starts from the argmax its forward saved: so does ours.
  void before_timed_backward() { forward(); }

 private:
  // The backward scatters through the argmax: no tiles of the gradient.
  Blocking blocking() const { return {input_.shape[1], oplab_widths::kRoiLanes, kRoiChannelBlocks, nullptr}; }
  RoiPoolParams p_;
  bool forward_done_ = false;
  float scale_ = 1;
  std::vector<int32_t> argmax_;
  Halide::Runtime::Buffer<int32_t> argmax_b_, argmax_flat_b_;
  Buf out_flat_b_;
};

const HalideOpRegistrar registrar({"roi_pool", run_call<RoiPoolCall>, nullptr, prepare_call<RoiPoolCall>,
                                   roi_paths({{kForward}, {kBackward}, {kWideBins, PathOn::Cpu}}, kRoiChannelBlocks, nullptr)});

}  // namespace

}  // namespace oplab::halide_glue
