// Seeded bug `bug-grid-grad-no-unnormalise`: grid_sample's grad_grid is the derivative in the
// pixel coordinate, without the unnormalise factor d coordinate / d grid ((S - 1)/2 with
// align_corners, else S/2): the chain rule stopped one step early, as a hand-written backward
// that differentiates "the sampling position" easily does. Forward and grad_input are right;
// grad_grid is off by the factor (it agrees only on axes where the factor is 1: S = 3 with
// align_corners, S = 2 without). grid_sample only.
#include <memory>

#include "core/backend.h"
#include "core/params.h"
#include "reference/grid_sample_taps.h"

namespace oplab {
namespace {

class BugGridGradNoUnnormalise : public Backend {
 public:
  std::string name() const override { return "bug-grid-grad-no-unnormalise"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: grid_sample grad_grid without the unnormalise factor ((S-1)/2 or S/2), the derivative in "
           "pixels instead of in grid units";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "grid_sample") return std::string("a seeded grid_sample bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    const GridSampleParams& p = vp.as<GridSampleParams>();
    Result r = ref::grid_sample_run(c, p);
    if (r.grads.count("grid")) {
      const int64_t sizes[3] = {p.W, p.H, p.D};
      Tensor& g = r.grads.at("grid");
      for (size_t i = 0; i < g.data.size(); ++i) {
        const double f = ref::grid_unnormalise_factor(sizes[i % size_t(p.nd)], p.align_corners);
        if (f != 0) g.data[i] /= f;  // the bug: back to d / d pixel coordinate
      }
    }
    return r;
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugGridGradNoUnnormalise>(); }

}  // namespace

static const oplab::BackendRegistrar r(130, make);

}  // namespace oplab
