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
// fails, an element still agrees within |e - r| <= 2 B_i: B_i the per-element bound of SPEC §9
// (compare/float_compare.h) with the subject's unit roundoff and A from the oracle on the
// magnitude case, once for the rounding of each side. A wrong relabelling is off by whole terms.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "fuzz/op_fuzz.h"
#include "fuzz/properties.h"
#include "compare/float_compare.h"
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
  // Every element within the relative rule or within 2 B_i (the bounds on the permuted case,
  // computed on first use; none when the oracle cannot evaluate the magnitude case).
  std::optional<std::map<std::string, Tensor>> bounds;
  bool bounds_tried = false;
  auto within_rounding = [&](const std::string& key, const Tensor& want, const Tensor& have) {
    if (want.shape != have.shape) return false;
    double scale = 0;
    for (double r : want.data)
      if (std::isfinite(r)) scale = std::max(scale, std::fabs(r));
    for (size_t i = 0; i < want.data.size(); ++i) {
      const double r = want.data[i], e = have.data[i];
      if (!std::isfinite(r) || !std::isfinite(e)) {
        if (!((std::isnan(r) && std::isnan(e)) || r == e)) return false;
        continue;
      }
      const double err = std::fabs(e - r);
      if (err <= tol.rtol * (std::fabs(r) + tol.floor_scale * scale)) continue;
      if (!bounds_tried) {
        bounds_tried = true;
        try {
          bounds = compare::element_bounds(ctx.against(), pc.c, *got, unit_roundoff(b.dtype(c.op)),
                                           compare::kDefaultBoundMultiple, ctx.evaluator());
        } catch (const std::exception&) {
        }
      }
      if (!bounds || !bounds->count(key) || bounds->at(key).shape != want.shape) return false;
      if (!(err <= 2 * bounds->at(key).data[i])) return false;
    }
    return true;
  };
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
      if (within_rounding(key, want, it->second)) continue;
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
