// Seeded bug `bug-roipool-half-even`: a float32 RoIPool that rounds the scaled box corners
// half to even (2.5 -> 2) instead of C's round, half away from zero (2.5 -> 3, SPEC §3). It is
// the bug a kernel gets from a round() that rounds half to even: Halide's own round() does
// (halide/generators/roi_pool_generator.cpp writes C's round by hand for that reason), and so
// does Python's round() (SPEC §8, 2.5 -> 2). It differs only for a corner exactly on n + 0.5:
// corners nudged a few float32 ulps either way round like the bug on one side, which is why a
// flip rule that lets nudges explain a failure passed this bug as boundary flips
// (compare/flip_rule.h).
//
// Float32 like the Halide kernel: float32 inputs, corners scaled in float32 (x * s with s
// rounded to float32) and bins in float32, as torchvision's float kernel and ours do; only the
// rounding is wrong. Max over each bin (first maximum wins, NaN never wins, an empty bin
// outputs 0) and its backward to the argmax pixel, stored as float32.
#include <cmath>
#include <memory>
#include <vector>

#include "core/backend.h"
#include "core/params.h"

namespace oplab {
namespace {

Tensor as_float32(Tensor t) {
  for (double& v : t.data) v = double(float(v));
  return t;
}

// Bin p of one axis: [lo, hi), with the corners a, b (unscaled) of the box.
struct Span {
  int64_t lo = 0, hi = 0;
};

// Clamped to [0, size] in float before the conversion (NaN, from a corner beyond float's
// range, to 0), so that the conversion is always defined.
int64_t bound(float v, int64_t size) {
  if (!(v >= 0.0f)) return 0;
  return int64_t(std::min(v, float(size)));
}

Span axis_bin(double a, double b, float scale, int64_t pooled, int64_t p, int64_t size) {
  // The bug: nearbyint rounds half to even in the default rounding mode.
  const float start = std::nearbyint(float(a) * scale), end = std::nearbyint(float(b) * scale);
  const float len = std::max(end - start + 1.0f, 1.0f);  // inclusive end
  const float bin = len / float(pooled);
  return Span{bound(std::floor(float(p) * bin) + start, size), bound(std::ceil(float(p + 1) * bin) + start, size)};
}

struct BinMax {
  double value = 0;
  int64_t argmax = -1;  // flat index y * W + x in the plane; -1: none
};

BinMax bin_max(const double* plane, int64_t W, const Span& y, const Span& x) {
  BinMax m;
  if (y.hi <= y.lo || x.hi <= x.lo) return m;  // empty bin: 0, no argmax
  for (int64_t yy = y.lo; yy < y.hi; ++yy)
    for (int64_t xx = x.lo; xx < x.hi; ++xx) {
      const double v = plane[yy * W + xx];
      if (std::isnan(v)) continue;
      if (m.argmax < 0 || v > m.value) m.value = v, m.argmax = yy * W + xx;
    }
  if (m.argmax < 0) m.value = NAN;  // a bin of only NaN
  return m;
}

class BugRoiPoolHalfEven : public Backend {
 public:
  std::string name() const override { return "bug-roipool-half-even"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  bool is_float32() const override { return true; }
  bool geometry_as_reference() const override { return true; }  // mimics the Halide kernels
  std::string description() const override {
    return "seeded bug: float32 roi_pool rounding the scaled corners half to even (2.5 -> 2) instead of C round "
           "(Halide's and Python's round())";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "roi_pool") return std::string("a seeded roi_pool bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    const RoiPoolParams& p = vp.as<RoiPoolParams>();
    const Tensor input = as_float32(c.in("input")), rois = as_float32(c.in("rois"));
    const float scale = float(p.spatial_scale);
    Tensor out(p.output_shape()), grad(Shape{p.N, p.C, p.H, p.W});
    const Tensor gout = c.grad_output ? as_float32(*c.grad_output) : Tensor();
    for (int64_t r = 0; r < p.K; ++r) {
      const int64_t n = int64_t(rois.at(r, 0));
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw) {
          const Span y = axis_bin(rois.at(r, 2), rois.at(r, 4), scale, p.PH, ph, p.H);
          const Span x = axis_bin(rois.at(r, 1), rois.at(r, 3), scale, p.PW, pw, p.W);
          for (int64_t ch = 0; ch < p.C; ++ch) {
            const int64_t plane = (n * p.C + ch) * p.H * p.W;
            const BinMax m = bin_max(input.data.data() + plane, p.W, y, x);
            out.at(r, ch, ph, pw) = m.value;
            if (c.grad_output && m.argmax >= 0) grad.data[size_t(plane + m.argmax)] += gout.at(r, ch, ph, pw);
          }
        }
    }
    Result res;
    res.outputs["output"] = as_float32(out);
    if (c.grad_output) res.grads["input"] = as_float32(grad);
    return res;
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugRoiPoolHalfEven>(); }

}  // namespace

static const oplab::BackendRegistrar r(116, make);

}  // namespace oplab
