#pragma once
// What the glue of the RoI ops (roi_align, roi_pool, deform_roi_pool, and through PsRoiCall,
// ps_roi_view.h, ps_roi_align and ps_roi_pool) shares: float32 copies of the feature map and
// the boxes, the output, and with grad_output the gradient of the feature map; their Halide
// buffers; whether there is anything to compute; and the end of a call (sync for the benchmark,
// result). Each op's call adds its parameters and kernel calls.
#include <stdexcept>
#include <string>
#include <vector>

#include "core/case.h"
#include "halide/generators/kernel_widths.h"
#include "halide/glue/roi_order.h"
#include "halide/halide_glue.h"
#include "halide/ops_glue.h"

namespace oplab::halide_glue {

// The kernel paths the RoI ops share (HalideOp::paths): no call at all, and on the CPU the
// 16 x 16 tiles in which an image 16 or more pixels wide is copied into channel blocks (a
// narrower one goes a column at a time), several blocks of channels, and in the backward the
// tiles in which the gradient is transposed back (roi_align and deform_roi_pool: a wide image
// and a full block of channels, roi_sampling.h; ps_roi_align: a wide image, however few its
// output channels, ps_roi_blocks.h).
constexpr const char* kRoiWideRows = "image 16 or more pixels wide: copied in 16 x 16 tiles";
constexpr const char* kRoiWideScatter = "backward: gradient transposed in tiles (wide image, a full channel block)";
constexpr const char* kPsWideScatter = "backward: gradient transposed in tiles (wide image)";
constexpr const char* kRoiChannelBlocks = "more than 16 channels: several channel blocks";
constexpr const char* kPsChannelBlocks = "more than 8 output channels: several channel blocks";
// `blocks`: the name of the several-blocks path, which says the op's block width;
// `wide_scatter`: the name of the backward's tiled transpose (nullptr: the op has none).
inline std::vector<KernelPath> roi_paths(std::vector<KernelPath> own, const char* blocks, const char* wide_scatter) {
  own.push_back({kNoKernelCall});
  own.push_back({kRoiWideRows, PathOn::Cpu});
  own.push_back({blocks, PathOn::Cpu});
  if (wide_scatter) own.push_back({wide_scatter, PathOn::Cpu});
  return own;
}

class RoiCall {
 public:
  RoiCall(const Case& c, HalideDevice device, const Shape& out_shape, std::string op)
      : op_(std::move(op)),
        device_(device),
        input_(to_float(c.in("input"))),
        rois_(to_float(c.in("rois"))),
        out_(out_shape) {
    // Nothing to compute: no rois, no channels, or an empty image (every sample out of range,
    // so every output and gradient is 0, which the zero-filled tensors already are).
    work_ = out_.numel() > 0 && input_.shape[2] > 0 && input_.shape[3] > 0;
    in_b_ = view(input_), rois_b_ = view(rois_), out_b_ = view(out_);
    if (c.grad_output) {
      has_grad_ = true;
      gout_ = to_float(*c.grad_output);
      gin_ = TensorF(input_.shape);
      gout_b_ = view(gout_), gin_b_ = view(gin_);
    }
  }
  RoiCall(const RoiCall&) = delete;
  RoiCall& operator=(const RoiCall&) = delete;
  virtual ~RoiCall() {
    for (Buf* b : {&in_b_, &rois_b_, &out_b_, &gout_b_, &gin_b_})
      if (b->data()) release(*b);
    if (order_b_.raw_buffer()->device) order_b_.device_free();
  }

  void before_timed_backward() {}

  const std::vector<std::string>& taken_paths() const { return paths_.list(); }

  // The order in which the CPU kernels visit the rois (roi_order.h), for the kernels that take
  // it; `scale` is the kernels' spatial scale. One more element keeps the data pointer valid
  // when there are no rois.
  void set_cache_order(double scale) {
    order_ = roi_cache_order(rois_, scale);
    const int K = int(order_.size());
    order_.push_back(0);
    order_b_ = host_buffer(order_.data(), {K});
  }

  // Waits for the GPU (the benchmark's end of a call); a no-op on the CPU.
  void sync(bool backward) {
    Buf& b = backward ? gin_b_ : out_b_;
    if (on_gpu(device_) && b.raw_buffer()->device && b.device_sync() != 0)
      throw std::runtime_error(std::string(halide_backend_name(device_)) + ": " + op_ + " did not finish on the device");
  }

  // The output and, with grad_output, the gradient of the feature map, copied back to the host.
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

 protected:
  using Buf = Halide::Runtime::Buffer<float>;

  // How the op's CPU kernels block channels: `channels` (the output channels of the
  // position-sensitive ops, the input's of the others) in blocks of `lanes`, the several-blocks
  // path's name, and the name of the backward's tiled transpose (roi_paths; nullptr: none),
  // which some kernels take only for a full block of channels.
  struct Blocking {
    int64_t channels;
    int lanes;
    const char* blocks;
    const char* wide_scatter;
    bool scatter_needs_full_block = true;
    // The width of the block a forward task copies: W, or W - 1 for ps_roi_pool, whose bins
    // never read the last column (its generator specialises on that width).
    int64_t copied_width_less = 0;
  };
  // Notes a kernel call's path `own` alone (a kernel that takes none of the shared CPU paths).
  // False when there is nothing to compute (then no kernel is called).
  bool note_own(const char* own) {
    if (!work_) {
      paths_.take(kNoKernelCall);
      return false;
    }
    paths_.take(own);
    return true;
  }
  // Notes a kernel call's path `own` and the shared CPU paths it takes; false as note_own.
  bool note_call(const char* own, const Blocking& b, bool backward) {
    if (!note_own(own)) return false;
    if (device_ != HalideDevice::Cpu) return true;
    const bool wide = input_.shape[3] >= oplab_widths::kRoiLanes;
    if (!backward && input_.shape[3] - b.copied_width_less >= oplab_widths::kRoiLanes) paths_.take(kRoiWideRows);
    if (!backward && b.channels > b.lanes) paths_.take(b.blocks);
    if (backward && b.wide_scatter && wide && (b.channels >= b.lanes || !b.scatter_needs_full_block))
      paths_.take(b.wide_scatter);
    return true;
  }
  PathLog paths_;
  std::string op_;
  bool work_ = false, has_grad_ = false;
  HalideDevice device_;
  CallContext ctx_;
  TensorF input_, rois_, out_, gout_, gin_;
  Buf in_b_, rois_b_, out_b_, gout_b_, gin_b_;
  std::vector<int32_t> order_;
  Halide::Runtime::Buffer<int32_t> order_b_;
};

}  // namespace oplab::halide_glue
