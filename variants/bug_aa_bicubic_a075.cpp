// Seeded bug `bug-aa-bicubic-a075`: antialias bicubic with Keys' a = -0.75 (plain bicubic's
// coefficient; Pillow and torch take -0.5). interpolate with antialias (bicubic) only; the kernel
// is the naive resample of antialias_steps.h with one knob turned.
#include <memory>

#include "core/backend.h"
#include "core/params.h"
#include "variants/antialias_steps.h"

namespace oplab {
namespace {

class BugAaBicubicA075 : public Backend {
 public:
  std::string name() const override { return "bug-aa-bicubic-a075"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: antialias bicubic with Keys' a = -0.75 (plain bicubic's coefficient; Pillow and torch take -0.5)";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "interpolate") return std::string("a seeded interpolate antialias bug only");
    const InterpParams p = parse_interpolate(c);
    if (!p.antialias || p.mode != InterpMode::Bicubic)
      return std::string("a seeded antialias bug: antialias (bicubic) cases only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    antialias_steps::Knobs k;
    k.cubic_a = -0.75;
    return antialias_steps::run(c, vp.as<InterpParams>(), k);
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugAaBicubicA075>(); }

}  // namespace

static const BackendRegistrar r(123, make);

}  // namespace oplab
