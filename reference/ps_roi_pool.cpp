// ps_roi_pool reference, forward and backward (SPEC §11): position-sensitive average pooling of
// R-FCN, after torchvision.ops.ps_roi_pool. Output (k, c, ph, pw) is the mean of the integer
// pixel bin (ph, pw) of input channel (c*PH + ph)*PW + pw.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "reference/pool_geometry.h"
#include "reference/reference.h"
#include "reference/roi_outputs.h"
#include "reference/roi_ref_entry.h"

namespace oplab::ref {
namespace {

// Bin (ph, pw) of roi r: the rounded box without roi_pool's +1, both ends clamped into
// [0, size - 1] as torchvision's forward kernels do (R-FCN's original kernel clamps into
// [0, size]; reference/pool_geometry.h).
PoolBin ps_bin(const PsRoiParams& p, const Tensor& rois, int64_t r, int64_t ph, int64_t pw) {
  return pool_bin(rois, r, p.spatial_scale, kPsRoiPoolBox, p.PH, p.PW, ph, pw, p.H, p.W);
}

}  // namespace

Tensor ps_roi_pool_forward(const PsRoiParams& p, const Tensor& input, const Tensor& rois) {
  Tensor out(p.output_shape());
  for_each_ps_output(p, rois, [&](int64_t r, int64_t c, int64_t ph, int64_t pw, int64_t plane_off) {
    const PoolBin bin = ps_bin(p, rois, r, ph, pw);
    if (bin.empty()) return;  // an empty bin outputs 0
    const double* plane = input.data.data() + plane_off;
    double sum = 0.0;
    for (int64_t h = bin.hs; h < bin.he; ++h)
      for (int64_t w = bin.ws; w < bin.we; ++w) sum += plane[h * p.W + w];
    out.at(r, c, ph, pw) = sum / bin.area();
  });
  return out;
}

Tensor ps_roi_pool_backward(const PsRoiParams& p, const Tensor& input, const Tensor& rois,
                            const Tensor& grad_output) {
  Tensor grad(Shape{p.N, p.C, p.H, p.W});
  for_each_ps_output(p, rois, [&](int64_t r, int64_t c, int64_t ph, int64_t pw, int64_t plane_off) {
    // The transpose of the forward: gout / area to every pixel of the same bin.
    const PoolBin bin = ps_bin(p, rois, r, ph, pw);
    if (bin.empty()) return;
    double* gplane = grad.data.data() + plane_off;
    const double g = grad_output.at(r, c, ph, pw) / bin.area();
    for (int64_t h = bin.hs; h < bin.he; ++h)
      for (int64_t w = bin.ws; w < bin.we; ++w) gplane[h * p.W + w] += g;
  });
  return grad;
}

// ---- the `ref` backend's entry for this op ----
namespace {

const RefOpRegistrar kRegistrar{"ps_roi_pool",
                                {run_input_rois_op<PsRoiParams, ps_roi_pool_forward, ps_roi_pool_backward>}};

}  // namespace

}  // namespace oplab::ref
