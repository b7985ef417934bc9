// Study variant `drp-mmcv-grad`: deform_roi_pool whose offset gradient is computed with the
// formula of mmcv's CUDA backward (SPEC §5); forward and grad_input are the reference's.
//
// mmcv derives the slope of a sample from its four corner values and the *raw* sample
// coordinate, while the corners themselves come from the clamped coordinate of the RoIAlign
// rule. Written as the reference names the corners (v00 = (y0, x0), v01 = (y0, x1), ...):
//   d/dx ~ (y - y0) (v11 - v10) + (y1 - y) (v01 - v00)
//   d/dy ~ (x - x0) (v11 - v01) + (x1 - x) (v10 - v00)
// Inside the image this is the true derivative. At y >= H-1 the corners collapse (y0 = y1),
// (y - y0) + (y1 - y) = 0 and d/dx vanishes although the forward still varies with x along
// the last row; likewise d/dy for x >= W-1. On y in [-1, 0) the corners are rows 0 and 1 and
// d/dy is the interior slope although the forward is flat there (edge replicated), and d/dx
// extrapolates with weights y and 1 - y outside [0, 1]. The gradient checker must flag this.
#include <cmath>
#include <memory>

#include "core/backend.h"
#include "core/params.h"
#include "reference/ref_backend.h"
#include "reference/roi_bilinear.h"
#include "reference/roi_geometry.h"

namespace oplab {
namespace {

// d(output)/d(offset) with mmcv's formula, for the case's grad_output.
Tensor mmcv_grad_offset(const Case& c, const DeformRoiPoolParams& p) {
  const Tensor& input = c.in("input");
  const Tensor& rois = c.in("rois");
  const Tensor& offset = c.in("offset");
  const Tensor& gout = *c.grad_output;
  Tensor grad(offset.shape);
  const int64_t H = p.H, W = p.W;
  for (int64_t r = 0; r < p.K; ++r) {
    // The box as mmcv (and the reference) computes it: always aligned, no minimum size.
    const ref::RoiBox box = ref::roi_box(rois, r, p.spatial_scale, ref::kAlignedBox, p.PH, p.PW, p.sampling_ratio);
    const int64_t n = box.n, gh = box.gh, gw = box.gw;
    const double rw = box.rw, rh = box.rh, bin_h = box.bin_h, bin_w = box.bin_w;
    const double count = double(box.count());
    for (int64_t ch = 0; ch < p.C; ++ch) {
      const double* plane = input.data.data() + (n * p.C + ch) * H * W;
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw) {
          const double y_start = ref::roi_bin_start(box.sy + p.gamma * rh * offset.at(r, 1, ph, pw), ph, bin_h);
          const double x_start = ref::roi_bin_start(box.sx + p.gamma * rw * offset.at(r, 0, ph, pw), pw, bin_w);
          const double g = gout.at(r, ch, ph, pw) / count;
          for (int64_t iy = 0; iy < gh; ++iy) {
            const double y = ref::roi_sample(y_start, bin_h, iy, gh);
            for (int64_t ix = 0; ix < gw; ++ix) {
              const double x = ref::roi_sample(x_start, bin_w, ix, gw);
              const ref::RoiBilinear b = ref::roi_bilinear(y, x, H, W);
              if (!b.in_range) continue;  // mmcv adds nothing for out-of-range samples
              const double v00 = plane[b.y0 * W + b.x0], v01 = plane[b.y0 * W + b.x1];
              const double v10 = plane[b.y1 * W + b.x0], v11 = plane[b.y1 * W + b.x1];
              // The raw y and x, not the clamped ones: this is the defect.
              const double dx = (y - double(b.y0)) * (v11 - v10) + (double(b.y1) - y) * (v01 - v00);
              const double dy = (x - double(b.x0)) * (v11 - v01) + (double(b.x1) - x) * (v10 - v00);
              grad.at(r, 0, ph, pw) += p.gamma * rw * g * dx;
              grad.at(r, 1, ph, pw) += p.gamma * rh * g * dy;
            }
          }
        }
    }
  }
  return grad;
}

class DrpMmcvGrad : public Backend {
 public:
  std::string name() const override { return "drp-mmcv-grad"; }
  BackendRole role() const override { return BackendRole::StudyVariant; }
  std::string description() const override {
    return "deform_roi_pool with mmcv CUDA's grad_offset formula (wrong near the border, SPEC §5); rest = ref";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "deform_roi_pool") return std::string("a study of mmcv's DeformRoIPool offset gradient only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    Result r = ref_->run(c, vp);
    if (c.grad_output && c.has("offset")) r.grads["offset"] = mmcv_grad_offset(c, vp.as<DeformRoiPoolParams>());
    return r;
  }

 private:
  std::unique_ptr<Backend> ref_ = make_ref_backend();
};

std::unique_ptr<Backend> make() { return std::make_unique<DrpMmcvGrad>(); }

}  // namespace

static const BackendRegistrar r(210, make);

}  // namespace oplab
