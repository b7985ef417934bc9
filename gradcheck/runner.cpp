#include "gradcheck/runner.h"

#include <map>
#include <optional>
#include <set>

#include "core/op_desc.h"
#include "compare/differential.h"
#include "fuzz/features.h"
#include "fuzz/generators.h"
#include "gradcheck/adjoint.h"
#include "gradcheck/aim.h"
#include "gradcheck/context.h"
#include "gradcheck/fd.h"
#include "gradcheck/kinks.h"
#include "gradcheck/one_sided.h"
#include "gradcheck/structure.h"
#include "gradcheck/vs_ref.h"

namespace oplab::gradcheck {

namespace {

// A check that throws is a failed check with the message as its detail, never an abort of
// the whole run.
template <class F>
void guarded(const CheckContext& ctx, const Case& c, const std::string& input, const std::string& method,
             std::vector<CheckRecord>& out, F f) {
  try {
    f();
  } catch (const std::exception& e) {
    CheckRecord r = ctx.record(c, input, method);
    r.verdict = Verdict::Error;
    r.error = kInf;
    r.detail = std::string("threw: ") + e.what();
    out.push_back(r);
  }
}

bool numeric_method(const std::string& m) {
  return m == "fd-projection" || m == "fd-jacobian" || m == "adjoint" || m == "one-sided";
}

// The case's geometry (coordinates, params, shapes) with every value input and the
// grad_output replaced by distinct positive values (no ties, nothing cancels).
Case with_distinct_values(const Case& c) {
  Case v = c;
  auto ramp = [](Tensor& t) {
    const double n = double(t.numel()) + 1.0;
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = 1.0 + double(i + 1) / n;
  };
  for (const InputSpec& in : op_desc(c.op).inputs)
    if (!in.coordinate && v.has(in.name)) ramp(v.inputs.at(in.name));
  if (v.grad_output) ramp(*v.grad_output);
  return v;
}

// Failures of the numeric checks of one case, re-judged: a float32 backend on a case with a
// boundary flip (eval.h) is "explained"; a backend whose disagreement with the
// reference on this case is a proven named divergence (compare/differential.h) has its
// forward/backward pair inconsistent by that divergence, not by a bug of its own.
// Both are looked for on the case, then on its geometry with distinct values: a case whose
// values are all zero (a constant draw) agrees with the reference whatever bins a backend chose,
// while the one-hot directions of the finite differences still see the other bin.
void rejudge(const CheckContext& ctx, Backend& ref, const Case& c, const std::vector<Divergence>& known,
             std::vector<CheckRecord>& recs, size_t from) {
  bool any = false;
  for (size_t i = from; i < recs.size(); ++i) any |= recs[i].failed() && numeric_method(recs[i].method);
  if (!any) return;
  bool fragile = false;
  std::string divergence;
  for (const Case& x : {c, with_distinct_values(c)}) {
    fragile = ctx.precision == Precision::F32 && boundary_flip(ref, *ctx.backend, x);
    if (!known.empty()) {
      const compare::Outcome o = compare::compare_on_case(ref, *ctx.backend, x, compare::Tolerance{}, known);
      if (o.verdict == compare::Verdict::NamedDivergence) divergence = o.divergence;
    }
    if (fragile || !divergence.empty()) break;
  }
  for (size_t i = from; i < recs.size(); ++i) {
    CheckRecord& r = recs[i];
    if (!r.failed() || !numeric_method(r.method)) continue;
    if (fragile) {
      r.verdict = Verdict::BoundaryFlip;
      r.detail += " (float32 decision near its boundary)";
    } else if (!divergence.empty()) {
      r.verdict = Verdict::NamedDivergence;
      r.detail = divergence + ": " + r.detail;
    }
  }
}

// The kink-aimed variant of (case, input): the same checks that care about kinks, on a case
// with elements exactly on them.
void check_aimed(const CheckContext& ctx, const Case& c, const std::string& input, const Options& opt,
                 const std::vector<Divergence>& known, std::vector<CheckRecord>& out) {
  const size_t first = out.size();
  guarded(ctx, c, input, "aim", out, [&] {
    const std::optional<Case> aimed = aim_at_kinks(c, input, opt.seed + uint64_t(ctx.case_index), opt.aim);
    if (!aimed) return;
    const Result got = evaluate(*ctx.backend, *aimed);
    if (ctx.backend != ctx.ref)
      for (auto& r : vs_ref(ctx, *aimed, got, known))
        if (r.input == input || r.input == "*") out.push_back(r);
    out.push_back(fd_projection(ctx, *aimed, input, 0));
    auto it = got.grads.find(input);
    if (opt.one_sided && it != got.grads.end())
      for (auto& r : one_sided(ctx, *aimed, input, it->second, opt.one_sided_max)) out.push_back(r);
    rejudge(ctx, *ctx.ref, *aimed, known, out, first);
  });
  for (size_t i = first; i < out.size(); ++i) {
    out[i].extra["aimed"] = true;
    out[i].detail = "kink-aimed variant: " + out[i].detail;
  }
}

}  // namespace

std::vector<CheckRecord> check_cases(Backend& backend, Backend& ref, const std::vector<Case>& cases,
                                     const Options& opt, const std::vector<Divergence>& known, int64_t first_index) {
  std::vector<CheckRecord> out;
  for (size_t k = 0; k < cases.size(); ++k) {
    const Case& c = cases[k];
    CheckContext ctx;
    ctx.backend = &backend;
    ctx.ref = &ref;
    ctx.seed = opt.seed;
    ctx.case_index = first_index + int64_t(k);
    Result got;
    if (!backend.computes_grads(c.op)) {  // an external backend that declares no backward here
      CheckRecord r = ctx.record(c, "*", "support");
      r.verdict = Verdict::Unsupported;
      r.detail = backend.name() + " declares no backward for " + c.op + " (grads: false)";
      out.push_back(r);
      continue;
    }
    try {
      got = evaluate(backend, c);
    } catch (const Unsupported& e) {
      CheckRecord r = ctx.record(c, "*", "support");
      r.verdict = Verdict::Unsupported;
      r.detail = e.what();
      out.push_back(r);
      continue;
    } catch (const std::exception& e) {
      CheckRecord r = ctx.record(c, "*", "support");
      r.verdict = Verdict::Error;
      r.error = kInf;
      r.detail = std::string("evaluation threw: ") + e.what();
      for (const Divergence& d : known)
        if (d.peer_raises && d.peer_raises(c)) {  // a known defect of the backend, named
          r.verdict = Verdict::NamedDivergence;
          r.detail = d.name + ": " + r.detail;
        }
      out.push_back(r);
      continue;
    }
    ctx.precision = precision_of(backend, c.op);
    ctx.fd_forward = ctx.precision == Precision::F64 ? &backend : &ref;
    const size_t first = out.size();

    guarded(ctx, c, "*", "shapes", out, [&] { out.push_back(check_shapes(ctx, c, got)); });
    guarded(ctx, c, "*", "zero-grad", out, [&] { out.push_back(check_zero_grad(ctx, c)); });
    guarded(ctx, c, "*", "optional-absent", out, [&] {
      for (auto& r : check_optional_absent(ctx, c)) out.push_back(r);
    });
    if (&backend != &ref)
      guarded(ctx, c, "*", "vs-ref", out, [&] {
        for (auto& r : vs_ref(ctx, c, got, known)) out.push_back(r);
      });

    if (!all_finite(c)) {
      CheckRecord r = ctx.record(c, "*", "fd-projection");
      r.verdict = Verdict::Skipped;
      r.detail = "non-finite values in the case: finite differences are meaningless";
      out.push_back(r);
      continue;
    }
    const int64_t n_out = shape_numel(validate_case(c));
    std::optional<std::vector<Result>> rows;  // analytic Jacobian rows, shared by the inputs
    for (const std::string& input : grad_inputs(c)) {
      for (int p = 0; p < opt.projections; ++p)
        guarded(ctx, c, input, "fd-projection", out, [&] { out.push_back(fd_projection(ctx, c, input, p)); });
      if (c.in(input).numel() <= opt.jacobian_max && n_out <= opt.jacobian_max)
        guarded(ctx, c, input, "fd-jacobian", out, [&] {
          if (!rows) rows = analytic_rows(backend, c);
          out.push_back(fd_jacobian(ctx, c, input, &*rows));
        });
      if (op_kinks(c.op).affine(c, input)) {
        guarded(ctx, c, input, "adjoint", out, [&] { out.push_back(adjoint_check(ctx, c, input)); });
      } else if (opt.one_sided) {
        guarded(ctx, c, input, "one-sided", out, [&] {
          auto it = got.grads.find(input);
          if (it == got.grads.end()) return;  // the shapes check has failed already
          for (auto& r : one_sided(ctx, c, input, it->second, opt.one_sided_max)) out.push_back(r);
        });
      }
    }
    guarded(ctx, c, "*", "rejudge", out, [&] { rejudge(ctx, ref, c, known, out, first); });
    for (const std::string& input : grad_inputs(c))
      if (opt.aim > 0 && !op_kinks(c.op).affine(c, input)) check_aimed(ctx, c, input, opt, known, out);
  }
  return out;
}

namespace {

bool has_empty_tensor(const Case& c) {
  for (const auto& [name, t] : c.inputs)
    if (t.numel() == 0) return true;
  return c.grad_output && c.grad_output->numel() == 0;
}

}  // namespace

// The fuzz generators draw empty tensors (N = 0, K = 0) about one case in eight: right for
// fuzzing, but a finite difference has nothing to say about them. Keep one empty case in ten
// (the structural checks still see them).
//
// A plain prefix of the sample is mostly small cases (RapidCheck's size ramps up from 0, so the
// first cases have extents of 1 and outputs of 1) and misses whole modes: 30 cases of
// interpolate had no bicubic case with weights between pixels. So the cases are chosen from a
// longer deterministic sample of the same generator by the edge situations they exercise
// (fuzz::case_features), greedily: in round r, the case that brings the most features seen
// fewer than r times so far, the earliest of the sample on ties; a round ends when no case
// brings any. Round 1 covers every feature the sample reaches, later rounds spread the
// remaining cases over the features instead of over the small sizes. Cases with data are
// chosen first, then the empty ones (for N = 0, K = 0, H = 0 alone), so that the quota is not
// spent on an empty case for a feature a case with data has too.
std::vector<Case> gradcheck_cases(const std::string& op, int n, uint64_t seed) {
  constexpr int kPoolFactor = 8;
  const int empty_quota = n / 10;
  std::vector<Case> pool = fuzz::sample_cases(op, kPoolFactor * n, seed);
  std::vector<std::set<std::string>> features;
  std::vector<bool> empty;
  for (const Case& c : pool) features.push_back(fuzz::case_features(c)), empty.push_back(has_empty_tensor(c));
  std::vector<bool> taken(pool.size(), false);
  std::map<std::string, int> seen;  // feature -> picked cases that have it
  int picked = 0;
  auto take = [&](size_t i) {
    taken[i] = true;
    ++picked;
    for (const std::string& f : features[i]) ++seen[f];
  };
  // Greedy rounds over the cases whose emptiness is `empties`, until `limit` cases are picked.
  auto greedy = [&](bool empties, int limit) {
    for (int round = 1; picked < limit && round <= n; ++round)
      while (picked < limit) {
        size_t best = pool.size();
        int best_gain = 0;
        for (size_t i = 0; i < pool.size(); ++i) {
          if (taken[i] || empty[i] != empties) continue;
          int gain = 0;
          for (const std::string& f : features[i]) gain += seen[f] < round;
          if (gain > best_gain) best = i, best_gain = gain;
        }
        if (best == pool.size()) break;  // nothing new at this round
        take(best);
      }
  };
  greedy(false, n - empty_quota);
  greedy(true, std::min(n, picked + empty_quota));
  // A sample too uniform to fill n by features (a single feature everywhere) is filled in
  // sample order, as before: cases with data, then empty ones within the quota.
  int empties = 0;
  for (size_t i = 0; i < pool.size(); ++i) empties += taken[i] && empty[i];
  for (size_t i = 0; i < pool.size() && picked < n; ++i)
    if (!taken[i] && !empty[i]) take(i);
  for (size_t i = 0; i < pool.size() && picked < n && empties < empty_quota; ++i)
    if (!taken[i] && empty[i]) take(i), ++empties;
  // In sample order: the case numbers of the records follow the seed's sample.
  std::vector<Case> out;
  for (size_t i = 0; i < pool.size(); ++i)
    if (taken[i]) out.push_back(std::move(pool[i]));
  return out;
}

std::vector<CheckRecord> check_op(Backend& backend, Backend& ref, const std::string& op, int n_cases,
                                  const Options& opt, const std::vector<Divergence>& known) {
  return check_cases(backend, ref, gradcheck_cases(op, n_cases, opt.seed), opt, known);
}

}  // namespace oplab::gradcheck
