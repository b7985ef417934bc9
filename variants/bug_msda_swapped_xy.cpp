// Seeded bug `bug-msda-swapped-xy`: ms_deform_attn that reads a sampling location as (y, x)
// where the convention is (x, y), x first (grid_sample's order): it samples the transposed
// point of every level and returns its gradients in its own order. Computed as the reference
// on the case with each location's two coordinates exchanged, gradients exchanged back.
// Invisible on square levels with loc_x == loc_y, as it would be in a real kernel.
#include <memory>
#include <utility>

#include "core/backend.h"
#include "core/op_desc.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

void swap_pairs(Tensor& t) {
  for (size_t i = 0; i + 1 < t.data.size(); i += 2) std::swap(t.data[i], t.data[i + 1]);
}

class BugMsdaSwappedXy : public Backend {
 public:
  std::string name() const override { return "bug-msda-swapped-xy"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: ms_deform_attn reads each sampling location as (y, x) instead of (x, y); rest = ref";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "ms_deform_attn") return std::string("a seeded ms_deform_attn bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams&) override {
    Case swapped = c;
    swap_pairs(swapped.inputs.at("sampling_locations"));
    Result r = evaluate(*ref_, swapped);
    if (r.grads.count("sampling_locations")) swap_pairs(r.grads.at("sampling_locations"));
    r.backend = name();
    return r;
  }

 private:
  std::unique_ptr<Backend> ref_ = make_ref_backend();
};

std::unique_ptr<Backend> make() { return std::make_unique<BugMsdaSwappedXy>(); }

}  // namespace

static const oplab::BackendRegistrar r(252, make);

}  // namespace oplab
