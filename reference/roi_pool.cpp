// roi_pool reference, forward and backward (SPEC §3): Fast R-CNN max pooling over
// quantised boxes, following torchvision's roi_pool except where noted.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "reference/pool_geometry.h"
#include "reference/reference.h"
#include "reference/roi_ref_entry.h"

namespace oplab::ref {
namespace {

PoolBin pool_bin(const RoiPoolParams& p, const Tensor& rois, int64_t r, int64_t ph, int64_t pw) {
  return ref::pool_bin(rois, r, p.spatial_scale, kRoiPoolBox, p.PH, p.PW, ph, pw, p.H, p.W);
}

// Max over the bin, scanned row-major. The winner is the first non-NaN element, replaced
// only by a strictly greater later one: NaN never wins, and a bin of all -inf outputs -inf.
// An empty bin outputs 0 and has no argmax. A non-empty bin of only NaN outputs NaN and has
// no argmax. Divergence: torchvision starts from -FLT_MAX, so it outputs -FLT_MAX for an
// all-NaN bin and for an all--inf bin (and then has no argmax either).
struct PoolMax {
  double value = 0.0;
  int64_t argmax = -1;  // flat index h * W + w in the plane; -1: none
};

PoolMax pool_max(const PoolBin& b, const double* plane, int64_t W) {
  PoolMax m;
  if (b.empty()) return m;
  for (int64_t h = b.hs; h < b.he; ++h) {
    for (int64_t w = b.ws; w < b.we; ++w) {
      const double v = plane[h * W + w];
      if (std::isnan(v)) continue;
      if (m.argmax < 0 || v > m.value) {
        m.value = v;
        m.argmax = h * W + w;
      }
    }
  }
  if (m.argmax < 0) m.value = std::numeric_limits<double>::quiet_NaN();
  return m;
}

}  // namespace

Tensor roi_pool_forward(const RoiPoolParams& p, const Tensor& input, const Tensor& rois) {
  Tensor out(p.output_shape());
  for (int64_t r = 0; r < p.K; ++r) {
    for (int64_t ph = 0; ph < p.PH; ++ph) {
      for (int64_t pw = 0; pw < p.PW; ++pw) {
        const PoolBin b = pool_bin(p, rois, r, ph, pw);
        for (int64_t c = 0; c < p.C; ++c) {
          const double* plane = input.data.data() + (b.n * p.C + c) * p.H * p.W;
          out.at(r, c, ph, pw) = pool_max(b, plane, p.W).value;
        }
      }
    }
  }
  return out;
}

Tensor roi_pool_backward(const RoiPoolParams& p, const Tensor& input, const Tensor& rois,
                         const Tensor& grad_output) {
  Tensor grad(Shape{p.N, p.C, p.H, p.W});
  for (int64_t r = 0; r < p.K; ++r) {
    for (int64_t ph = 0; ph < p.PH; ++ph) {
      for (int64_t pw = 0; pw < p.PW; ++pw) {
        const PoolBin b = pool_bin(p, rois, r, ph, pw);
        for (int64_t c = 0; c < p.C; ++c) {
          const int64_t plane_off = (b.n * p.C + c) * p.H * p.W;
          const PoolMax m = pool_max(b, input.data.data() + plane_off, p.W);
          // Only the argmax pixel gets gradient; bins (and rois) may overlap, so accumulate.
          if (m.argmax >= 0) grad.data[size_t(plane_off + m.argmax)] += grad_output.at(r, c, ph, pw);
        }
      }
    }
  }
  return grad;
}

// ---- the `ref` backend's entry for this op ----
namespace {

const RefOpRegistrar kRegistrar{"roi_pool", {run_input_rois_op<RoiPoolParams, roi_pool_forward, roi_pool_backward>}};

}  // namespace

}  // namespace oplab::ref
