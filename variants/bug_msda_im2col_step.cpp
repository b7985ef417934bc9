// Seeded bug `bug-msda-im2col-step`: ms_deform_attn whose kernel walks the batch in steps of
// im2col_step images without the check Deformable DETR's CUDA extension makes (batch %
// im2col_step == 0): batch / step steps run, and the images of a last partial step are never
// computed, so their outputs and gradients stay 0. The step here is min(N, 2), so a batch of 3
// loses its third image. Everything computed is the reference's.
#include <algorithm>
#include <memory>

#include "core/backend.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

constexpr int64_t kIm2colStep = 2;

// Zeroes the images n >= first of a tensor whose dimension 0 is the batch.
void drop_images(Tensor& t, int64_t first) {
  if (t.rank() == 0 || t.dim(0) == 0) return;
  const size_t per = t.data.size() / size_t(t.dim(0));
  std::fill(t.data.begin() + std::ptrdiff_t(per * size_t(first)), t.data.end(), 0.0);
}

class BugMsdaIm2colStep : public Backend {
 public:
  std::string name() const override { return "bug-msda-im2col-step"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: ms_deform_attn in batch steps of 2 without the batch % im2col_step check: an odd batch "
           "drops its last image (output and gradients 0); rest = ref";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "ms_deform_attn") return std::string("a seeded ms_deform_attn bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    Result r = ref_->run(c, vp);
    const int64_t N = c.in("value").dim(0), step = std::min(N, kIm2colStep);
    if (step == 0) return r;
    const int64_t computed = N / step * step;
    for (auto& [name, t] : r.outputs) drop_images(t, computed);
    for (auto& [name, t] : r.grads) drop_images(t, computed);
    return r;
  }

 private:
  std::unique_ptr<Backend> ref_ = make_ref_backend();
};

std::unique_ptr<Backend> make() { return std::make_unique<BugMsdaIm2colStep>(); }

}  // namespace

static const oplab::BackendRegistrar r(250, make);

}  // namespace oplab
