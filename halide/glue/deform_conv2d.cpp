// deform_conv2d on the Halide kernels: float32 copies of the tensors, viewed with the channel
// axes split by group (the layouts at the top of the generator), ones for an absent mask and
// zeros for an absent bias, and the calls: the forward always, the backward pipelines when the
// case has grad_output. On the CPU the backward runs image by image: the column gradient Gcol
// of an image into a scratch buffer, then grad_input and grad_offset/grad_mask reading it.
#include <algorithm>
#include <memory>

#include "core/params.h"
#include "deform_conv2d_fwd_cpu.h"
#include "deform_conv2d_fwd_cuda.h"
#include "deform_conv2d_fwd_opencl.h"
#include "deform_conv2d_gcol_cpu.h"
#include "deform_conv2d_grad_input_cpu.h"
#include "deform_conv2d_grad_input_cuda.h"
#include "deform_conv2d_grad_input_opencl.h"
#include "deform_conv2d_grad_offset_mask_cpu.h"
#include "deform_conv2d_grad_offset_mask_cuda.h"
#include "deform_conv2d_grad_offset_mask_opencl.h"
#include "deform_conv2d_grad_weight_cpu.h"
#include "deform_conv2d_grad_weight_cuda.h"
#include "deform_conv2d_grad_weight_opencl.h"
#include "halide/halide_glue.h"
#include "halide/ops_glue.h"

namespace oplab::halide_glue {

namespace {

using Buf = Halide::Runtime::Buffer<float>;

// The row-major tensor t as a Halide buffer of the given extents, innermost first: a reshape,
// so their product is t.numel(). (The validation refuses element counts beyond int32.)
Buf view_as(TensorF& t, std::initializer_list<int64_t> extents) {
  std::vector<int> e;
  for (int64_t x : extents) e.push_back(to_int32(x, "a buffer extent"));
  return host_buffer(t.data.data(), e);
}

// Image n of a buffer whose outermost dimension is the batch, as a view with that dimension
// at 0 (the per-image Gcol scratch has one image, at 0).
Buf image(const Buf& b, int n) {
  const int last = b.dimensions() - 1;
  Buf v = b.cropped(last, n, 1);
  v.translate(last, -n);
  return v;
}

// grad_weight sums the (n, oy) rows in `chunks` equal parts, one partial result each: a
// divisor of the row count, enough parts to keep every thread busy, and a bounded memory
// cost (one weight-sized partial per part).
int weight_chunks(int64_t rows, int64_t weight_numel, bool gpu) {
  int64_t limit = gpu ? 64 : 16;
  limit = std::max<int64_t>(1, std::min<int64_t>(limit, (int64_t(1) << 24) / std::max<int64_t>(weight_numel, 1)));
  for (int64_t t = std::min(limit, rows); t > 1; --t)
    if (rows % t == 0) return int(t);
  return 1;
}

// One evaluation: the float32 tensors and their views, built once (the benchmark then times
// the kernel calls alone).
// The kernel paths (HalideOp::paths): the CPU kernels are specialised for one offset group
// (D == 1: the forward's GEMM, grad_input, grad_weight) and for one weight group (G == 1:
// the backward's Gcol); the GPU ones are not.
constexpr const char* kNothing = "nothing to sample: the bias, without a kernel call";
constexpr const char* kForwardGpu = "forward";
constexpr const char* kForwardOneOffsetGroup = "forward: one offset group";
constexpr const char* kForwardOffsetGroups = "forward: several offset groups";
constexpr const char* kBackwardGpu = "backward";
constexpr const char* kBackwardOneGroup = "backward: one weight group";
constexpr const char* kBackwardGroups = "backward: several weight groups";
constexpr const char* kBackwardOneOffsetGroup = "backward: one offset group";
constexpr const char* kBackwardOffsetGroups = "backward: several offset groups";

const std::vector<KernelPath> kDcnPaths = {
    {kNothing},
    {kForwardGpu, PathOn::Gpu},
    {kForwardOneOffsetGroup, PathOn::Cpu},
    {kForwardOffsetGroups, PathOn::Cpu},
    {kBackwardGpu, PathOn::Gpu},
    {kBackwardOneGroup, PathOn::Cpu},
    {kBackwardGroups, PathOn::Cpu},
    {kBackwardOneOffsetGroup, PathOn::Cpu},
    {kBackwardOffsetGroups, PathOn::Cpu},
};

class DcnCall {
 public:
  DcnCall(const Case& cs, const ValidParams& vp, HalideDevice device) : p_(vp.as<DeformConvParams>()) {
    const int64_t K = p_.kh * p_.kw;
    Cg_ = p_.G > 0 ? p_.C / p_.G : 0;
    Cog_ = p_.G > 0 ? p_.Co / p_.G : 0;
    device_ = device;
    input_ = to_float(cs.in("input"));
    offset_ = to_float(cs.in("offset"));
    weight_ = to_float(cs.in("weight"));
    mask_ = p_.has_mask ? to_float(*cs.opt("mask")) : TensorF({p_.N, p_.D * K, p_.Ho, p_.Wo}, 1.0f);
    bias_ = p_.has_bias ? to_float(*cs.opt("bias")) : TensorF({p_.Co}, 0.0f);
    out_ = TensorF(p_.output_shape());
    // The kernels need a pixel to read and an output to write. Without them no sample reads
    // anything: the output is the bias, and every gradient but the bias's is 0.
    work_ = p_.N > 0 && p_.C > 0 && p_.Co > 0 && p_.H > 0 && p_.W > 0;

    in_b_ = view(input_);  // first: view() also installs the error handler
    off_b_ = offset_view(offset_);
    mask_b_ = mask_view(mask_);
    w_b_ = weight_view(weight_);
    bias_b_ = view_as(bias_, {Cog_, p_.G});
    out_b_ = out_view(out_);

    if (cs.grad_output) {
      has_grad_ = true;
      gout_ = to_float(*cs.grad_output);
      g_in_ = TensorF(input_.shape), g_off_ = TensorF(offset_.shape), g_mask_ = TensorF(mask_.shape);
      g_w_ = TensorF(weight_.shape), g_b_ = TensorF(bias_.shape);
      gout_b_ = out_view(gout_);
      gi_b_ = view(g_in_);
      goff_b_ = offset_view(g_off_);
      gm_b_ = mask_view(g_mask_);
      gw_b_ = weight_view(g_w_);
      gb_b_ = view_as(g_b_, {Cog_, p_.G});
      chunks_ = weight_chunks(p_.N * p_.Ho, weight_.numel(), on_gpu(device));
      make_gcol_scratch();
    }
  }

