// Seeded bug `bug-interp-nearest-double`: interpolate's nearest and nearest-exact compute the
// source index in double -- scale in/out (or 1/sf) and the product dst * scale ((dst + 0.5) *
// scale) -- instead of in float32 as PyTorch does (SPEC §6: compute_scales_value<float>). The
// formula is the same, so the two agree except where the product lands within a float32
// rounding of an integer: nearest 14 -> 46 reads index 7 at dst 23 in double, 6 in float32;
// nearest-exact 2 -> 41 reads 1 at dst 20 in double, 0 in float32. A port that widens the
// arithmetic "for accuracy" (OpenCV's resize takes its nearest scale in double, SPEC §8) is
// off by one pixel there. interpolate only; the other modes are the reference's.
#include <algorithm>
#include <cmath>
#include <memory>

#include "core/backend.h"
#include "core/params.h"
#include "reference/reference.h"

namespace oplab {
namespace {

// The bug: every quantity in double.
std::vector<int64_t> double_indices(const InterpAxis& a, bool exact) {
  const double scale = a.scale_factor ? 1.0 / *a.scale_factor : double(a.in) / double(a.out);
  std::vector<int64_t> src(size_t(a.out));
  for (int64_t dst = 0; dst < a.out; ++dst) {
    const double pos = exact ? (double(dst) + 0.5) * scale : double(dst) * scale;
    src[size_t(dst)] = std::min(int64_t(std::floor(pos)), a.in - 1);
  }
  return src;
}

// Source element (within one N*C plane) of every output element of a plane, the axes padded
// to three (D, H, W) with single-pixel leading axes.
std::vector<int64_t> plane_gather(const InterpParams& p) {
  const bool exact = p.mode == InterpMode::NearestExact;
  std::vector<InterpAxis> axes(3 - p.axes.size(), InterpAxis{1, 1, std::nullopt});
  axes.insert(axes.end(), p.axes.begin(), p.axes.end());
  std::vector<std::vector<int64_t>> idx;
  for (const InterpAxis& a : axes) idx.push_back(double_indices(a, exact));
  std::vector<int64_t> from;
  for (int64_t d = 0; d < axes[0].out; ++d)
    for (int64_t h = 0; h < axes[1].out; ++h)
      for (int64_t w = 0; w < axes[2].out; ++w)
        from.push_back((idx[0][size_t(d)] * axes[1].in + idx[1][size_t(h)]) * axes[2].in + idx[2][size_t(w)]);
  return from;
}

class BugInterpNearestDouble : public Backend {
 public:
  std::string name() const override { return "bug-interp-nearest-double"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: interpolate nearest / nearest-exact compute the source index in double instead of "
           "PyTorch's float32 (off by one where dst*scale is within a float32 rounding of an integer, e.g. 14 -> 46)";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "interpolate") return std::string("a seeded interpolate bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    const InterpParams& p = vp.as<InterpParams>();
    const Tensor& x = c.in("input");
    Result r;
    if (p.mode != InterpMode::Nearest && p.mode != InterpMode::NearestExact) {
      r.outputs["output"] = ref::interpolate_forward(p, x);
      if (c.grad_output) r.grads["input"] = ref::interpolate_backward(p, x, *c.grad_output);
      return r;
    }
    const std::vector<int64_t> from = plane_gather(p);
    const int64_t planes = p.N * p.C, in_plane = x.numel() / std::max<int64_t>(planes, 1);
    const int64_t out_plane = int64_t(from.size());
    Tensor out(p.output_shape());
    for (int64_t n = 0; n < planes; ++n)
      for (int64_t o = 0; o < out_plane; ++o)
        out.data[size_t(n * out_plane + o)] = x.data[size_t(n * in_plane + from[size_t(o)])];
    r.outputs["output"] = out;
    if (c.grad_output) {  // the transpose of the same gather
      Tensor g(x.shape);
      for (int64_t n = 0; n < planes; ++n)
        for (int64_t o = 0; o < out_plane; ++o)
          g.data[size_t(n * in_plane + from[size_t(o)])] += c.grad_output->data[size_t(n * out_plane + o)];
      r.grads["input"] = g;
    }
    return r;
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugInterpNearestDouble>(); }

}  // namespace

static const oplab::BackendRegistrar r(117, make);

}  // namespace oplab
