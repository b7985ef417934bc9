// Dispatches a case to the typed reference functions and packs their tensors into a Result.
#include "reference/ref_backend.h"

#include "core/params.h"
#include "reference/reference.h"

namespace oplab {
namespace {

Result run_deform_conv2d(const Case& c) {
  const auto p = parse_deform_conv2d(c);
  const Tensor *mask = c.opt("mask"), *bias = c.opt("bias");
  Result r;
  r.outputs["output"] = ref::deform_conv2d_forward(p, c.in("input"), c.in("offset"), c.in("weight"), mask, bias);
  if (c.grad_output) {
    auto g = ref::deform_conv2d_backward(p, c.in("input"), c.in("offset"), c.in("weight"), mask, bias, *c.grad_output);
    r.grads["input"] = std::move(g.input);
    r.grads["offset"] = std::move(g.offset);
    r.grads["weight"] = std::move(g.weight);
    if (mask) r.grads["mask"] = std::move(g.mask);
    if (bias) r.grads["bias"] = std::move(g.bias);
  }
  return r;
}

Result run_roi_pool(const Case& c) {
  const auto p = parse_roi_pool(c);
  Result r;
  r.outputs["output"] = ref::roi_pool_forward(p, c.in("input"), c.in("rois"));
  if (c.grad_output) r.grads["input"] = ref::roi_pool_backward(p, c.in("input"), c.in("rois"), *c.grad_output);
  return r;
}

Result run_roi_align(const Case& c) {
  const auto p = parse_roi_align(c);
  Result r;
  r.outputs["output"] = ref::roi_align_forward(p, c.in("input"), c.in("rois"));
  if (c.grad_output) r.grads["input"] = ref::roi_align_backward(p, c.in("input"), c.in("rois"), *c.grad_output);
  return r;
}

Result run_deform_roi_pool(const Case& c) {
  const auto p = parse_deform_roi_pool(c);
  const Tensor* offset = c.opt("offset");
  Result r;
  r.outputs["output"] = ref::deform_roi_pool_forward(p, c.in("input"), c.in("rois"), offset);
  if (c.grad_output) {
    auto g = ref::deform_roi_pool_backward(p, c.in("input"), c.in("rois"), offset, *c.grad_output);
    r.grads["input"] = std::move(g.input);
    if (offset) r.grads["offset"] = std::move(g.offset);
  }
  return r;
}

Result run_interpolate(const Case& c) {
  const auto p = parse_interpolate(c);
  Result r;
  r.outputs["output"] = ref::interpolate_forward(p, c.in("input"));
  if (c.grad_output) r.grads["input"] = ref::interpolate_backward(p, c.in("input"), *c.grad_output);
  return r;
}

class RefBackend : public Backend {
 public:
  std::string name() const override { return "ref"; }
  std::string description() const override { return "naive double-precision reference (the spec in code)"; }
  Result run(const Case& c) override {
    if (c.op == "deform_conv2d") return run_deform_conv2d(c);
    if (c.op == "roi_pool") return run_roi_pool(c);
    if (c.op == "roi_align") return run_roi_align(c);
    if (c.op == "deform_roi_pool") return run_deform_roi_pool(c);
    if (c.op == "interpolate") return run_interpolate(c);
    throw Unsupported("ref: no reference for op " + c.op);
  }
};

}  // namespace

std::unique_ptr<Backend> make_ref_backend() { return std::make_unique<RefBackend>(); }

}  // namespace oplab
