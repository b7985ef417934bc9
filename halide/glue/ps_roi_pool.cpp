// ps_roi_pool on the Halide kernels: float32 copies of the tensors, the feature map and its
// gradient in the position-sensitive view (ps_roi_view.h), and the calls (forward; backward
// when the case has grad_output). The benchmark times the same calls on buffers converted once
// (prepare).
#include <algorithm>
#include <cmath>
#include <memory>

#include "core/params.h"
#include "halide/glue/ps_roi_view.h"
#include "halide/halide_glue.h"
#include "halide/ops_glue.h"
#include "ps_roi_pool_bwd_cpu.h"
#include "ps_roi_pool_bwd_cuda.h"
#include "ps_roi_pool_bwd_opencl.h"
#include "ps_roi_pool_fwd_cpu.h"
#include "ps_roi_pool_fwd_cuda.h"
#include "ps_roi_pool_fwd_in_place_cpu.h"
#include "ps_roi_pool_fwd_in_place_cuda.h"
#include "ps_roi_pool_fwd_in_place_opencl.h"
#include "ps_roi_pool_fwd_opencl.h"

namespace oplab::halide_glue {

namespace {

// The CPU forward's two kernels (generators/ps_roi_pool_generator.cpp): the whole feature map
// copied into channel blocks, or each bin read in place.
constexpr const char* kForwardInPlace = "forward: bins read in place (they cover less than the map)";

// The bytes of the feature map the in-place forward reads: for every roi, bin and output
// channel, the cache lines of the bin's rows, from the bins' extents as SPEC §11 forms them
// (to within a pixel: this estimates, it decides nothing about the values).
double in_place_bytes(const TensorF& rois, const PsRoiParams& p) {
  constexpr double kLine = 64, kFloat = sizeof(float);
  double lines = 0;
  for (int64_t k = 0; k < rois.dim(0); ++k) {
    const float* r = &rois.data[size_t(k * 5)];
    auto extent = [&](float a, float b, int64_t pooled) {
      return std::max(std::round(double(b) * p.spatial_scale) - std::round(double(a) * p.spatial_scale), 1.0) /
             double(pooled);
    };
    const double bin_w = extent(r[1], r[3], p.PW), bin_h = extent(r[2], r[4], p.PH);
    lines += (std::ceil(bin_h) + 1) * (std::ceil(bin_w + 1) * kFloat / kLine + 1);
  }
  return lines * double(p.PH * p.PW * p.Co) * kLine;
}

class PsRoiPoolCall : public PsRoiCall {
 public:
  PsRoiPoolCall(const Case& c, const ValidParams& vp, HalideDevice device) : PsRoiCall(c, vp, device, "ps_roi_pool") {
    // In place where the bins read less than the blocks copy (the whole map, once).
    in_place_ = !on_gpu(device) && in_place_bytes(rois_, p_) < double(input_.numel()) * sizeof(float);
  }

  // The forward's bins never read the last column: its tasks copy W - 1 of them. The CPU
  // backward adds into the planes themselves (no channel blocks, nothing transposed).
  Blocking blocking() const {
    Blocking b = PsRoiCall::blocking();
    b.copied_width_less = 1;
    b.wide_scatter = nullptr;
    return b;
  }
  static std::vector<KernelPath> paths() {
    return roi_paths({{kForward}, {kForwardInPlace, PathOn::Cpu}, {kBackward}}, kPsChannelBlocks, nullptr);
  }

  void forward() {
    if (in_place_) {
      if (!note_own(kForwardInPlace)) return;
      check(OPLAB_KERNEL(ps_roi_pool_fwd_in_place, device_)(&ctx_, in_b_, rois_b_, p_.spatial_scale, out_b_), ctx_,
            "ps_roi_pool forward (in place)");
      return;
    }
    if (!note_call(kForward, blocking(), false)) return;
    check(OPLAB_KERNEL(ps_roi_pool_fwd, device_)(&ctx_, in_b_, rois_b_, p_.spatial_scale, out_b_), ctx_,
          "ps_roi_pool forward");
  }

  void backward() {
    if (!has_grad_ || !note_call(kBackward, blocking(), true)) return;
    check(OPLAB_KERNEL(ps_roi_pool_bwd, device_)(&ctx_, in_b_, rois_b_, gout_b_, p_.spatial_scale, gin_b_), ctx_,
          "ps_roi_pool backward");
  }

 private:
  bool in_place_ = false;
};

const HalideOpRegistrar registrar({"ps_roi_pool", run_call<PsRoiPoolCall>, nullptr, prepare_call<PsRoiPoolCall>,
                                   PsRoiPoolCall::paths()});

}  // namespace

}  // namespace oplab::halide_glue
