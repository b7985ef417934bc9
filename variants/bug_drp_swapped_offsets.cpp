// Seeded bug `bug-drp-swapped-offsets`: a DeformRoIPool that reads its offset channels in
// deform_conv2d's order (channel 0 = y, 1 = x) where mmcv's DeformRoIPool has channel 0 = x,
// 1 = y (SPEC §5). The two conventions side by side are a known trap: users ask which channel
// is which (open-mmlab/mmdetection#2504 for DCN's (y, x)), and ports mix them up
// (developer0hye/PyTorch-Deformable-Convolution-v2#17 split the offsets the wrong way).
// deform_roi_pool only; forward and backward are consistent with each other.
//
// The reference is reused: the buggy op on offset (a, b) is the right op on offset (b, a),
// and its grad_offset comes back with the channels swapped the same way.
#include <memory>

#include "core/backend.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

Tensor swap_channels(const Tensor& off) {
  Tensor t = off;  // [K, 2, PH, PW]
  const int64_t K = off.dim(0), plane = off.dim(2) * off.dim(3);
  for (int64_t k = 0; k < K; ++k)
    for (int64_t i = 0; i < plane; ++i) std::swap(t.data[size_t((k * 2) * plane + i)], t.data[size_t((k * 2 + 1) * plane + i)]);
  return t;
}

class BugDrpSwappedOffsets : public Backend {
 public:
  std::string name() const override { return "bug-drp-swapped-offsets"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: deform_roi_pool reads offset channel 0 as y and 1 as x (deform_conv2d's order; "
           "mmdetection#2504, PyTorch-Deformable-Convolution-v2#17)";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "deform_roi_pool") return std::string("a seeded deform_roi_pool bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    if (!c.has("offset")) return ref_->run(c, vp);
    Case swapped = c;
    swapped.inputs["offset"] = swap_channels(c.in("offset"));
    Result r = ref_->run(swapped, vp);  // same shapes and params
    if (r.grads.count("offset")) r.grads["offset"] = swap_channels(r.grads.at("offset"));
    return r;
  }

 private:
  std::unique_ptr<Backend> ref_ = make_ref_backend();
};

std::unique_ptr<Backend> make() { return std::make_unique<BugDrpSwappedOffsets>(); }

}  // namespace

static const oplab::BackendRegistrar r(114, make);

}  // namespace oplab
