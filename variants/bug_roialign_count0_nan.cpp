// Seeded bug `bug-roialign-count0-nan`: RoIAlign (avg) divides by count = gh * gw without
// max(count, 1), so an aligned box of zero size with the adaptive grid (gh = ceil(0) = 0)
// outputs 0/0 = NaN instead of 0. This is the bug ppwwyyxx pointed out when the `aligned`
// flag was added to torchvision (pytorch/vision#1908: detectron2 needs
// `count = max(roi_bin_grid_h * roi_bin_grid_w, 1)` "because now the bin can be empty and can
// lead to NaN outputs"; see also facebookresearch/detectron2#804). roi_align only.
#include <memory>

#include "core/backend.h"
#include "variants/bug_roialign_rules.h"

namespace oplab {
namespace {

class BugRoiAlignCount0Nan : public Backend {
 public:
  std::string name() const override { return "bug-roialign-count0-nan"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: roi_align avg count without max(count,1): NaN for an empty aligned bin "
           "(pytorch/vision#1908 review, detectron2#804)";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "roi_align") return std::string("a seeded roi_align bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    variants::RoiAlignRules rules;
    rules.count_without_max = true;
    return variants::roi_align_with_rules(c, vp.as<RoiAlignParams>(), rules);
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugRoiAlignCount0Nan>(); }

}  // namespace

static const oplab::BackendRegistrar r(110, make);

}  // namespace oplab
