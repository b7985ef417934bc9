#pragma once
// The properties a campaign checks, each generic over ops and backends. A property judges one
// case on one backend (the "subject"), with another backend as its oracle (the "against",
// `ref` unless asked otherwise) where it needs one:
//
//   differential          subject against the oracle, outputs and every gradient (named
//                         divergences of the peer are not failures)
//   rejects               an invalid case (fuzz/gen_invalid.cpp) is refused by both with the
//                         same one-line error
//   linearity             f(a x1 + b x2) = a f(x1) + b f(x2) in the feature input (ops linear
//                         in it), and every gradient linear in grad_output (all ops)
//   adjoint               <J x, y> = <x, J^T y>: the backward is the transpose of the forward
//   permutation           batch, channel (and roi) permutations commute with the op
//   dcn-zero-offset-conv  deform_conv2d with zero offsets and mask 1 is a plain convolution
//                         (fuzz/conv2d_direct.h, written independently)
//   drp-zero-offset-roialign   deform_roi_pool with zero offset is aligned roi_align (avg)
//   interp-same-size-identity  interpolate to the input's own size is the identity
//                         (align_corners=True for the linear modes)
//   determinism           the case evaluated again gives the same bits (or, for a backend that
//                         declares itself nondeterministic, answers within its bound)
//
// The metamorphic ones need no peer: they hold a backend to identities of the op itself.
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <rapidcheck.h>

#include "core/backend.h"
#include "compare/accuracy_stats.h"
#include "compare/differential.h"
#include "compare/float_compare.h"
#include "compare/tolerance.h"
#include "compare/verdict.h"
#include "fuzz/isolate.h"

namespace oplab::fuzz {

// The comparison layer's vocabulary, as the properties use it.
using compare::compare_on_case;
using compare::compare_float_backend;
using compare::divergences_for;
using compare::FloatOutcome;
using compare::Evaluate;
using compare::Outcome;
using compare::Tolerance;
using compare::tolerance_between;
using compare::tolerance_for;
using compare::Verdict;

// One property's verdict on one case (compare/verdict.h): the same words `oplab campaign`,
// gradcheck and the reports use.
struct CheckResult {
  Verdict verdict = Verdict::Agree;
  // DISAGREE/ERROR: what differed first or the error; skipped/unsupported: why;
  // named-divergence: the divergence's name; boundary-flip: the flipped decision kinds.
  std::string detail;
  bool crashed = false;          // a kernel crashed or hung (fuzz/isolate.h caught it)
  nlohmann::json metrics = nlohmann::json::object();  // SPEC §9 metrics of each tensor that differed
  // For the campaign's record of op x backend (the differential property; 0 / null elsewhere):
  double worst = 0;              // agreeing: the worst error (relative, or error / float32 bound)
  bool forward_only = false;     // the backend has no backward here: judged on the forward alone
  // float32 subject: this case's accuracy statistics (an object, not JSON: made and merged
  // once a case, JSON's build and parse cost more than the comparison itself)
  std::optional<compare::AccuracyStats> accuracy;
  // The kernel paths the subject took on this case (Result::kernel_paths), each once: the
  // properties that count paths (Property::counts_kernel_paths) fill it.
  std::vector<std::string> kernel_paths;

  static CheckResult pass() { return {}; }
  static CheckResult explained(Verdict v, std::string name) { return with(v, std::move(name)); }
  static CheckResult fail(std::string why) { return with(Verdict::Disagree, std::move(why)); }
  static CheckResult error(std::string why) { return with(Verdict::Error, std::move(why)); }
  static CheckResult skip(std::string why) { return with(Verdict::Skipped, std::move(why)); }
  static CheckResult unsupported(std::string why) { return with(Verdict::Unsupported, std::move(why)); }
  bool failed() const { return compare::is_failure(verdict); }

 private:
  static CheckResult with(Verdict v, std::string detail) {
    CheckResult r;
    r.verdict = v;
    r.detail = std::move(detail);
    return r;
  }
};

// Answers (results or errors) of backends on the cases met while one drawn case is judged,
// keyed by the case's content: a case asked again, by another property or as the same nudged
// case, is answered from here instead of being evaluated, and sent to a worker, again.
class Answers {
 public:
  struct Answer {
    const Backend* backend = nullptr;
    std::string key;  // the case's wire bytes (fuzz/wire.h): equal bytes, equal case
    std::optional<Result> result;
    std::exception_ptr error;
    bool crashed = false;  // the evaluation crashed or hung (error holds the KernelCrash)
  };
  Answer* find(const Backend& b, const std::string& key);
  const Answer* find(const Backend& b, const std::string& key) const;
  Answer& add(Answer a);  // keeps the last kMax: a bound on the memory one case can hold
  static constexpr size_t kMax = 64;

 private:
  std::vector<Answer> list_;  // a handful a case: a linear search is enough
};

// The oracle's answers on one drawn case, shared by the contexts of every subject: each
// subject's checks ask it the same case (and the same invalid case), and its answer does not
// depend on who asks, so it is evaluated once per case instead of once per subject.
class SharedAnswers {
 public:
  explicit SharedAnswers(const Backend& b) : backend_(&b) {}
  const Backend* backend() const { return backend_; }
  Answers& answers() { return answers_; }

 private:
  const Backend* backend_;
  Answers answers_;
};

// What a check may use while judging one case.
class CheckContext {
 public:
  // `shared`, when given, holds the answers of its backend (the oracle) across the contexts of
  // one drawn case; it must outlive this context.
  CheckContext(const Case& c, Backend& subject, Backend& against, const Isolation& iso,
               SharedAnswers* shared = nullptr);

