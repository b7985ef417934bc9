#include "variants/bug_roialign_rules.h"

#include "core/params.h"
#include "reference/ref_backend.h"
#include "reference/roi_bilinear.h"
#include "reference/roi_geometry.h"

namespace oplab::variants {

namespace {

// The box of one roi and its grid, as the reference computes it (SPEC §4,
// reference/roi_geometry.h), with `clamp` deciding whether the size is raised to 1.
struct Box {
  ref::RoiBox box;
  double count = 1;
};

Box box_of(const RoiAlignParams& p, const Tensor& rois, int64_t r, bool clamp, const RoiAlignRules& rules) {
  Box b;
  b.box = ref::roi_box(rois, r, p.spatial_scale, ref::RoiBoxRule{p.aligned, clamp}, p.PH, p.PW, p.sampling_ratio);
  b.count = rules.count_without_max ? double(b.box.gh * b.box.gw) : double(b.box.count());
  return b;
}

ref::RoiBilinear sample(const Box& bx, int64_t ph, int64_t pw, int64_t iy, int64_t ix, const RoiAlignParams& p,
                        const RoiAlignRules& rules) {
  const ref::RoiBox& b = bx.box;
  const double y = ref::roi_sample(ref::roi_bin_start(b.sy, ph, b.bin_h), b.bin_h, iy, b.gh);
  const double x = ref::roi_sample(ref::roi_bin_start(b.sx, pw, b.bin_w), b.bin_w, ix, b.gw);
  ref::RoiBilinear bl = ref::roi_bilinear(y, x, p.H, p.W);
  if (rules.y_below_zero_is_outside && y < 0) bl.in_range = false;
  return bl;
}

Tensor forward(const RoiAlignParams& p, const Tensor& input, const Tensor& rois, const RoiAlignRules& rules) {
  Tensor out(p.output_shape());
  for (int64_t r = 0; r < p.K; ++r) {
    const Box b = box_of(p, rois, r, !p.aligned, rules);
    for (int64_t c = 0; c < p.C; ++c) {
      const double* plane = input.data.data() + (b.box.n * p.C + c) * p.H * p.W;
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw) {
          double sum = 0.0;
          for (int64_t iy = 0; iy < b.box.gh; ++iy)
            for (int64_t ix = 0; ix < b.box.gw; ++ix)
              sum += ref::roi_bilinear_value(plane, p.W, sample(b, ph, pw, iy, ix, p, rules));
          out.at(r, c, ph, pw) = sum / b.count;
        }
    }
  }
  return out;
}

Tensor backward(const RoiAlignParams& p, const Tensor& rois, const Tensor& grad_output, const RoiAlignRules& rules) {
  Tensor grad(Shape{p.N, p.C, p.H, p.W});
  const bool clamp = rules.clamp_inverted_in_backward ? p.aligned : !p.aligned;
  for (int64_t r = 0; r < p.K; ++r) {
    const Box b = box_of(p, rois, r, clamp, rules);
    for (int64_t c = 0; c < p.C; ++c) {
      double* gplane = grad.data.data() + (b.box.n * p.C + c) * p.H * p.W;
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw)
          for (int64_t iy = 0; iy < b.box.gh; ++iy)
            for (int64_t ix = 0; ix < b.box.gw; ++ix)
              ref::roi_bilinear_scatter(gplane, p.W, sample(b, ph, pw, iy, ix, p, rules), grad_output.at(r, c, ph, pw),
                                        b.count);
    }
  }
  return grad;
}

}  // namespace

Result roi_align_with_rules(const Case& c, const RoiAlignParams& p, const RoiAlignRules& rules) {
  if (p.mode != PoolMode::Avg) return make_ref_backend()->run(c, ValidParams{p, p.output_shape()});
  Result r;
  r.outputs["output"] = forward(p, c.in("input"), c.in("rois"), rules);
  if (c.grad_output) r.grads["input"] = backward(p, c.in("rois"), *c.grad_output, rules);
  return r;
}

}  // namespace oplab::variants
