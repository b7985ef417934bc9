// Three identities of single ops, each needing no peer:
//   dcn-zero-offset-conv       deform_conv2d with zero offsets and mask 1 is the plain
//                              convolution of fuzz/conv2d_direct.h (outputs, grad_input,
//                              grad_weight, grad_bias).
//   drp-zero-offset-roialign   deform_roi_pool with a zero offset is roi_align with
//                              aligned=True, avg, the same grid (outputs, grad_input).
//   interp-same-size-identity  interpolate to the input's own size returns the input and
//                              passes grad_output through (linear modes with
//                              align_corners=True; nearest, nearest-exact and area need none).
#include "core/params.h"
#include "fuzz/case_edit.h"
#include "fuzz/conv2d_direct.h"
#include "fuzz/rounding_rescue.h"
#include "fuzz/properties.h"
#include "compare/tolerance.h"

namespace oplab::fuzz {

namespace {

bool is_dcn(const std::string& op) { return op == "deform_conv2d"; }
bool is_drp(const std::string& op) { return op == "deform_roi_pool"; }
bool is_interp(const std::string& op) { return op == "interpolate"; }

// The case each identity sends the backend (besides its own case, for roi_align).
Case zero_offsets(const Case& c) {
  Case z = c;
  z.inputs["offset"] = Tensor(c.in("offset").shape, 0.0);
  if (z.has("mask")) z.inputs["mask"] = Tensor(c.in("mask").shape, 1.0);
  return z;
}

Case zero_roi_offset(const Case& c) {
  Case z = c;
  if (z.has("offset")) z.inputs["offset"] = Tensor(c.in("offset").shape, 0.0);
  return z;
}

Case aligned_roi_align(const Case& c) {
  const DeformRoiPoolParams p = parse_deform_roi_pool(c);
  Case ra;
  ra.op = "roi_align";
  ra.params = {{"output_size", {p.PH, p.PW}}, {"spatial_scale", p.spatial_scale}, {"sampling_ratio", p.sampling_ratio},
               {"aligned", true}, {"pool_mode", "avg"}};
  ra.inputs["input"] = c.in("input");
  ra.inputs["rois"] = c.in("rois");
  ra.grad_output = c.grad_output;
  return ra;
}

Case same_size_case(const Case& c) {
  const InterpParams p = parse_interpolate(c);
  const Tensor& x = c.in("input");
  Case z;
  z.op = "interpolate";
  json size = json::array();
  for (const InterpAxis& a : p.axes) size.push_back(a.in);
  z.params = {{"mode", interp_mode_name(p.mode)}, {"size", size}};
  const bool linear = p.mode == InterpMode::Linear || p.mode == InterpMode::Bilinear || p.mode == InterpMode::Bicubic ||
                      p.mode == InterpMode::Trilinear;
  if (linear) z.params["align_corners"] = true;
  z.inputs["input"] = x;
  z.grad_output = other_tensor(x.shape, 3);
  return z;
}

CheckResult zero_offset_conv(CheckContext& ctx) {
  const Case& c = ctx.the_case();
  if (!all_finite(c)) return CheckResult::skip("non-finite values (0 * Inf at zero-weight corners is NaN here only)");
  const Case z = zero_offsets(c);
  const DeformConvParams p = parse_deform_conv2d(z);
  Conv2dGeometry g;
  g.sh = p.sh, g.sw = p.sw, g.ph = p.ph, g.pw = p.pw, g.dh = p.dh, g.dw = p.dw, g.groups = p.G, g.Ho = p.Ho, g.Wo = p.Wo;

  Backend& b = ctx.subject();
  const Tolerance tol = tolerance_for(b, c.op);
  CheckResult verdict;
  const auto got = ctx.try_eval(b, z, &verdict);
  if (!got) return verdict;
  const Tensor& x = z.in("input");
  const Tensor& w = z.in("weight");
  // The kernel and conv2d sum the same products in other orders: where a sum cancels (a 1x1
  // weight's gradient -0.17909 * 0.23428 + 0.25 * 0.16780 = -9.0133e-6 from terms of 0.042 came
  // out -9.0115e-6 in float32, where the relative rule allowed 1.8e-9), an element agrees within
  // 2 B_i of the rounding bound (fuzz/rounding_rescue.h).
  RoundingRescue rescue(ctx, z, *got);
  auto judge = [&](const std::string& key, const Tensor& want, const Tensor& have) {
    if (!rescue.agrees(key, want, have, tol)) ctx.expect_close(key + " (vs conv2d)", want, have, tol, &verdict);
  };
  judge("outputs.output", conv2d_forward(x, w, z.opt("bias"), g), got->outputs.at("output"));
  if (z.grad_output) {
    const Conv2dGrads want = conv2d_backward(x, w, *z.grad_output, g);
    judge("grads.input", want.input, got->grads.at("input"));
    judge("grads.weight", want.weight, got->grads.at("weight"));
    if (z.has("bias")) judge("grads.bias", want.bias, got->grads.at("bias"));
  }
  return verdict;
}

CheckResult zero_offset_roialign(CheckContext& ctx) {
  const Case& c = ctx.the_case();
  const Case ra = aligned_roi_align(c);
  const Case z = zero_roi_offset(c);

  Backend& b = ctx.subject();
  const Tolerance tol = tolerance_for(b, c.op);
  CheckResult verdict;
  const auto got = ctx.try_eval(b, z, &verdict);  // first: a backend without the op skips at once
  if (!got) return verdict;
  const auto want = ctx.try_eval(b, ra, &verdict);
  if (!want) return verdict;
  ctx.expect_close("outputs.output (vs roi_align aligned)", want->outputs.at("output"), got->outputs.at("output"), tol,
                   &verdict);
  if (want->grads.count("input"))
    ctx.expect_close("grads.input (vs roi_align aligned)", want->grads.at("input"), got->grads.at("input"), tol,
                     &verdict);
  return verdict;
}

CheckResult same_size_identity(CheckContext& ctx) {
  const Case& c = ctx.the_case();
  // Each output sits on a pixel, its neighbour at weight 0: 0 * Inf is NaN, not the identity.
  if (!all_finite(c)) return CheckResult::skip("non-finite values (0 * Inf at zero-weight neighbours is NaN)");
  const Tensor& x = c.in("input");
  const Case z = same_size_case(c);

  Backend& b = ctx.subject();
  const Tolerance tol = tolerance_for(b, c.op);
  CheckResult verdict;
  const auto got = ctx.try_eval(b, z, &verdict);
  if (!got) return verdict;
  ctx.expect_close("outputs.output (same size: the input)", x, got->outputs.at("output"), tol, &verdict);
  if (got->grads.count("input"))
    ctx.expect_close("grads.input (same size: grad_output)", *z.grad_output, got->grads.at("input"), tol, &verdict);
  return verdict;
}

void zero_offset_conv_asks(CheckContext& ctx, std::vector<Ask>& out) {
  if (all_finite(ctx.the_case())) out.push_back({&ctx.subject(), zero_offsets(ctx.the_case())});
}

void zero_offset_roialign_asks(CheckContext& ctx, std::vector<Ask>& out) {
  out.push_back({&ctx.subject(), zero_roi_offset(ctx.the_case())});
  out.push_back({&ctx.subject(), aligned_roi_align(ctx.the_case())});
}

void same_size_identity_asks(CheckContext& ctx, std::vector<Ask>& out) {
  if (all_finite(ctx.the_case())) out.push_back({&ctx.subject(), same_size_case(ctx.the_case())});
}

}  // namespace

Property dcn_zero_offset_conv_property() {
  Property p{"dcn-zero-offset-conv", "deform_conv2d with zero offsets and mask 1 equals a plain convolution", false,
             is_dcn, zero_offset_conv};
  p.asks = zero_offset_conv_asks;
  return p;
}

Property drp_zero_offset_roialign_property() {
  Property p{"drp-zero-offset-roialign", "deform_roi_pool with zero offset equals aligned roi_align", false, is_drp,
             zero_offset_roialign};
  p.asks = zero_offset_roialign_asks;
  return p;
}

Property interp_same_size_identity_property() {
  Property p{"interp-same-size-identity", "interpolate to the same size (align_corners=True) is the identity", false,
             is_interp, same_size_identity};
  p.asks = same_size_identity_asks;
  return p;
}

}  // namespace oplab::fuzz
