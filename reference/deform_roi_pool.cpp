// deform_roi_pool reference, forward and backward (SPEC §5), after mmcv's DeformRoIPool:
// an always-aligned RoIAlign (avg) whose bins are each translated by a learned offset.
#include <cstdint>

#include "reference/ref_backend.h"
#include "reference/reference.h"
#include "reference/roi_bilinear.h"
#include "reference/roi_geometry.h"
#include "reference/roi_outputs.h"

namespace oplab::ref {
namespace {

// Always aligned: half-pixel shift, and no minimum box size (the extent may be 0 or negative,
// unlike legacy roi_align). reference/roi_geometry.h.
RoiBox deform_box(const DeformRoiPoolParams& p, const Tensor& rois, int64_t r) {
  return roi_box(rois, r, p.spatial_scale, kAlignedBox, p.PH, p.PW, p.sampling_ratio);
}

// Start of bin (ph, pw) after translating the whole bin by the offset. Offset channel 0 is x
// (width) and channel 1 is y: the opposite order of deform_conv2d. The offset is relative to
// the box size, scaled by gamma.
void bin_start(const DeformRoiPoolParams& p, const RoiBox& b, const Tensor* offset, int64_t r, int64_t ph,
               int64_t pw, double& y, double& x) {
  double sy = b.sy, sx = b.sx;
  if (offset) {
    sx += p.gamma * b.rw * offset->at(r, 0, ph, pw);
    sy += p.gamma * b.rh * offset->at(r, 1, ph, pw);
  }
  y = roi_bin_start(sy, ph, b.bin_h);
  x = roi_bin_start(sx, pw, b.bin_w);
}

}  // namespace

Tensor deform_roi_pool_forward(const DeformRoiPoolParams& p, const Tensor& input, const Tensor& rois,
                               const Tensor* offset) {
  Tensor out(p.output_shape());
  const int64_t H = p.H, W = p.W;
  auto box = [&](int64_t r) { return deform_box(p, rois, r); };
  for_each_roi_output(p, box, [&](int64_t r, int64_t c, int64_t ph, int64_t pw, const RoiBox& b, int64_t plane_off) {
    const double* plane = input.data.data() + plane_off;
    double y0, x0;
    bin_start(p, b, offset, r, ph, pw, y0, x0);
    // Mean over the grid; a NaN/Inf offset makes its samples non-finite, which the
    // bilinear rule counts as out of range (0), mmcv leaves it undefined.
    double sum = 0.0;
    for (int64_t iy = 0; iy < b.gh; ++iy) {
      const double y = roi_sample(y0, b.bin_h, iy, b.gh);
      for (int64_t ix = 0; ix < b.gw; ++ix) {
        const double x = roi_sample(x0, b.bin_w, ix, b.gw);
        sum += roi_bilinear_value(plane, W, roi_bilinear(y, x, H, W));
      }
    }
    out.at(r, c, ph, pw) = sum / double(b.count());
  });
  return out;
}

DeformRoiPoolGrads deform_roi_pool_backward(const DeformRoiPoolParams& p, const Tensor& input,
                                            const Tensor& rois, const Tensor* offset,
                                            const Tensor& grad_output) {
  DeformRoiPoolGrads g;
  g.input = Tensor(Shape{p.N, p.C, p.H, p.W});
  if (offset) g.offset = Tensor(offset->shape);
  const int64_t H = p.H, W = p.W;
  auto box = [&](int64_t r) { return deform_box(p, rois, r); };
  for_each_roi_output(p, box, [&](int64_t r, int64_t c, int64_t ph, int64_t pw, const RoiBox& b, int64_t plane_off) {
    const double* plane = input.data.data() + plane_off;
    double* gplane = g.input.data.data() + plane_off;
    const double gout = grad_output.at(r, c, ph, pw);
    double y0, x0;
    bin_start(p, b, offset, r, ph, pw, y0, x0);
    double dsum_y = 0.0, dsum_x = 0.0;  // sum over samples of dv/dy, dv/dx
    for (int64_t iy = 0; iy < b.gh; ++iy) {
      const double y = roi_sample(y0, b.bin_h, iy, b.gh);
      for (int64_t ix = 0; ix < b.gw; ++ix) {
        const double x = roi_sample(x0, b.bin_w, ix, b.gw);
        const RoiBilinear bl = roi_bilinear(y, x, H, W);
        // grad_input: as roi_align avg.
        roi_bilinear_scatter(gplane, W, bl, gout, double(b.count()));
        if (offset) {
          double dy, dx;
          roi_bilinear_derivative(plane, W, bl, dy, dx);
          dsum_y += dy;
          dsum_x += dx;
        }
      }
    }
    // grad_offset is the true derivative of the forward value: every sample of the bin
    // moves by gamma*rw per unit of offset channel 0 (x) and gamma*rh per unit of
    // channel 1 (y). Flat regions of the bilinear rule ([-1,0) and [size-1,size]) and
    // out-of-range samples give 0; kinks take the right-sided derivative
    // (roi_bilinear_derivative). mmcv's CUDA formula differs near the border (SPEC §5).
    if (offset) {
      g.offset.at(r, 0, ph, pw) += gout * p.gamma * b.rw * dsum_x / double(b.count());
      g.offset.at(r, 1, ph, pw) += gout * p.gamma * b.rh * dsum_y / double(b.count());
    }
  });
  return g;
}

// ---- the `ref` backend's entry for this op ----
namespace {

Result run(const Case& c, const ValidParams& vp) {
  const auto& p = vp.as<DeformRoiPoolParams>();
  const Tensor* offset = c.opt("offset");
  Result r;
  r.outputs["output"] = deform_roi_pool_forward(p, c.in("input"), c.in("rois"), offset);
  if (c.grad_output) {
    auto g = deform_roi_pool_backward(p, c.in("input"), c.in("rois"), offset, *c.grad_output);
    r.grads["input"] = std::move(g.input);
    if (offset) r.grads["offset"] = std::move(g.offset);
  }
  return r;
}

const RefOpRegistrar kRegistrar{"deform_roi_pool", {run}};

}  // namespace

}  // namespace oplab::ref
