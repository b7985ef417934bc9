// Seeded bug `bug-dcn-gradoffset-nomask`: deform_conv2d whose grad_offset forgets the mask
// factor. The true gradient of a masked sample's coordinate is m * Gcol * dB/dy (SPEC §2); this
// backend returns Gcol * dB/dy. Everything else is the reference's.
//
// The buggy gradient is exactly the reference's grad_offset of the same case without its mask
// (with no mask, m = 1 and Gcol does not involve the mask), so no formula is copied here. On
// cases without a mask the bug is invisible, as it would be in a real kernel.
#include <memory>

#include "core/backend.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

class BugDcnGradOffsetNoMask : public Backend {
 public:
  std::string name() const override { return "bug-dcn-gradoffset-nomask"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: deform_conv2d grad_offset without the mask factor; rest = ref";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "deform_conv2d") return std::string("a seeded deform_conv2d bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    Result r = ref_->run(c, vp);
    if (c.grad_output && c.has("mask")) {
      Case unmasked = c;
      unmasked.inputs.erase("mask");
      r.grads["offset"] = evaluate(*ref_, unmasked).grads.at("offset");  // its own params: no mask
    }
    return r;
  }

 private:
  std::unique_ptr<Backend> ref_ = make_ref_backend();
};

std::unique_ptr<Backend> make() { return std::make_unique<BugDcnGradOffsetNoMask>(); }

}  // namespace

static const oplab::BackendRegistrar r(220, make);

}  // namespace oplab
