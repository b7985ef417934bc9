// Seeded bug `bug-msda-gradloc-noscale`: ms_deform_attn whose sampling-location gradient is
// the derivative in pixels, without the level's size: the pixel column is x = loc_x * W_l - 0.5,
// so d/d(loc_x) carries a factor W_l (H_l for y) that a kernel written in pixel units forgets.
// The buggy gradient is the reference's divided by that factor (no formula copied); on levels
// of size 1 the bug is invisible, as it would be in a real kernel.
#include <memory>

#include "core/backend.h"
#include "core/params.h"
#include "reference/ms_deform_attn_points.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

class BugMsdaGradLocNoScale : public Backend {
 public:
  std::string name() const override { return "bug-msda-gradloc-noscale"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: ms_deform_attn grad_sampling_locations without the W_l / H_l factor (the pixel derivative); "
           "rest = ref";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "ms_deform_attn") return std::string("a seeded ms_deform_attn bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    Result r = ref_->run(c, vp);
    if (!c.grad_output) return r;
    const auto& p = vp.as<MsDeformAttnParams>();
    Tensor& g = r.grads.at("sampling_locations");
    ref::for_each_msda_point(p, c.in("sampling_locations"), [&](const ref::MsdaPoint& s) {
      g.data[size_t(s.loc)] /= double(p.W[size_t(s.l)]);
      g.data[size_t(s.loc + 1)] /= double(p.H[size_t(s.l)]);
    });
    return r;
  }

 private:
  std::unique_ptr<Backend> ref_ = make_ref_backend();
};

std::unique_ptr<Backend> make() { return std::make_unique<BugMsdaGradLocNoScale>(); }

}  // namespace

static const oplab::BackendRegistrar r(251, make);

}  // namespace oplab
