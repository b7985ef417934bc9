#include "gradcheck/vs_ref.h"

#include <cmath>
#include <sstream>

#include "compare/differential.h"
#include "compare/float_compare.h"
#include "gradcheck/kinks.h"

namespace oplab::gradcheck {

namespace {

struct Compared {
  double worst = 0;  // largest |e - r| / (|r| + floor_scale * max|r|)
  std::string where;
};

Compared compare(const std::string& name, const Tensor& want, const Tensor& got, const compare::Tolerance& tol,
                 double rounding) {
  Compared r;
  if (want.shape != got.shape) {
    r.worst = kInf;
    r.where = name + ": shape " + shape_str(got.shape) + " != " + shape_str(want.shape);
    return r;
  }
  const double scale = tol.floor_scale * max_abs(want);
  for (size_t i = 0; i < want.data.size(); ++i) {
    const double w = want.data[i], g = got.data[i];
    double e;
    if (!std::isfinite(w) || !std::isfinite(g)) e = (std::isnan(w) && std::isnan(g)) || w == g ? 0.0 : kInf;
    else if (w == g) e = 0.0;
    else if (std::fabs(g - w) <= rounding) e = 0.0;
    else e = std::fabs(w) + scale > 0 ? std::fabs(g - w) / (std::fabs(w) + scale) : kInf;
    if (e > r.worst) {
      r.worst = e;
      std::ostringstream os;
      os.precision(17);
      os << name << "[" << i << "]: " << g << " vs ref " << w;
      r.where = os.str();
    }
  }
  return r;
}

CheckRecord float32_record(const CheckContext& ctx, const Case& c) {
  CheckRecord rec = ctx.record(c, "*", "vs-ref");
  rec.tolerance = compare::kDefaultBoundMultiple;
  const compare::FloatOutcome o = compare::compare_float_backend(*ctx.ref, *ctx.backend, c);
  rec.error = o.worst_ratio;
  rec.detail = o.detail;
  rec.extra = {{"precision", dtype_name(ctx.backend->dtype(c.op))}, {"policy", "SPEC 9 per-element bound (compare/float_compare.h)"},
               {"flip_rule", compare::flip_rule_name(o.rule)}};
  // boundary-flip means a flip the backend's own rounding can take (compare/flip_rule.h):
  // for the Halide kernels' precision, the float32-rounded case or a max tie, never a nudge.
  if (o.verdict == Verdict::BoundaryFlip) {
    json kinds = json::object();
    for (size_t k = 0; k < compare::kFlipKinds; ++k)
      if (o.flips[k]) kinds[compare::flip_kind_name(compare::FlipKind(k))] = o.flips[k];
    rec.extra["flips_by_kind"] = kinds;
  }
  rec.verdict = o.verdict;
  if (compare::is_failure(o.verdict)) rec.error = kInf;
  return rec;
}

// The rounding two double gradients of a coordinate input may differ by where its terms
// cancel: 16 eps of the terms, grad_output times the forward's terms (OpKinks::term_scale)
// over the width of a piece (the coordinate's rate). A gradient that is exactly 0 in one
// summation order (bicubic's symmetric taps at a reflected edge) is 1e-18 in another, and
// the relative floor of a tensor whose gradients are all ~1e-10 does not cover that.
double gradient_rounding(const Case& c, const std::string& input) {
  if (!c.grad_output || op_kinks(c.op).affine(c, input)) return 0.0;
  double vsum = 0;
  for (double e : c.grad_output->data) vsum += std::fabs(e);
  const double width = piece_width(c, input);
  return 16 * 0x1.0p-53 * vsum * term_scale(c) / (width > 0 ? width : 1.0);
}

}  // namespace

std::vector<CheckRecord> vs_ref(const CheckContext& ctx, const Case& c, const Result& got,
                                const std::vector<Divergence>& known) {
  if (ctx.precision == Precision::F32) return {float32_record(ctx, c)};
  std::vector<CheckRecord> out;
  const compare::Tolerance tol;
  const Result want = evaluate(*ctx.ref, c);
  for (const auto& [name, w] : want.grads) {
    CheckRecord rec = ctx.record(c, name, "vs-ref");
    rec.tolerance = tol.rtol;
    rec.elements = w.numel();
    auto it = got.grads.find(name);
    if (it == got.grads.end()) {
      rec.verdict = Verdict::Disagree;
      rec.error = kInf;
      rec.detail = "no gradient for " + name;
      out.push_back(rec);
      continue;
    }
    const double rounding = gradient_rounding(c, name);
    const Compared cmp = compare(name, w, it->second, tol, rounding);
    rec.error = cmp.worst;
    if (cmp.worst > tol.rtol) {
      rec.verdict = Verdict::Disagree;
      rec.detail = cmp.where;
      // A named divergence counts only when the reference on its equivalent case reproduces
      // the backend: the name is proven, as in the differential suite (every divergence that
      // applies, together: compare/differential.h).
      const compare::Equivalent eq = compare::divergence_equivalent(c, known);
      if (!eq.names.empty()) {
        const Result alt = evaluate(*ctx.ref, eq.c);
        if (alt.grads.count(name) && compare(name, alt.grads.at(name), it->second, tol, rounding).worst <= tol.rtol) {
          rec.verdict = Verdict::NamedDivergence;
          rec.detail = eq.names + ": " + rec.detail;
        }
      }
    }
    out.push_back(rec);
  }
  return out;
}

}  // namespace oplab::gradcheck
