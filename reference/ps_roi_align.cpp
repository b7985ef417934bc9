// ps_roi_align reference, forward and backward (SPEC §11): position-sensitive RoIAlign of
// R-FCN, after torchvision.ops.ps_roi_align. Output (k, c, ph, pw) is the average RoIAlign
// sample of bin (ph, pw) read from the one input channel (c*PH + ph)*PW + pw.
#include <cstdint>

#include "reference/reference.h"
#include "reference/roi_bilinear.h"
#include "reference/roi_geometry.h"
#include "reference/roi_outputs.h"
#include "reference/roi_ref_entry.h"

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
  for_each_ps_output(p, rois, [&](int64_t r, int64_t c, int64_t ph, int64_t pw, int64_t plane_off) {
    const RoiBox b = ps_align_box(p, rois, r);
    const double* plane = input.data.data() + plane_off;
    double sum = 0.0;
    for_each_sample(b, ph, pw, p.H, p.W, [&](const RoiBilinear& s) { sum += roi_bilinear_value(plane, p.W, s); });
    // The mean over the grid; a grid without samples gives 0 (count is at least 1).
    out.at(r, c, ph, pw) = sum / double(b.count());
  });
  return out;
}

Tensor ps_roi_align_backward(const PsRoiParams& p, const Tensor& input, const Tensor& rois,
                             const Tensor& grad_output) {
  Tensor grad(Shape{p.N, p.C, p.H, p.W});
  for_each_ps_output(p, rois, [&](int64_t r, int64_t c, int64_t ph, int64_t pw, int64_t plane_off) {
    const RoiBox b = ps_align_box(p, rois, r);
    double* gplane = grad.data.data() + plane_off;
    const double g = grad_output.at(r, c, ph, pw);
    // The transpose of the forward: every sample hands g * weight / count to its corners.
    for_each_sample(b, ph, pw, p.H, p.W,
                    [&](const RoiBilinear& s) { roi_bilinear_scatter(gplane, p.W, s, g, double(b.count())); });
  });
  return grad;
}

// ---- the `ref` backend's entry for this op ----
namespace {

const RefOpRegistrar kRegistrar{"ps_roi_align",
                                {run_input_rois_op<PsRoiParams, ps_roi_align_forward, ps_roi_align_backward>}};

}  // namespace

}  // namespace oplab::ref
