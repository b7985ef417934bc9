// ms_deform_attn on the Halide kernels (generators/ms_deform_attn_generator.cpp): float32
// copies of the tensors viewed with the generator's layouts, the level table as an int32
// buffer (H, W, first row per level), and the calls: the forward, then grad_value and the
// point gradients when the case has grad_output. Nothing to sample (an empty batch, no query,
// head, channel or point) leaves every output and gradient 0 without a call.
#include <memory>
#include <stdexcept>
#include <vector>

#include "core/params.h"
#include "halide/generators/kernel_widths.h"
#include "halide/halide_glue.h"
#include "halide/ops_glue.h"
#include "ms_deform_attn_fwd_cpu.h"
#include "ms_deform_attn_fwd_cuda.h"
#include "ms_deform_attn_fwd_opencl.h"
#include "ms_deform_attn_grad_points_cpu.h"
#include "ms_deform_attn_grad_points_cuda.h"
#include "ms_deform_attn_grad_points_opencl.h"
#include "ms_deform_attn_grad_value_cpu.h"
#include "ms_deform_attn_grad_value_cuda.h"
#include "ms_deform_attn_grad_value_opencl.h"

namespace oplab::halide_glue {

namespace {

using Buf = Halide::Runtime::Buffer<float>;

Buf view_as(TensorF& t, std::initializer_list<int64_t> extents) {
  std::vector<int> e;
  for (int64_t x : extents) e.push_back(to_int32(x, "a buffer extent"));
  return host_buffer(t.data.data(), e);
}

// The kernel paths (HalideOp::paths). On the CPU the kernels are vectorised over the head
// dimension, with a guarded tail: a head dimension of 16 or more fills whole vectors.
constexpr const char* kForward = "forward";
constexpr const char* kBackward = "backward";
constexpr const char* kFullVectors = "head dimension of 16 or more: whole vectors";
const std::vector<KernelPath> kMsdaPaths = {{kNoKernelCall}, {kForward}, {kBackward}, {kFullVectors, PathOn::Cpu}};

class MsdaCall {
 public:
  MsdaCall(const Case& c, const ValidParams& vp, HalideDevice device)
      : p_(vp.as<MsDeformAttnParams>()), device_(device) {
    value_ = to_float(c.in("value"));
    loc_ = to_float(c.in("sampling_locations"));
    aw_ = to_float(c.in("attention_weights"));
    out_ = TensorF(p_.output_shape());
    work_ = p_.N > 0 && p_.Lq > 0 && p_.M > 0 && p_.Dh > 0 && p_.P > 0;
    for (int64_t l = 0; l < p_.L; ++l)
      for (const std::vector<int64_t>* v : {&p_.H, &p_.W, &p_.start}) table_.push_back(to_int32((*v)[size_t(l)], "a level"));

    value_b_ = view(value_);  // first: view() also installs the error handler
    levels_b_ = host_buffer(table_.data(), {3, to_int32(p_.L, "levels")});
    loc_b_ = view(loc_);
    aw_b_ = view(aw_);
    out_b_ = view_as(out_, {p_.Dh, p_.M, p_.Lq, p_.N});
    if (c.grad_output) {
      has_grad_ = true;
      gout_ = to_float(*c.grad_output);
      g_value_ = TensorF(value_.shape), g_loc_ = TensorF(loc_.shape), g_aw_ = TensorF(aw_.shape);
      gout_b_ = view_as(gout_, {p_.Dh, p_.M, p_.Lq, p_.N});
      gv_b_ = view(g_value_);
      gl_b_ = view(g_loc_);
      ga_b_ = view(g_aw_);
    }
  }

  ~MsdaCall() {
    for (Buf* b : {&value_b_, &loc_b_, &aw_b_, &out_b_, &gout_b_, &gv_b_, &gl_b_, &ga_b_}) release(*b);
    if (levels_b_.raw_buffer()->device) levels_b_.device_free();
  }

  const std::vector<std::string>& taken_paths() const { return paths_.list(); }

  void forward() {
    if (!work_) return paths_.take(kNoKernelCall);
    paths_.take(kForward);
    if (device_ == HalideDevice::Cpu && p_.Dh >= oplab_widths::kWidestFloatVector) paths_.take(kFullVectors);
    check(OPLAB_KERNEL(ms_deform_attn_fwd, device_)(&ctx_, value_b_, levels_b_, loc_b_, aw_b_, out_b_), ctx_,
          "ms_deform_attn forward");
  }

  void backward() {
    if (!work_ || !has_grad_) return;
    paths_.take(kBackward);
    check(OPLAB_KERNEL(ms_deform_attn_grad_value, device_)(&ctx_, value_b_, levels_b_, loc_b_, aw_b_, gout_b_, gv_b_),
          ctx_, "ms_deform_attn grad_value");
    check(OPLAB_KERNEL(ms_deform_attn_grad_points, device_)(&ctx_, value_b_, levels_b_, loc_b_, aw_b_, gout_b_, gl_b_,
                                                            ga_b_),
          ctx_, "ms_deform_attn grad_sampling_locations/grad_attention_weights");
  }

  Result result() {
    if (work_) {
      finish(device_, out_b_);
      if (has_grad_)
        for (Buf* b : {&gv_b_, &gl_b_, &ga_b_}) finish(device_, *b);
    }
    Result r;
    r.outputs["output"] = to_double(out_);
    if (has_grad_) {
      r.grads["value"] = to_double(g_value_);
      r.grads["sampling_locations"] = to_double(g_loc_);
      r.grads["attention_weights"] = to_double(g_aw_);
    }
    return r;
  }

  void before_timed_backward() {}
  void sync(bool backward) {
    if (!on_gpu(device_) || !work_) return;
    std::initializer_list<Buf*> fwd = {&out_b_};
    std::initializer_list<Buf*> bwd = {&gv_b_, &gl_b_, &ga_b_};
    for (Buf* b : backward ? bwd : fwd)
      if (b->raw_buffer()->device && b->device_sync() != 0)
        throw std::runtime_error(std::string(halide_backend_name(device_)) + ": ms_deform_attn did not finish on the device");
  }

 private:
  MsDeformAttnParams p_;
  PathLog paths_;
  HalideDevice device_;
  bool work_ = false, has_grad_ = false;
  CallContext ctx_;
  std::vector<int32_t> table_;
  TensorF value_, loc_, aw_, out_, gout_, g_value_, g_loc_, g_aw_;
  Buf value_b_, loc_b_, aw_b_, out_b_, gout_b_, gv_b_, gl_b_, ga_b_;
  Halide::Runtime::Buffer<int32_t> levels_b_;
};

std::optional<std::string> supported_always(const Case&) { return std::nullopt; }

const HalideOpRegistrar registrar({"ms_deform_attn", run_call<MsdaCall>, supported_always, prepare_call<MsdaCall>, kMsdaPaths});

}  // namespace

}  // namespace oplab::halide_glue
