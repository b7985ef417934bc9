// Seeded bug `bug-grid-nearest-half-away`: grid_sample's nearest mode rounds the coordinate
// half away from zero (std::round) instead of half to even (nearbyint, SPEC §12): a coordinate
// exactly on a half-pixel edge reads the pixel after it where PyTorch reads the even one
// (x = 0.5 reads pixel 1, not 0; x = 2.5 reads 3, not 2). Off such ties the two agree.
// grid_sample only.
#include <cmath>
#include <memory>

#include "core/backend.h"
#include "core/params.h"
#include "reference/grid_sample_taps.h"

namespace oplab {
namespace {

class BugGridNearestHalfAway : public Backend {
 public:
  std::string name() const override { return "bug-grid-nearest-half-away"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: grid_sample nearest rounds half away from zero (std::round) instead of half to even";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "grid_sample") return std::string("a seeded grid_sample bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    ref::GridSampleRules rules;
    rules.round_nearest = [](double v) { return std::round(v); };  // the bug
    return ref::grid_sample_run(c, vp.as<GridSampleParams>(), rules);
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugGridNearestHalfAway>(); }

}  // namespace

static const oplab::BackendRegistrar r(132, make);

}  // namespace oplab