  ~DcnCall() {
    for (Buf* b : {&in_b_, &off_b_, &mask_b_, &w_b_, &bias_b_, &out_b_, &gout_b_, &gi_b_, &goff_b_, &gm_b_, &gw_b_, &gb_b_,
                   &gcol_w_, &gcol_r_})
      release(*b);
  }

  const std::vector<std::string>& taken_paths() const { return paths_.list(); }

  void forward() {
    if (!work_) paths_.take(kNothing);
    else if (on_gpu(device_)) paths_.take(kForwardGpu);
    else paths_.take(p_.D == 1 ? kForwardOneOffsetGroup : kForwardOffsetGroups);
    if (!work_) {
      const int64_t plane = p_.Ho * p_.Wo;
      for (int64_t n = 0; n < p_.N; ++n)
        for (int64_t o = 0; o < p_.Co; ++o)
          std::fill_n(out_.data.begin() + (n * p_.Co + o) * plane, plane, bias_.data[size_t(o)]);
      return;
    }
    auto fwd = OPLAB_KERNEL(deform_conv2d_fwd, device_);
    check(fwd(&ctx_, in_b_, off_b_, mask_b_, w_b_, sy(), sx(), py(), px(), dy(), dx(), bias_b_, out_b_), ctx_,
          "deform_conv2d forward");
  }

