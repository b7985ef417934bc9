// Seeded bug `bug-interp-size1-scale0`: interpolate's linear and cubic modes use scale 0 for
// an output size of 1 even without align_corners. Older PyTorch computed the scale as
// `output_size > 1 ? (align_corners ? (in-1)/(out-1) : in/out) : 0`, so 2x2 -> 1x1 bilinear
// read pixel (0, 0) (1.0) instead of the centre (2.5); fixed by PyTorch commit 6ab3a21
// (SPEC §8; discussed in pytorch/pytorch#30565, and the same guard questioned when OneFlow
// copied it, Oneflow-Inc/oneflow#5366). interpolate only.
//
// The reference is reused unchanged: its kernel scale is 1/scale_factor when a scale factor
// is given (core/ops/interpolate.cpp, interp_area_scale), so an infinite scale factor on the
// affected axes gives exactly the buggy scale 0.
#include <cmath>
#include <memory>

#include "core/backend.h"
#include "core/params.h"
#include "reference/reference.h"

namespace oplab {
namespace {

class BugInterpSize1Scale0 : public Backend {
 public:
  std::string name() const override { return "bug-interp-size1-scale0"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: interpolate (linear, cubic) uses scale 0 for output size 1 without align_corners "
           "(old PyTorch, fixed in 6ab3a21; pytorch/pytorch#30565)";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "interpolate") return std::string("a seeded interpolate bug only");
    // The old guard was in the plain kernels' scale; antialias (SPEC §16) came later.
    if (c.params.value("antialias", json(false)) == json(true)) return std::string("the plain kernels only, not antialias");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    InterpParams p = vp.as<InterpParams>();
    const bool scaled = p.mode == InterpMode::Linear || p.mode == InterpMode::Bilinear ||
                        p.mode == InterpMode::Bicubic || p.mode == InterpMode::Trilinear;
    if (scaled && !p.align_corners)
      for (InterpAxis& a : p.axes)
        if (a.out == 1) a.scale_factor = INFINITY;  // 1 / inf = 0: the old guard's scale
    Result r;
    r.outputs["output"] = ref::interpolate_forward(p, c.in("input"));
    if (c.grad_output) r.grads["input"] = ref::interpolate_backward(p, c.in("input"), *c.grad_output);
    return r;
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugInterpSize1Scale0>(); }

}  // namespace

static const oplab::BackendRegistrar r(113, make);

}  // namespace oplab
