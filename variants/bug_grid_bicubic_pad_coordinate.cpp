// Seeded bug `bug-grid-bicubic-pad-coordinate`: grid_sample's bicubic mode pads (clamps or
// reflects) the unnormalised coordinate and then takes its 4 x 4 taps, as bilinear does,
// instead of taking the taps of the unpadded coordinate and padding each tap (SPEC §12). Inside
// the image the two agree; within two pixels of an edge, or outside it, the cubic weights are
// those of the wrong position (border padding at x = -0.5 reads the weights of x = 0). Zeros
// padding pads nothing, so only border and reflection differ. grid_sample only.
#include <memory>

#include "core/backend.h"
#include "core/params.h"
#include "reference/grid_sample_taps.h"

namespace oplab {
namespace {

class BugGridBicubicPadCoordinate : public Backend {
 public:
  std::string name() const override { return "bug-grid-bicubic-pad-coordinate"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: grid_sample bicubic pads the coordinate before taking its taps, instead of padding each tap";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "grid_sample") return std::string("a seeded grid_sample bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    ref::GridSampleRules rules;
    rules.bicubic_pad_coordinate = true;  // the bug
    return ref::grid_sample_run(c, vp.as<GridSampleParams>(), rules);
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugGridBicubicPadCoordinate>(); }

}  // namespace

static const oplab::BackendRegistrar r(131, make);

}  // namespace oplab
