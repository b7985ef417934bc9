// Seeded bug `bug-roialign-end-cutoff`: a float32 RoIAlign whose bilinear range test is
// open at the far edges, y >= H or x >= W out of range, where RoIAlign's rule (SPEC §4) keeps
// y == H and x == W in range and reads the last row / column there. It is deform_conv2d's test
// (y < H, SPEC §2) carried over to RoIAlign, and it differs only for a sample exactly on the
// edge: coordinates nudged a few float32 ulps outward put the reference's sample out of range
// too, which is why a flip rule that lets nudges explain a failure passed most of this bug's
// failures as boundary flips (compare/flip_rule.h).
//
// Float32 like the Halide kernels: it reads its inputs as float32, forms boxes and samples in
// double with the reference's geometry (reference/roi_geometry.h) and stores float32 results,
// so only the range test is wrong. roi_align avg; max mode is the reference's on the same
// float32 inputs.
#include <memory>

#include "core/backend.h"
#include "core/params.h"
#include "reference/reference.h"
#include "reference/roi_bilinear.h"
#include "reference/roi_geometry.h"

namespace oplab {
namespace {

Tensor as_float32(Tensor t) {
  for (double& v : t.data) v = double(float(v));
  return t;
}

// Sample (iy, ix) of bin (ph, pw), with the bug: exactly on the far edge is out of range.
ref::RoiBilinear sample(const RoiAlignParams& p, const ref::RoiBox& b, int64_t ph, int64_t pw, int64_t iy, int64_t ix) {
  const double y = ref::roi_sample(ref::roi_bin_start(b.sy, ph, b.bin_h), b.bin_h, iy, b.gh);
  const double x = ref::roi_sample(ref::roi_bin_start(b.sx, pw, b.bin_w), b.bin_w, ix, b.gw);
  ref::RoiBilinear bl = ref::roi_bilinear(y, x, p.H, p.W);
  if (y >= double(p.H) || x >= double(p.W)) bl.in_range = false;
  return bl;
}

ref::RoiBox box(const RoiAlignParams& p, const Tensor& rois, int64_t r) {
  return ref::roi_box(rois, r, p.spatial_scale, p.aligned ? ref::kAlignedBox : ref::kLegacyBox, p.PH, p.PW,
                      p.sampling_ratio);
}

Tensor forward(const RoiAlignParams& p, const Tensor& input, const Tensor& rois) {
  Tensor out(p.output_shape());
  for (int64_t r = 0; r < p.K; ++r) {
    const ref::RoiBox b = box(p, rois, r);
    for (int64_t c = 0; c < p.C; ++c) {
      const double* plane = input.data.data() + (b.n * p.C + c) * p.H * p.W;
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw) {
          double sum = 0.0;
          for (int64_t iy = 0; iy < b.gh; ++iy)
            for (int64_t ix = 0; ix < b.gw; ++ix) sum += ref::roi_bilinear_value(plane, p.W, sample(p, b, ph, pw, iy, ix));
          out.at(r, c, ph, pw) = sum / double(b.count());
        }
    }
  }
  return out;
}

Tensor backward(const RoiAlignParams& p, const Tensor& rois, const Tensor& grad_output) {
  Tensor grad(Shape{p.N, p.C, p.H, p.W});
  for (int64_t r = 0; r < p.K; ++r) {
    const ref::RoiBox b = box(p, rois, r);
    for (int64_t c = 0; c < p.C; ++c) {
      double* gplane = grad.data.data() + (b.n * p.C + c) * p.H * p.W;
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw)
          for (int64_t iy = 0; iy < b.gh; ++iy)
            for (int64_t ix = 0; ix < b.gw; ++ix)
              ref::roi_bilinear_scatter(gplane, p.W, sample(p, b, ph, pw, iy, ix), grad_output.at(r, c, ph, pw),
                                        double(b.count()));
    }
  }
  return grad;
}

class BugRoiAlignEndCutoff : public Backend {
 public:
  std::string name() const override { return "bug-roialign-end-cutoff"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  bool is_float32() const override { return true; }
  bool geometry_as_reference() const override { return true; }  // mimics the Halide kernels
  std::string description() const override {
    return "seeded bug: float32 roi_align whose sampler counts a sample exactly at y == H or x == W as out of "
           "range (deform_conv2d's open range test carried over to RoIAlign)";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "roi_align") return std::string("a seeded roi_align bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    const RoiAlignParams& p = vp.as<RoiAlignParams>();
    const Tensor input = as_float32(c.in("input")), rois = as_float32(c.in("rois"));
    const bool avg = p.mode == PoolMode::Avg;
    Result r;
    r.outputs["output"] = as_float32(avg ? forward(p, input, rois) : ref::roi_align_forward(p, input, rois));
    if (c.grad_output) {
      const Tensor gout = as_float32(*c.grad_output);
      r.grads["input"] = as_float32(avg ? backward(p, rois, gout) : ref::roi_align_backward(p, input, rois, gout));
    }
    return r;
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugRoiAlignEndCutoff>(); }

}  // namespace

static const oplab::BackendRegistrar r(115, make);

}  // namespace oplab
