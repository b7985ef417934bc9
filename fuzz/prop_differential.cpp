// differential: the subject against the oracle (`ref` by default), outputs and every
// gradient, with the tolerance of the pair (compare/tolerance.h). A disagreement that one of the
// peer's named divergences explains (proven on its equivalent case, compare/differential.cpp)
// is that divergence's verdict; a float32 subject is held to the per-element bound, its
// boundary flips a verdict of their own. A subject without the case's backward is judged on
// its forward (forward_only); one without the forward is unsupported.
#include "core/metrics.h"
#include "compare/accuracy_stats.h"
#include "compare/dtype_case.h"
#include "compare/float_compare.h"
#include "compare/float_divergence.h"
#include "fuzz/properties.h"
#include "compare/tolerance.h"

namespace oplab::fuzz {

namespace {

bool any_op(const std::string&) { return true; }

// Metrics of every tensor of `got` against `want`, for the failure record.
void add_metrics(CheckResult& r, const Result& want, const Result& got) {
  auto add = [&](const char* kind, const std::map<std::string, Tensor>& w, const std::map<std::string, Tensor>& g) {
    for (const auto& [name, t] : w) {
      auto it = g.find(name);
      if (it == g.end()) continue;
      const Metrics m = measure(t, it->second, Dtype::F64, 1e-6);
      r.metrics[std::string(kind) + "." + name] =
          m.shape_mismatch ? nlohmann::json{{"shape_mismatch", true}}
                           : nlohmann::json{{"max_abs", m.max_abs}, {"max_rel", m.max_rel}, {"max_abs_small", m.max_abs_small},
                                            {"diff1", m.diff1}, {"diff2", m.diff2}, {"max_ulp", m.max_ulp},
                                            {"nonfinite_mismatch", m.nonfinite_mismatch}, {"worst_index", m.worst_index}};
    }
  };
  add("outputs", want.outputs, got.outputs);
  add("grads", want.grads, got.grads);
}

// A float32 backend against a double one: the per-element error bound of SPEC §9, with
// boundary flips told apart (compare/float_compare.h). A flip is its own verdict, counted
// against the op's flip budget by the campaign (fuzz/campaign_records.h). The case's accuracy
// statistics travel with the verdict (it may be judged in a forked child).
CheckResult float_check(CheckContext& ctx, const Case& c, Backend& oracle, Backend& f) {
  return ctx.judged_apart(
      [&](const compare::Evaluate& eval) {
        const FloatOutcome o = compare_float_backend(oracle, f, c, compare::kDefaultBoundMultiple, eval);
        // A float peer's named divergences (opencv, onnxruntime), proven on their equivalent case.
        // A flip a divergence explains exactly (the peer's own index rule) is that divergence.
        if (o.verdict == Verdict::Disagree || o.verdict == Verdict::BoundaryFlip || (o.verdict == Verdict::Error && !o.crashed))
          if (auto name = compare::float_divergence(oracle, f, c, o.verdict == Verdict::Error, compare::kDefaultBoundMultiple,
                                                    o.verdict == Verdict::BoundaryFlip))
            return CheckResult::explained(Verdict::NamedDivergence, *name);
        compare::AccuracyStats one;
        one.add(c, o);
        CheckResult r;
        switch (o.verdict) {
          case Verdict::Agree: r = CheckResult::pass(); break;
          case Verdict::BoundaryFlip: r = CheckResult::explained(Verdict::BoundaryFlip, one.flip_summary()); break;
          case Verdict::Unsupported: return CheckResult::unsupported(o.detail);
          case Verdict::Skipped: return CheckResult::skip(o.detail);  // a vacuous bound: no evidence
          case Verdict::Disagree: {
            r = CheckResult::fail(o.detail + " (" + f.name() + " vs " + oracle.name() + ", " + dtype_name(f.dtype(c.op)) +
                                  " bound)");
            r.metrics["outputs.output"] = {{"max_abs", o.output_metrics.max_abs}, {"max_rel", o.output_metrics.max_rel},
                                           {"max_ulp", o.output_metrics.max_ulp}, {"worst_bound_ratio", o.worst_ratio}};
            break;
          }
          default: {
            CheckResult e = CheckResult::error(o.detail);
            e.crashed = o.crashed;
            return e;
          }
        }
        r.worst = o.worst_ratio;
        if (one.cases()) r.accuracy = std::move(one);
        return r;
      },
      {&oracle, &f});
}

CheckResult double_check(CheckContext& ctx, const Case& c, Backend& subject, Backend& against) {
  // Divergences are stated for the peer relative to SPEC, whose code is the reference: the
  // peer always plays `other`, whichever side of the comparison the user put it on.
  Backend* oracle = &against;
  Backend* other = &subject;
  if (!divergences_for(against).empty() && divergences_for(subject).empty()) std::swap(oracle, other);

  const Outcome o = compare_on_case(*oracle, *other, c, tolerance_between(subject, against), divergences_for(*other),
                                    ctx.evaluator());
  switch (o.verdict) {
    case Verdict::Agree: {
      CheckResult r = CheckResult::pass();
      r.worst = o.max_rel;
      return r;
    }
    case Verdict::NamedDivergence: return CheckResult::explained(Verdict::NamedDivergence, o.divergence);
    case Verdict::Unsupported: return CheckResult::unsupported(o.detail);
    case Verdict::Disagree: {
      CheckResult r = CheckResult::fail(o.detail + " (" + other->name() + " vs " + oracle->name() + ")");
      const Result* want = ctx.kept(*oracle);
      const Result* got = ctx.kept(*other);
      if (want && got) add_metrics(r, *want, *got);
      return r;
    }
    default: {
      CheckResult r = CheckResult::error(o.detail);
      r.crashed = ctx.crashed();
      return r;
    }
  }
}

CheckResult judge(CheckContext& ctx, const Case& c) {
  Backend& subject = ctx.subject();
  Backend& against = ctx.against();
  // The backend's dtype for this op decides the rule (SPEC §10): anything but float64 is held
  // to the per-element bound with its unit roundoff, on the case rounded to its dtype.
  const bool sf = compare::judged_by_bound(subject, c.op), af = compare::judged_by_bound(against, c.op);
  if (sf || af) return sf ? float_check(ctx, c, against, subject) : float_check(ctx, c, subject, against);
  return double_check(ctx, c, subject, against);
}

CheckResult check(CheckContext& ctx) {
  Backend& subject = ctx.subject();
  Backend& against = ctx.against();
  if (&subject == &against) return CheckResult::skip("the subject is its own oracle");
  const Case& c = ctx.the_case();
  if (compare::judged_by_bound(subject, c.op) && compare::judged_by_bound(against, c.op))
    return CheckResult::skip("two float backends: no double oracle");
  if (c.grad_output && (!subject.computes_grads(c.op) || !against.computes_grads(c.op))) {
    // A backend that declares no backward for this op is sent the case without grad_output
    // and judged on its forward alone.
    Case forward = c;
    forward.grad_output.reset();
    CheckResult f = judge(ctx, forward);
    f.forward_only = true;
    return f;
  }
  CheckResult r = judge(ctx, c);
  if (r.verdict != Verdict::Unsupported || !c.grad_output) return r;
  // A backend without this backward is still held to its forward.
  Case forward = c;
  forward.grad_output.reset();
  CheckResult f = judge(ctx, forward);
  if (f.verdict == Verdict::Unsupported) return r;
  f.forward_only = true;
  return f;
}

// What check() sends the backends before any answer: the case each side is sent (rounded to a
// float backend's dtype; without grad_output where a side has no backward). The in-process
// double ref of a float comparison is not sent anywhere.
void asks(CheckContext& ctx, std::vector<Ask>& out) {
  Backend& subject = ctx.subject();
  Backend& against = ctx.against();
  if (&subject == &against) return;
  const Case& c = ctx.the_case();
  const bool sf = compare::judged_by_bound(subject, c.op), af = compare::judged_by_bound(against, c.op);
  if (sf && af) return;
  Case x = c;
  if (c.grad_output && (!subject.computes_grads(c.op) || !against.computes_grads(c.op))) x.grad_output.reset();
  if (sf) {
    out.push_back({&subject, compare::case_for(subject, x)});
  } else if (af) {
    out.push_back({&against, compare::case_for(against, x)});
  } else {
    out.push_back({&against, x});
    out.push_back({&subject, std::move(x)});
  }
}

}  // namespace

Property differential_property() {
  Property p{"differential", "outputs and gradients against the oracle backend, per-backend tolerance", false, any_op, check};
  p.asks = asks;
  return p;
}

}  // namespace oplab::fuzz
