#pragma once
// The `ref` backend's entry of a RoI op whose reference is a forward (params, input, rois) and
// a backward (params, input, rois, grad_output) giving the input's gradient, its only one:
// roi_pool, roi_align, ps_roi_align, ps_roi_pool. Each of them mapped a case onto its two
// functions the same way, so that mapping is written once here; deform_roi_pool (an optional
// offset and its gradient) and the others keep entries of their own.
#include "reference/ref_backend.h"

namespace oplab::ref {

template <class P, Tensor (*Forward)(const P&, const Tensor&, const Tensor&),
          Tensor (*Backward)(const P&, const Tensor&, const Tensor&, const Tensor&)>
Result run_input_rois_op(const Case& c, const ValidParams& vp) {
  const P& p = vp.as<P>();
  Result r;
  r.outputs["output"] = Forward(p, c.in("input"), c.in("rois"));
  if (c.grad_output) r.grads["input"] = Backward(p, c.in("input"), c.in("rois"), *c.grad_output);
  return r;
}

}  // namespace oplab::ref
