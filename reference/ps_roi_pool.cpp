// ps_roi_pool reference, forward and backward (SPEC §11): position-sensitive average pooling of
// R-FCN, after torchvision.ops.ps_roi_pool. Output (k, c, ph, pw) is the mean of the integer
// pixel bin (ph, pw) of input channel (c*PH + ph)*PW + pw.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "reference/pool_geometry.h"
#include "reference/ref_backend.h"
#include "reference/reference.h"

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
  for (int64_t r = 0; r < p.K; ++r) {
    const int64_t n = int64_t(rois.at(r, 0));  // validated: an integer in [0, N)
    for (int64_t c = 0; c < p.Co; ++c)
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw) {
          const PoolBin bin = ps_bin(p, rois, r, ph, pw);
          if (bin.empty()) continue;  // an empty bin outputs 0
          const double* plane = input.data.data() + (n * p.C + p.input_channel(c, ph, pw)) * p.H * p.W;
          double sum = 0.0;
          for (int64_t h = bin.hs; h < bin.he; ++h)
            for (int64_t w = bin.ws; w < bin.we; ++w) sum += plane[h * p.W + w];
          out.at(r, c, ph, pw) = sum / bin.area();
        }
  }
  return out;
}

Tensor ps_roi_pool_backward(const PsRoiParams& p, const Tensor& input, const Tensor& rois,
                            const Tensor& grad_output) {
  Tensor grad(Shape{p.N, p.C, p.H, p.W});
  for (int64_t r = 0; r < p.K; ++r) {
    const int64_t n = int64_t(rois.at(r, 0));
    for (int64_t c = 0; c < p.Co; ++c)
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw) {
          // The transpose of the forward: gout / area to every pixel of the same bin.
          const PoolBin bin = ps_bin(p, rois, r, ph, pw);
          if (bin.empty()) continue;
          double* gplane = grad.data.data() + (n * p.C + p.input_channel(c, ph, pw)) * p.H * p.W;
          const double g = grad_output.at(r, c, ph, pw) / bin.area();
          for (int64_t h = bin.hs; h < bin.he; ++h)
            for (int64_t w = bin.ws; w < bin.we; ++w) gplane[h * p.W + w] += g;
        }
  }
  return grad;
}

// ---- the `ref` backend's entry for this op ----
namespace {

Result run(const Case& c, const ValidParams& vp) {
  const auto& p = vp.as<PsRoiParams>();
  Result r;
  r.outputs["output"] = ps_roi_pool_forward(p, c.in("input"), c.in("rois"));
  if (c.grad_output) r.grads["input"] = ps_roi_pool_backward(p, c.in("input"), c.in("rois"), *c.grad_output);
  return r;
}

const RefOpRegistrar kRegistrar{"ps_roi_pool", {run}};

}  // namespace

}  // namespace oplab::ref
