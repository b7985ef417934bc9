// Seeded bug `bug-bilinear-neg-band`: a RoIAlign bilinear sampler that treats a sample with
// y in (-1, 0) as outside the image (0, no gradient) instead of reading the edge row, i.e. it
// cuts off at y < 0 rather than y < -1. Early RoIAlign ports wrote exactly this test, e.g.
// jwyang/faster-rcnn.pytorch's roi_align kernels (`if (h < 0 || h >= height || ...)`,
// questioned in its issues #638 and #683); SPEC §4 replicates the edge within one pixel
// outside the image. roi_align (avg) only, forward and backward alike.
#include <memory>

#include "core/backend.h"
#include "variants/bug_roialign_rules.h"

namespace oplab {
namespace {

class BugBilinearNegBand : public Backend {
 public:
  std::string name() const override { return "bug-bilinear-neg-band"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: roi_align sampler returns 0 for y in (-1, 0) instead of the edge row "
           "(jwyang/faster-rcnn.pytorch roi_align, issues #638/#683)";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "roi_align") return std::string("a seeded roi_align bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    variants::RoiAlignRules rules;
    rules.y_below_zero_is_outside = true;
    return variants::roi_align_with_rules(c, vp.as<RoiAlignParams>(), rules);
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugBilinearNegBand>(); }

}  // namespace

static const oplab::BackendRegistrar r(112, make);

}  // namespace oplab
