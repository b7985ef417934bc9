// Seeded bug `bug-uint8-truncate`: a uint8 interpolate that truncates its exact result to an
// integer instead of rounding it half up (the classic `(uint8_t)sum` of a hand-written resize;
// Pillow and OpenCV add half a step before their shifts for this reason). It claims exact
// rounding (no fixed-point error), so every pixel whose exact value has a fraction of 1/2 or
// more is one short: the uint8 rule (SPEC §16) catches it. interpolate only, forward only.
#include <algorithm>
#include <cmath>
#include <memory>

#include "core/backend.h"
#include "core/params.h"
#include "reference/reference.h"

namespace oplab {
namespace {

class BugUint8Truncate : public Backend {
 public:
  std::string name() const override { return "bug-uint8-truncate"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: uint8 interpolate truncating its exact result instead of rounding it half up";
  }
  DType dtype(const std::string&) const override { return DType::UInt8; }
  bool computes_grads(const std::string&) const override { return false; }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "interpolate") return std::string("a seeded uint8 interpolate bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    Result r;
    Tensor out = ref::interpolate_forward(vp.as<InterpParams>(), c.in("input"));
    for (double& v : out.data) v = std::clamp(std::floor(v), 0.0, 255.0);  // the bug: floor, not floor(v + 1/2)
    r.outputs["output"] = std::move(out);
    return r;
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugUint8Truncate>(); }

}  // namespace

static const BackendRegistrar r(124, make);

}  // namespace oplab