  void backward() {
    if (!has_grad_) return;
    if (!work_) {
      std::fill(g_b_.data.begin(), g_b_.data.end(), 0.0f);
      const int64_t plane = p_.Ho * p_.Wo;
      for (int64_t o = 0; o < p_.Co; ++o) {
        double s = 0;
        for (int64_t n = 0; n < p_.N; ++n)
          for (int64_t q = 0; q < plane; ++q) s += gout_.data[size_t((n * p_.Co + o) * plane + q)];
        g_b_.data[size_t(o)] = float(s);
      }
      return;
    }
    if (on_gpu(device_)) {
      paths_.take(kBackwardGpu);
    } else {
      paths_.take(p_.G == 1 ? kBackwardOneGroup : kBackwardGroups);
      paths_.take(p_.D == 1 ? kBackwardOneOffsetGroup : kBackwardOffsetGroups);
    }
    auto gi = OPLAB_KERNEL(deform_conv2d_grad_input, device_);
    auto gom = OPLAB_KERNEL(deform_conv2d_grad_offset_mask, device_);
    if (on_gpu(device_)) {
      // The GPU pipelines compute Gcol themselves; gcol_r_ is a placeholder.
      check(gi(&ctx_, in_b_, off_b_, mask_b_, w_b_, sy(), sx(), py(), px(), dy(), dx(), gout_b_, gcol_r_, gi_b_), ctx_,
            "deform_conv2d grad_input");
      check(gom(&ctx_, in_b_, off_b_, mask_b_, w_b_, sy(), sx(), py(), px(), dy(), dx(), gout_b_, gcol_r_, goff_b_, gm_b_),
            ctx_, "deform_conv2d grad_offset/grad_mask");
    } else {
      for (int n = 0; n < int(p_.N); ++n) {
        Buf in = image(in_b_, n), off = image(off_b_, n), mask = image(mask_b_, n), gout = image(gout_b_, n);
        Buf g_in = image(gi_b_, n), g_off = image(goff_b_, n), g_mask = image(gm_b_, n);
        check(deform_conv2d_gcol_cpu(&ctx_, w_b_, gout, gcol_w_), ctx_, "deform_conv2d Gcol");
        check(gi(&ctx_, in, off, mask, w_b_, sy(), sx(), py(), px(), dy(), dx(), gout, gcol_r_, g_in), ctx_,
              "deform_conv2d grad_input");
        check(gom(&ctx_, in, off, mask, w_b_, sy(), sx(), py(), px(), dy(), dx(), gout, gcol_r_, g_off, g_mask), ctx_,
              "deform_conv2d grad_offset/grad_mask");
      }
    }

    auto gw = OPLAB_KERNEL(deform_conv2d_grad_weight, device_);
    check(gw(&ctx_, in_b_, off_b_, mask_b_, w_b_, sy(), sx(), py(), px(), dy(), dx(), gout_b_, chunks_, gw_b_, gb_b_),
          ctx_, "deform_conv2d grad_weight/grad_bias");
  }

  // Results stay where the kernels wrote them (on the device for a GPU) until here.
  Result result() {
    if (work_) {
      finish(device_, out_b_);
      if (has_grad_)
        for (Buf* b : {&gi_b_, &goff_b_, &gm_b_, &gw_b_, &gb_b_}) finish(device_, *b);
    }
    Result r;
    r.outputs["output"] = to_double(out_);
    if (has_grad_) {
      r.grads["input"] = to_double(g_in_);
      r.grads["offset"] = to_double(g_off_);
      r.grads["weight"] = to_double(g_w_);
      if (p_.has_mask) r.grads["mask"] = to_double(g_mask_);
      if (p_.has_bias) r.grads["bias"] = to_double(g_b_);
    }
    return r;
  }

  void before_timed_backward() {}
  // Waits for the device (the benchmark's end of a call); a no-op on the CPU.
  void sync(bool backward) {
    if (!on_gpu(device_) || !work_) return;
    std::initializer_list<Buf*> bufs = {&out_b_};
    std::initializer_list<Buf*> grads = {&gi_b_, &goff_b_, &gm_b_, &gw_b_, &gb_b_};
    for (Buf* b : backward ? grads : bufs)
      if (b->raw_buffer()->device && b->device_sync() != 0)
        throw std::runtime_error(std::string(halide_backend_name(device_)) + ": deform_conv2d did not finish on the device");
  }