  const Case& the_case() const { return case_; }
  Backend& subject() const { return subject_; }
  Backend& against() const { return against_; }

  // Evaluates `c` on `b`, isolated. Results (and errors) are kept per backend by the content
  // of the case asked (Answers), so the properties of one case share one evaluation of each
  // case they ask, the unmodified one above all; the oracle's, across subjects too.
  Result eval(Backend& b, const Case& c);
  // Evaluates `c` on `b` again, isolated, past the kept answers (and keeping none), right after
  // an evaluation of `between` in the same process (its worker; under a child per evaluation,
  // one child runs both): the determinism property's second answer.
  Result eval_again(Backend& b, const Case& c, const Case& between);
  Evaluate evaluator();
  // The kept result of the unmodified case on `b`, if it was evaluated and succeeded; valid until
  // the next evaluation (a new answer may evict an old one).
  const Result* kept(const Backend& b) const;

  // eval, with what a backend may legitimately answer turned into a verdict: Unsupported and
  // an error that one of the subject's named divergences predicts are a skip; a crash, a hang
  // or any other error is a failure. nullopt and *verdict set in those cases.
  std::optional<Result> try_eval(Backend& b, const Case& c, CheckResult* verdict);

  // Compares with `tol`; on a mismatch sets *verdict to a failure naming `what` (the first
  // mismatch wins) and records the tensor's metrics. Returns whether it matched.
  bool expect_close(const std::string& what, const Tensor& want, const Tensor& got, const Tolerance& tol,
                    CheckResult* verdict);
  // As expect_close, for want = a*t1 + b*t2, with the floor taken from |a*t1| + |b*t2| so that
  // a combination that cancels is still judged against the size of its terms.
  bool expect_combination(const std::string& what, double a, const Tensor& t1, double b, const Tensor& t2,
                          const Tensor& got, const Tolerance& tol, CheckResult* verdict);

  bool crashed() const { return crashed_; }  // some evaluation of this context crashed or hung

  // The answers `b`'s evaluations are kept in: the shared ones for the shared backend. A batch
  // evaluated ahead of the checks (fuzz/prefetch.h) adds its answers here.
  Answers& answers_of(const Backend& b);
  const Isolation& isolation() const { return iso_; }

  // Runs a whole judgement that evaluates backends itself (the float32 comparison of
  // compare/float_compare.h) so that a crash or a hang there is a failure of this check, not
  // the end of the campaign. Under IsolationMode::PerCase, with every backend it involves
  // in-process, the judgement runs in a forked child and `judge` is handed core's evaluate;
  // otherwise it runs here and is handed the isolating evaluator (each backend in its worker).
  CheckResult judged_apart(const std::function<CheckResult(const Evaluate&)>& judge,
                           const std::vector<const Backend*>& involved);

 private:
  const Case& case_;
  Backend& subject_;
  Backend& against_;
  Isolation iso_;
  SharedAnswers* shared_;
  Answers own_;
  bool crashed_ = false;
};

// An evaluation a check is going to ask: `c` on `backend`.
struct Ask {
  Backend* backend = nullptr;
  Case c;
};

struct Property {
  std::string name;
  std::string description;
  bool invalid_cases = false;  // judges invalid cases (gen_invalid_case) instead of valid ones
  bool (*applies)(const std::string& op) = nullptr;
  CheckResult (*check)(CheckContext& ctx) = nullptr;
  // Holds for a kernel of 8-bit pixels too (SPEC §16). The algebraic and metamorphic
  // identities do not: such a kernel rounds and clips every pixel (run_check skips them).
  bool holds_for_uint8 = false;
  // The evaluations `check` asks on the context's case as far as they are known before it runs
  // (those that depend on an answer, e.g. a divergence's equivalent case, are left out). They
  // are evaluated ahead, one batch per backend (fuzz/prefetch.h); the check then finds them
  // kept. Only a speed-up: a case listed wrongly is evaluated for nothing, one left out when
  // asked. Null: nothing listed.
  void (*asks)(CheckContext& ctx, std::vector<Ask>& out) = nullptr;
  // Its verdicts carry the kernel paths the subject took (CheckResult::kernel_paths), and its
  // campaign record counts them against the subject's Backend::kernel_paths. One property
  // that judges every case of every backend does: the differential one.
  bool counts_kernel_paths = false;
};

const std::vector<Property>& all_properties();
const Property* find_property(const std::string& name);  // nullptr when unknown
// The generator a property draws its cases of `op` from.
rc::Gen<Case> property_gen(const Property& p, const std::string& op);

// The name of a named divergence of `b` that touches `c` (its equivalent case or its error
// applies), if any: the metamorphic properties skip such cases, since the divergence (already
// recorded by the differential property) breaks the identity they hold the backend to.
std::optional<std::string> divergence_touching(const Backend& b, const Case& c);

// Why the algebraic properties (linearity, adjoint) give no evidence on the context's case, if
// they do not: no grad_output, non-finite values (IEEE NaN/Inf break the algebra), or a named
// divergence of the subject touching it. The skip verdict, or nullopt when they apply.
std::optional<CheckResult> algebra_skip(const CheckContext& ctx);

// Runs p.check, turning an unexpected exception of the check itself into a failure (so a
// campaign never dies on one case). Interrupted passes through.
CheckResult run_check(const Property& p, CheckContext& ctx);

// The properties themselves (one file each).
Property differential_property();
Property rejects_property();
Property linearity_property();
Property adjoint_property();
Property permutation_property();
Property dcn_zero_offset_conv_property();
Property drp_zero_offset_roialign_property();
Property interp_same_size_identity_property();
Property determinism_property();

}  // namespace oplab::fuzz
