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
#include "fuzz/op_fuzz.h"
#include "fuzz/properties.h"
#include "compare/tolerance.h"

namespace oplab::fuzz {

namespace {

bool any_op(const std::string&) { return true; }

CheckResult check(CheckContext& ctx) {
  const Case& c = ctx.the_case();
  const Permuted pc = op_fuzz(c.op).permute(c);
  Backend& b = ctx.subject();
  const Tolerance tol = tolerance_for(b);
  CheckResult verdict;
  const auto base = ctx.try_eval(b, c, &verdict);
  if (!base) return verdict;
  const auto got = ctx.try_eval(b, pc.c, &verdict);
  if (!got) return verdict;
  auto compare_part = [&](const char* kind, const std::map<std::string, Tensor>& want,
                          const std::map<std::string, Tensor>& have) {
    for (const auto& [name, t] : want) {
      const std::string key = std::string(kind) + "." + name;
      auto it = have.find(name);
      if (it == have.end()) {
        if (!verdict.failed()) verdict = CheckResult::fail(key + " missing from the permuted case's result");
        continue;
      }
      ctx.expect_close(key + " (permuted case)", pc.map(key, t), it->second, tol, &verdict);
    }
  };
  compare_part("outputs", base->outputs, got->outputs);
  compare_part("grads", base->grads, got->grads);
  return verdict;
}

}  // namespace

Property permutation_property() {
  return {"permutation", "batch, channel and roi permutations commute with the op", false, any_op, check};
}

}  // namespace oplab::fuzz
