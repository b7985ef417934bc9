// ps_roi_align reference, forward and backward (SPEC §11): position-sensitive RoIAlign of
// R-FCN, after torchvision.ops.ps_roi_align. Output (k, c, ph, pw) is the average RoIAlign
// sample of bin (ph, pw) read from the one input channel (c*PH + ph)*PW + pw.
#include <cstdint>

#include "reference/ref_backend.h"
#include "reference/reference.h"
#include "reference/roi_bilinear.h"
#include "reference/roi_geometry.h"

namespace oplab::ref {
namespace {

// Always aligned (half-pixel shift), no minimum size: a box may be empty or reversed, and then
// its adaptive grid has no samples.
RoiBox ps_align_box(const PsRoiParams& p, const Tensor& rois, int64_t r) {
  return roi_box(rois, r, p.spatial_scale, kAlignedBox, p.PH, p.PW, p.sampling_ratio);
}

// Calls f(bilinear sample) for every sample of bin (ph, pw) of box b on an H x W plane, in
// torchvision's order (rows of samples, then columns).
template <class F>
void for_each_sample(const RoiBox& b, int64_t ph, int64_t pw, int64_t H, int64_t W, F f) {
  const double y0 = roi_bin_start(b.sy, ph, b.bin_h), x0 = roi_bin_start(b.sx, pw, b.bin_w);
  for (int64_t iy = 0; iy < b.gh; ++iy) {
    const double y = roi_sample(y0, b.bin_h, iy, b.gh);
    for (int64_t ix = 0; ix < b.gw; ++ix) f(roi_bilinear(y, roi_sample(x0, b.bin_w, ix, b.gw), H, W));
  }
}

}  // namespace

Tensor ps_roi_align_forward(const PsRoiParams& p, const Tensor& input, const Tensor& rois) {
  Tensor out(p.output_shape());
  const int64_t H = p.H, W = p.W;
  for (int64_t r = 0; r < p.K; ++r) {
    const RoiBox b = ps_align_box(p, rois, r);
    for (int64_t c = 0; c < p.Co; ++c)
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw) {
          const double* plane = input.data.data() + (b.n * p.C + p.input_channel(c, ph, pw)) * H * W;
          double sum = 0.0;
          for_each_sample(b, ph, pw, H, W, [&](const RoiBilinear& s) { sum += roi_bilinear_value(plane, W, s); });
          // The mean over the grid; a grid without samples gives 0 (count is at least 1).
          out.at(r, c, ph, pw) = sum / double(b.count());
        }
  }
  return out;
}

Tensor ps_roi_align_backward(const PsRoiParams& p, const Tensor& input, const Tensor& rois,
                             const Tensor& grad_output) {
  Tensor grad(Shape{p.N, p.C, p.H, p.W});
  const int64_t H = p.H, W = p.W;
  for (int64_t r = 0; r < p.K; ++r) {
    const RoiBox b = ps_align_box(p, rois, r);
    for (int64_t c = 0; c < p.Co; ++c)
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw) {
          double* gplane = grad.data.data() + (b.n * p.C + p.input_channel(c, ph, pw)) * H * W;
          const double g = grad_output.at(r, c, ph, pw);
          // The transpose of the forward: every sample hands g * weight / count to its corners.
          for_each_sample(b, ph, pw, H, W,
                          [&](const RoiBilinear& s) { roi_bilinear_scatter(gplane, W, s, g, double(b.count())); });
        }
  }
  return grad;
}

// ---- the `ref` backend's entry for this op ----
namespace {

Result run(const Case& c, const ValidParams& vp) {
  const auto& p = vp.as<PsRoiParams>();
  Result r;
  r.outputs["output"] = ps_roi_align_forward(p, c.in("input"), c.in("rois"));
  if (c.grad_output) r.grads["input"] = ps_roi_align_backward(p, c.in("input"), c.in("rois"), *c.grad_output);
  return r;
}

const RefOpRegistrar kRegistrar{"ps_roi_align", {run}};

}  // namespace

}  // namespace oplab::ref