 private:
  // The CPU backward's Gcol of one image, gcol(c, j, i, ox, oy) (DeformConv2dGcol), held for
  // the call's life, so a timed backward reuses pages already touched. The Gcol kernel writes
  // whole tiles: channels rounded up to 64, ox to 6 (gcol_w_). The readers see the same memory
  // with 64 more channels per row (gcol_r_): grad_offset/grad_mask's vectors of an offset
  // group's channels may run past the last channel; those lanes read the next point's values
  // (or the slack at the end) and are discarded. On a GPU, a one-element placeholder.
  void make_gcol_scratch() {
    if (on_gpu(device_) || !work_) {
      gcol_.assign(1, 0.0f);
      gcol_r_ = host_buffer(gcol_.data(), {1, 1, 1, 1, 1, 1});
      return;
    }
    // In memory ox is inside the taps (c, ox, j, i, oy): grad_input and grad_offset/grad_mask
    // walk a row's points ox innermost, so their reads of Gcol run through memory in order.
    // Stored taps-inner (the dimensions' own order) they jumped C * kh * kw floats per point:
    // the C128 64x64 backward took 3-5% longer (two threads; C64 56x56 the same).
    const int64_t Cw = (p_.C + 63) / 64 * 64, Wp = (p_.Wo + 5) / 6 * 6;
    enum { kC, kJ, kI, kOx, kOy, kN };
    const int64_t ext[] = {Cw, p_.kw, p_.kh, Wp, p_.Ho, 1};
    std::vector<halide_dimension_t> dims(6);
    int64_t stride = 1;
    for (int d : {kC, kOx, kJ, kI, kOy, kN}) {
      dims[size_t(d)] = {0, to_int32(ext[d], "a Gcol extent"), to_int32(stride, "a Gcol stride"), 0};
      stride *= ext[d];
    }
    gcol_.assign(size_t(stride + 64), 0.0f);
    gcol_w_ = Buf(gcol_.data(), int(dims.size()), dims.data());
    dims[0].extent += 64;
    gcol_r_ = Buf(gcol_.data(), int(dims.size()), dims.data());
  }
  Buf offset_view(TensorF& t) const { return view_as(t, {p_.Wo, p_.Ho, 2, p_.kw, p_.kh, p_.D, p_.N}); }
  Buf mask_view(TensorF& t) const { return view_as(t, {p_.Wo, p_.Ho, p_.kw, p_.kh, p_.D, p_.N}); }
  Buf weight_view(TensorF& t) const { return view_as(t, {p_.kw, p_.kh, Cg_, Cog_, p_.G}); }
  Buf out_view(TensorF& t) const { return view_as(t, {p_.Wo, p_.Ho, Cog_, p_.G, p_.N}); }
  int sy() const { return to_int32(p_.sh, "stride"); }
  int sx() const { return to_int32(p_.sw, "stride"); }
  int py() const { return to_int32(p_.ph, "padding"); }
  int px() const { return to_int32(p_.pw, "padding"); }
  int dy() const { return to_int32(p_.dh, "dilation"); }
  int dx() const { return to_int32(p_.dw, "dilation"); }

  DeformConvParams p_;
  PathLog paths_;
  bool work_ = false, has_grad_ = false;
  HalideDevice device_ = HalideDevice::Cpu;
  int64_t Cg_ = 0, Cog_ = 0;
  int chunks_ = 1;
  CallContext ctx_;
  TensorF input_, offset_, weight_, mask_, bias_, out_;
  TensorF gout_, g_in_, g_off_, g_mask_, g_w_, g_b_;
  std::vector<float> gcol_;
  Buf in_b_, off_b_, mask_b_, w_b_, bias_b_, out_b_;
  Buf gout_b_, gi_b_, goff_b_, gm_b_, gw_b_, gb_b_, gcol_w_, gcol_r_;
};

std::optional<std::string> supported_always(const Case&) { return std::nullopt; }

const HalideOpRegistrar registrar({"deform_conv2d", run_call<DcnCall>, supported_always, prepare_call<DcnCall>, kDcnPaths});

}  // namespace

}  // namespace oplab::halide_glue
