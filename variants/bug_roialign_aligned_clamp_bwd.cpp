// Seeded bug `bug-roialign-aligned-clamp-bwd`: the RoIAlign backward applies the legacy
// clamp of the roi size (max(size, 1)) when aligned=True instead of when aligned=False; the
// forward is right. Published in torchvision's CPU backward when the `aligned` flag landed
// (`if (aligned)` where `!aligned` was meant) and fixed in pytorch/vision#2438 ("Fix wrong
// clamping in RoIAlign with aligned=True"). Visible only in grad_input, on boxes smaller than
// one pixel. roi_align only.
#include <memory>

#include "core/backend.h"
#include "variants/bug_roialign_rules.h"

namespace oplab {
namespace {

class BugRoiAlignAlignedClampBwd : public Backend {
 public:
  std::string name() const override { return "bug-roialign-aligned-clamp-bwd"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: roi_align backward clamps the roi size when aligned instead of when not (pytorch/vision#2438)";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "roi_align") return std::string("a seeded roi_align bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    variants::RoiAlignRules rules;
    rules.clamp_inverted_in_backward = true;
    return variants::roi_align_with_rules(c, vp.as<RoiAlignParams>(), rules);
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugRoiAlignAlignedClampBwd>(); }

}  // namespace

static const oplab::BackendRegistrar r(111, make);

}  // namespace oplab
