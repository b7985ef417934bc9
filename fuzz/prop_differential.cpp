// differential: the subject against the oracle (`ref` by default), outputs and every
// gradient, with the tolerance of the pair (compare/tolerance.h). A disagreement that one of the
// peer's named divergences explains (proven on its equivalent case, compare/differential.cpp)
// is that divergence's verdict; a float32 subject is held to the per-element bound, its
// boundary flips a verdict of their own. A subject without the case's backward is judged on
// its forward (forward_only); one without the forward is unsupported.
#include <set>

#include "core/metrics.h"
#include "compare/accuracy_stats.h"
#include "compare/dtype_case.h"
#include "compare/float_compare.h"
#include "compare/float_divergence.h"
#include "compare/judge.h"
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

// The verdict is the one judge's (compare/judge.h); this property adds what a campaign record
// needs: the metrics of what differed and a float side's accuracy statistics, which travel
// with the verdict (it may be judged in a forked child).
CheckResult as_check(CheckContext& ctx, const compare::Judgement& j) {
  CheckResult r;
  switch (j.verdict) {
    case Verdict::Agree: r = CheckResult::pass(); break;
    case Verdict::NamedDivergence:
    case Verdict::BoundaryFlip:
    case Verdict::PrecisionExhausted: r = CheckResult::explained(j.verdict, j.detail); break;
    case Verdict::Unsupported: return CheckResult::unsupported(j.detail);
    case Verdict::Skipped: return CheckResult::skip(j.detail);
    case Verdict::Disagree: r = CheckResult::fail(j.detail); break;
    default: {
      CheckResult e = CheckResult::error(j.detail);
      e.crashed = j.crashed || (!j.by_bound && ctx.crashed());
      return e;
    }
  }
  r.worst = j.worst;
  if (j.float_outcome) {
    const FloatOutcome& o = *j.float_outcome;
    if (j.verdict == Verdict::Disagree)
      r.metrics["outputs.output"] = {{"max_abs", o.output_metrics.max_abs}, {"max_rel", o.output_metrics.max_rel},
                                     {"max_ulp", o.output_metrics.max_ulp}, {"worst_bound_ratio", o.worst_ratio}};
    compare::AccuracyStats one;
    one.add(ctx.the_case(), o);
    if (one.cases()) r.accuracy = std::move(one);
  } else if (j.verdict == Verdict::Disagree) {
    const Result* want = ctx.kept(ctx.against());
    const Result* got = ctx.kept(ctx.subject());
    if (want && got) add_metrics(r, *want, *got);
  }
  return r;
}

// The one judge's verdict, with the kernel paths every answer of the subject took (the case
// itself, and any nudged copy the comparison asked), each once.
CheckResult judge_noting_paths(CheckContext& ctx, const Case& c, const Evaluate& eval) {
  Backend& subject = ctx.subject();
  std::set<std::string> paths;
  const Evaluate noting = [&](Backend& b, const Case& x) {
    Result r = eval(b, x);
    if (&b == &subject) paths.insert(r.kernel_paths.begin(), r.kernel_paths.end());
    return r;
  };
  CheckResult r = as_check(ctx, compare::judge(subject, ctx.against(), c, noting));
  r.kernel_paths.assign(paths.begin(), paths.end());
  return r;
}

CheckResult judge(CheckContext& ctx, const Case& c) {
  Backend& subject = ctx.subject();
  Backend& against = ctx.against();
  // A float side's comparison evaluates the reference several times (magnitude and nudged
  // cases): it runs as a whole apart, so that a crash there fails this check only.
  if (compare::judged_by_bound(subject, c.op) || compare::judged_by_bound(against, c.op))
    return ctx.judged_apart([&](const Evaluate& eval) { return judge_noting_paths(ctx, c, eval); }, {&subject, &against});
  return judge_noting_paths(ctx, c, ctx.evaluator());
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
  p.holds_for_uint8 = true;
  p.counts_kernel_paths = true;
  return p;
}

}  // namespace oplab::fuzz
