// adjoint: the backward is the transpose of the forward. For every op, the output is
// f(x) = J x with J the (locally constant) matrix of sampling weights: exactly so for the
// linear ops, and for the max ops too, where J picks the winner (f is positively homogeneous
// of degree 1). The backward applies J^T to grad_output y, so
//     <f(x), y> = <x, grad_input>.
// deform_conv2d is also linear in its weight and in its mask, giving <f, y> = <w, grad_weight>
// = <m, grad_mask>; its bias adds <bias, grad_bias> to each right-hand side.
//
// Both sides are sums of the same products, so they agree to rounding: within
// tol.adjoint (1e-12 in double) of S = <f(|x|, |w|, |m|, |bias|), |y|>, which bounds the sum
// of the magnitudes of those products (sampling weights are >= 0). Bicubic's weights take
// either sign, so S on |x| can cancel to nothing (grid_sample: -4.0e-7 where the products'
// magnitudes sum to 2.3e-3): where the op states Σ |w_k x_k| itself (compare::OpCompare::
// magnitude, interpolate's and grid_sample's bicubic), S takes that output. Cases a named
// divergence of the subject touches are skipped: a peer that copies in one direction only
// (interp-same-size-copy) is not the transpose of itself there, which is that divergence,
// already recorded.
#include <cmath>
#include <sstream>

#include "core/op_desc.h"
#include "fuzz/case_edit.h"
#include "fuzz/op_fuzz.h"
#include "fuzz/properties.h"
#include "compare/dtype_case.h"
#include "compare/float_compare.h"
#include "compare/op_compare.h"
#include "compare/tolerance.h"

namespace oplab::fuzz {

namespace {

bool any_op(const std::string&) { return true; }

CheckResult check(CheckContext& ctx) {
  const Case& c = ctx.the_case();
  if (auto skip = algebra_skip(ctx)) return *skip;
  CheckResult verdict;
  Backend& b = ctx.subject();
  const auto base = ctx.try_eval(b, c, &verdict);
  if (!base) return verdict;

  const Case mag = compare::magnitude_case(c);
  const auto rm = ctx.try_eval(b, mag, &verdict);
  if (!rm) return verdict;

  const Tensor& y = *c.grad_output;
  const double lhs = dot(base->outputs.at("output"), y);
  Result mag_result = *rm;
  // On the case as the subject computes it: a float32 kernel rounds the grid itself, which
  // moves its weights (a tap at distance 2 - 1e-16 weighs 0 in double, 4e-8 in float32).
  // A kernel that forms its own weights evaluates their polynomials in its type: their partials
  // count (compare/ops/cubic_partials.h).
  if (auto exact = compare::op_compare(c.op).magnitude)
    exact(b.geometry_as_reference() ? compare::float_rounded_case(c) : compare::case_for(b, c), mag_result,
          !b.geometry_as_reference());
  const double S = dot(mag_result.outputs.at("output"), *mag.grad_output);
  const double bias_term = c.has("bias") && base->grads.count("bias") ? dot(c.in("bias"), base->grads.at("bias")) : 0.0;
  // |S|: an op with negative weights (bicubic's outer lobes) can make S negative or small.
  const double allowed = tolerance_for(b, c.op).adjoint * std::fabs(S);

  auto expect = [&](const std::string& input, const std::string& grad) {
    if (!c.has(input) || !base->grads.count(grad) || verdict.failed()) return;
    const double rhs = dot(c.in(input), base->grads.at(grad)) + bias_term;
    if (std::fabs(lhs - rhs) <= allowed) return;
    std::ostringstream os;
    os.precision(17);
    os << "<f(x), grad_output> = " << lhs << " but <" << input << ", grad_" << grad << ">"
       << (bias_term != 0 ? " + <bias, grad_bias>" : "") << " = " << rhs << " (difference " << std::fabs(lhs - rhs)
       << ", allowed " << allowed << " = " << tolerance_for(b, c.op).adjoint << " x " << S << ")";
    verdict = CheckResult::fail(os.str());
    verdict.metrics["adjoint." + input] = {{"lhs", lhs}, {"rhs", rhs}, {"scale", S}};
  };
  for (const std::string& input : op_fuzz(c.op).adjoint_inputs) expect(input, input);
  return verdict;
}

void asks(CheckContext& ctx, std::vector<Ask>& out) {
  if (algebra_skip(ctx)) return;
  out.push_back({&ctx.subject(), ctx.the_case()});
  out.push_back({&ctx.subject(), compare::magnitude_case(ctx.the_case())});
}

}  // namespace

Property adjoint_property() {
  Property p{"adjoint", "<J x, y> = <x, J^T y>: the backward is the transpose of the forward", false, any_op, check};
  p.asks = asks;
  return p;
}

}  // namespace oplab::fuzz
