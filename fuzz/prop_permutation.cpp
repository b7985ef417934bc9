// permutation: relabelling what the op treats alike must relabel its answer and nothing else.
// Each op's fuzz traits say how (fuzz/ops/):
//   interpolate:  batch and channel permutations of input and grad_output.
//   RoI ops:      a batch permutation (rois' batch indices follow), a channel permutation,
//                 and a permutation of the rois (with their offsets and grad_output rows);
//                 the position-sensitive ops move each output channel's PH*PW input
//                 channels together.
//   deform_conv2d: a batch permutation (offset, mask follow); input channels permuted within
//                 each (weight group, offset group) cell with the weight's input dimension;
//                 output channels permuted within each weight group with the weight's output
//                 dimension, the bias and grad_output.
// Every permutation is a rotation by one inside its blocks (deterministic, and never the
// identity on a block of two or more).
//
// Relabelling also reorders the subject's sums, and a sum whose terms cancel keeps a rounding
// residue that follows the order: ps_roi_align with two empty boxes on one pixel, grad_output
// +0.5 and -0.5, 9 samples of 1/9 each, gives +2.2e-8 in float32 (-2.2e-8 with the rois
// swapped) where the terms are 0.5 in size, and 2.8e-17 in double. Where the relative rule
// fails, an element still agrees within 2 B_i of the rounding bound (fuzz/rounding_rescue.h).
// A wrong relabelling is off by whole terms.
#include "fuzz/op_fuzz.h"
#include "fuzz/properties.h"
#include "fuzz/rounding_rescue.h"
#include "compare/tolerance.h"

namespace oplab::fuzz {

namespace {

bool any_op(const std::string&) { return true; }

CheckResult check(CheckContext& ctx) {
  const Case& c = ctx.the_case();
  const Permuted pc = op_fuzz(c.op).permute(c);
  Backend& b = ctx.subject();
  const Tolerance tol = tolerance_for(b, c.op);
  CheckResult verdict;
  const auto base = ctx.try_eval(b, c, &verdict);
  if (!base) return verdict;
  const auto got = ctx.try_eval(b, pc.c, &verdict);
  if (!got) return verdict;
  // Every element within the relative rule or within 2 B_i (fuzz/rounding_rescue.h).
  RoundingRescue rescue(ctx, pc.c, *got);
  auto compare_part = [&](const char* kind, const std::map<std::string, Tensor>& want,
                          const std::map<std::string, Tensor>& have) {
    for (const auto& [name, t] : want) {
      const std::string key = std::string(kind) + "." + name;
      auto it = have.find(name);
      if (it == have.end()) {
        if (!verdict.failed()) verdict = CheckResult::fail(key + " missing from the permuted case's result");
        continue;
      }
      const Tensor want = pc.map(key, t);
      if (rescue.agrees(key, want, it->second, tol)) continue;
      ctx.expect_close(key + " (permuted case)", want, it->second, tol, &verdict);
    }
  };
  compare_part("outputs", base->outputs, got->outputs);
  compare_part("grads", base->grads, got->grads);
  return verdict;
}

void asks(CheckContext& ctx, std::vector<Ask>& out) {
  const Case& c = ctx.the_case();
  out.push_back({&ctx.subject(), c});
  out.push_back({&ctx.subject(), op_fuzz(c.op).permute(c).c});
}

}  // namespace

Property permutation_property() {
  Property p{"permutation", "batch, channel and roi permutations commute with the op", false, any_op, check};
  p.asks = asks;
  return p;
}

}  // namespace oplab::fuzz
