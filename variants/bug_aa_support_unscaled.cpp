// Seeded bug `bug-aa-support-unscaled`: antialias's support and argument not scaled by the
// downscale factor (the plain filter: aliasing). interpolate with antialias (bilinear and bicubic)
// only; the kernel is the naive resample of antialias_steps.h with one knob turned.
#include <memory>

#include "core/backend.h"
#include "core/params.h"
#include "variants/antialias_steps.h"

namespace oplab {
namespace {

class BugAaSupportUnscaled : public Backend {
 public:
  std::string name() const override { return "bug-aa-support-unscaled"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: antialias's support and argument not scaled by the downscale factor (the plain filter: aliasing)";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "interpolate") return std::string("a seeded interpolate antialias bug only");
    const InterpParams p = parse_interpolate(c);
    if (!p.antialias)
      return std::string("a seeded antialias bug: antialias (bilinear and bicubic) cases only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    antialias_steps::Knobs k;
    k.scale_support = false;
    return antialias_steps::run(c, vp.as<InterpParams>(), k);
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugAaSupportUnscaled>(); }

}  // namespace

static const BackendRegistrar r(121, make);

}  // namespace oplab
