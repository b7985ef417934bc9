#include "gradcheck/runner.h"

#include <optional>

#include "core/op_desc.h"
#include "compare/differential.h"
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
    r.verdict = verdict::kFail;
    r.error = kInf;
    r.detail = std::string("threw: ") + e.what();
    out.push_back(r);
  }
}

bool numeric_method(const std::string& m) {
  return m == "fd-projection" || m == "fd-jacobian" || m == "adjoint" || m == "one-sided";
}

// Failures of the numeric checks of one case, re-judged: a float32 backend on a case with a
// boundary flip (eval.h) is "explained"; a backend whose disagreement with the
// reference on this case is a proven named divergence (compare/differential.h) has its
// forward/backward pair inconsistent by that divergence, not by a bug of its own.
void rejudge(const CheckContext& ctx, Backend& ref, const Case& c, const std::vector<Divergence>& known,
             std::vector<CheckRecord>& recs, size_t from) {
  bool any = false;
  for (size_t i = from; i < recs.size(); ++i) any |= recs[i].failed() && numeric_method(recs[i].method);
  if (!any) return;
  const bool fragile = ctx.precision == Precision::F32 && boundary_flip(ref, *ctx.backend, c);
  std::string divergence;
  if (!known.empty()) {
    const compare::Outcome o = compare::compare_on_case(ref, *ctx.backend, c, compare::Tolerance{}, known);
    if (o.verdict == compare::Verdict::NamedDivergence) divergence = o.divergence;
  }
  for (size_t i = from; i < recs.size(); ++i) {
    CheckRecord& r = recs[i];
    if (!r.failed() || !numeric_method(r.method)) continue;
    if (fragile) {
      r.verdict = verdict::kExplained;
      r.detail += " (float32 decision near its boundary)";
    } else if (!divergence.empty()) {
      r.verdict = verdict::kDivergence;
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
    try {
      got = evaluate(backend, c);
    } catch (const Unsupported& e) {
      CheckRecord r = ctx.record(c, "*", "support");
      r.verdict = verdict::kUnsupported;
      r.detail = e.what();
      out.push_back(r);
      continue;
    } catch (const std::exception& e) {
      CheckRecord r = ctx.record(c, "*", "support");
      r.verdict = verdict::kFail;
      r.error = kInf;
      r.detail = std::string("evaluation threw: ") + e.what();
      for (const Divergence& d : known)
        if (d.peer_raises && d.peer_raises(c)) {  // a known defect of the backend, named
          r.verdict = verdict::kDivergence;
          r.detail = d.name + ": " + r.detail;
        }
      out.push_back(r);
      continue;
    }
    ctx.precision = precision_of(backend);
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
      r.verdict = verdict::kSkipped;
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

// The fuzz generators draw empty tensors (N = 0, K = 0) about one case in eight: right for
// fuzzing, but a finite difference has nothing to say about them. Keep one empty case in ten
// (the structural checks still see them) and fill the rest with cases that have data, from
// the same deterministic sample drawn longer.
std::vector<Case> gradcheck_cases(const std::string& op, int n, uint64_t seed) {
  const int empty_quota = n / 10;
  std::vector<Case> pool = fuzz::sample_cases(op, 2 * n, seed), picked;
  int empties = 0;
  for (Case& c : pool) {
    if (int(picked.size()) == n) break;
    if (has_empty_tensor(c)) {
      if (empties >= empty_quota) continue;
      ++empties;
    }
    picked.push_back(std::move(c));
  }
  return picked;
}

}  // namespace

std::vector<CheckRecord> check_op(Backend& backend, Backend& ref, const std::string& op, int n_cases,
                                  const Options& opt, const std::vector<Divergence>& known) {
  return check_cases(backend, ref, gradcheck_cases(op, n_cases, opt.seed), opt, known);
}

}  // namespace oplab::gradcheck
