// linearity: for the ops that are linear in the feature input (their fuzz traits say so:
// deform_conv2d for fixed offsets, weights and mask; roi_align avg; deform_roi_pool for a
// fixed offset; interpolate; the position-sensitive ops; ms_deform_attn in value and, apart,
// in attention_weights),
// f(a x1 + b x2) = a f(x1) + b f(x2), and grad_input, which depends on grad_output alone,
// is linear in it. For the max ops (roi_pool, roi_align max), which are not linear in the
// input, every gradient is still linear in grad_output at a fixed input, and the forward does
// not depend on grad_output at all.
//
// deform_conv2d with a bias is affine, not linear, in the input: a + b = 1 then keeps the
// identity exact (a f(x1) + b f(x2) carries the bias once).
#include "fuzz/case_edit.h"
#include "fuzz/op_fuzz.h"
#include "fuzz/properties.h"
#include "compare/tolerance.h"

namespace oplab::fuzz {

namespace {

bool any_op(const std::string&) { return true; }

// The two cases the identity asks beside the case itself: x2 (another input, another
// grad_output) and the combination a x1 + b x2. `input` is the linear input varied, or empty
// when only grad_output varies (the ops not linear in their input).
struct Variant {
  std::string input;
  double a = 1.5, b = -0.75;
  Case c2, c3;
};

std::vector<Variant> variants(const Case& c) {
  const Tensor& y1 = *c.grad_output;
  const Tensor y2 = other_tensor(y1.shape, 2);
  std::vector<Variant> list;
  if (op_fuzz(c.op).linear_in_input(c)) {
    std::vector<std::string> linear = op_fuzz(c.op).linear_inputs;
    if (linear.empty()) linear = {"input"};
    // Each linear input alone, the others fixed (ms_deform_attn: value, attention_weights).
    for (const std::string& in : linear) {
      Variant v;
      v.input = in;
      if (c.has("bias")) v.b = -0.5;
      const Tensor& x1 = c.in(in);
      const Tensor x2 = other_tensor(x1.shape, 1);
      v.c2 = c, v.c3 = c;
      v.c2.inputs[in] = x2;
      v.c2.grad_output = y2;
      v.c3.inputs[in] = axpby(v.a, x1, v.b, x2);
      v.c3.grad_output = axpby(v.a, y1, v.b, y2);
      list.push_back(std::move(v));
    }
    return list;
  }
  Variant v;
  v.c2 = c, v.c3 = c;
  v.c2.grad_output = y2;
  v.c3.grad_output = axpby(v.a, y1, v.b, y2);
  list.push_back(std::move(v));
  return list;
}

CheckResult check(CheckContext& ctx) {
  const Case& c = ctx.the_case();
  if (auto skip = algebra_skip(ctx)) return *skip;
  CheckResult verdict;
  Backend& b = ctx.subject();
  const Tolerance tol = tolerance_for(b, c.op);
  const auto base = ctx.try_eval(b, c, &verdict);
  if (!base) return verdict;

  for (const Variant& v : variants(c)) {
    const auto r2 = ctx.try_eval(b, v.c2, &verdict);
    if (!r2) return verdict;
    const auto r3 = ctx.try_eval(b, v.c3, &verdict);
    if (!r3) return verdict;
    if (!v.input.empty()) {
      const std::string& in = v.input;
      ctx.expect_combination("outputs.output (" + in + " a*x1 + b*x2)", v.a, base->outputs.at("output"), v.b,
                             r2->outputs.at("output"), r3->outputs.at("output"), tol, &verdict);
      for (const std::string& g : {in, std::string("bias")})
        if (base->grads.count(g) && r2->grads.count(g) && r3->grads.count(g))
          ctx.expect_combination("grads." + g + " (grad_output a*y1 + b*y2)", v.a, base->grads.at(g), v.b,
                                 r2->grads.at(g), r3->grads.at(g), tol, &verdict);
      continue;
    }
    ctx.expect_close("outputs.output (another grad_output)", base->outputs.at("output"), r2->outputs.at("output"), tol,
                     &verdict);
    for (const auto& [name, g1] : base->grads)
      if (r2->grads.count(name) && r3->grads.count(name))
        ctx.expect_combination("grads." + name + " (grad_output a*y1 + b*y2)", v.a, g1, v.b, r2->grads.at(name),
                               r3->grads.at(name), tol, &verdict);
  }
  return verdict;
}

void asks(CheckContext& ctx, std::vector<Ask>& out) {
  if (algebra_skip(ctx)) return;
  out.push_back({&ctx.subject(), ctx.the_case()});
  for (Variant& v : variants(ctx.the_case())) {
    out.push_back({&ctx.subject(), std::move(v.c2)});
    out.push_back({&ctx.subject(), std::move(v.c3)});
  }
}

}  // namespace

Property linearity_property() {
  Property p{"linearity", "linear in the feature input (ops linear in it); gradients linear in grad_output", false,
             any_op, check};
  p.asks = asks;
  return p;
}

}  // namespace oplab::fuzz
