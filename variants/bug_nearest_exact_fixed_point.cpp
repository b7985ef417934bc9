// Seeded bug `bug-nearest-exact-fixed-point`: nearest-exact indexing its source in 16.16 fixed
// point from the sizes, as OpenCV's INTER_NEAREST_EXACT does (a step of ((in << 16) + out / 2) /
// out, starting half a step less one unit: opencv/opencv#22204 and #27191 report it misreading
// widths and, past 65536x, index -1). 2 -> 1 reads index 0 where the spec reads 1. interpolate
// nearest-exact only, forward and backward (the same indices scattered back).
#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "core/backend.h"
#include "core/params.h"

namespace oplab {
namespace {

std::vector<int64_t> fixed_point_indices(const InterpAxis& a) {
  const int64_t step = ((a.in << 16) + a.out / 2) / a.out, start = step / 2 - 1;
  std::vector<int64_t> src;
  for (int64_t d = 0; d < a.out; ++d) src.push_back(std::clamp<int64_t>((step * d + start) >> 16, 0, a.in - 1));
  return src;
}

class BugNearestExactFixedPoint : public Backend {
 public:
  std::string name() const override { return "bug-nearest-exact-fixed-point"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override {
    return "seeded bug: nearest-exact indexing in 16.16 fixed point from the sizes (OpenCV's INTER_NEAREST_EXACT; "
           "opencv/opencv#22204, #27191)";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "interpolate" || c.params.value("mode", json("")) != "nearest-exact")
      return std::string("a seeded nearest-exact bug only");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    const InterpParams& p = vp.as<InterpParams>();
    // Three axes (D, H, W), single-pixel leading ones for 1-D and 2-D input.
    std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1};
    std::array<std::vector<int64_t>, 3> src{std::vector<int64_t>{0}, std::vector<int64_t>{0}, std::vector<int64_t>{0}};
    const size_t lead = 3 - p.axes.size();
    for (size_t i = 0; i < p.axes.size(); ++i)
      in[lead + i] = p.axes[i].in, out[lead + i] = p.axes[i].out, src[lead + i] = fixed_point_indices(p.axes[i]);
    const Tensor& x = c.in("input");
    Result r;
    Tensor y(p.output_shape()), gx(x.shape);
    for (int64_t n = 0; n < p.N * p.C; ++n)
      for (int64_t d = 0; d < out[0]; ++d)
        for (int64_t h = 0; h < out[1]; ++h)
          for (int64_t w = 0; w < out[2]; ++w) {
            const size_t o = size_t(((n * out[0] + d) * out[1] + h) * out[2] + w);
            const size_t i = size_t(((n * in[0] + src[0][size_t(d)]) * in[1] + src[1][size_t(h)]) * in[2] + src[2][size_t(w)]);
            y.data[o] = x.data[i];
            if (c.grad_output) gx.data[i] += c.grad_output->data[o];
          }
    r.outputs["output"] = std::move(y);
    if (c.grad_output) r.grads["input"] = std::move(gx);
    return r;
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugNearestExactFixedPoint>(); }

}  // namespace

static const BackendRegistrar r(125, make);

}  // namespace oplab
