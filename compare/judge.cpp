#include "compare/judge.h"

#include <utility>

#include "compare/accuracy_stats.h"
#include "compare/dtype_case.h"
#include "compare/float_divergence.h"
#include "compare/tolerance.h"
#include "compare/uint8_compare.h"

namespace oplab::compare {

namespace {

// A float side (`f`) against the double side (`oracle`); `f_is_subject` says whose failure is
// whose.
Judgement by_bound(Backend& oracle, Backend& f, bool f_is_subject, const Case& c, const Evaluate& eval) {
  Judgement j;
  j.by_bound = true;
  j.dtype = f.dtype(c.op);
  const FloatOutcome o = compare_float_backend(oracle, f, c, kDefaultBoundMultiple, eval);
  if (o.oracle_failed) {  // the double side could not answer
    if (f_is_subject) {
      j.verdict = Verdict::Skipped;
      j.detail = o.detail;
    } else {
      j.verdict = Verdict::Error;
      j.detail = oracle.name() + " failed: " + o.detail;
    }
    return j;
  }
  if (!f_is_subject && o.verdict == Verdict::Error && !o.crashed) {
    j.verdict = Verdict::Skipped;
    j.detail = "the oracle (" + f.name() + ") failed: " + o.detail;
    return j;
  }
  // A float peer's named divergences (opencv, onnxruntime, torch in float), proven on their
  // equivalent case. A flip a divergence explains exactly (the peer's own index rule) is that
  // divergence.
  if (o.verdict == Verdict::Disagree || o.verdict == Verdict::BoundaryFlip || (o.verdict == Verdict::Error && !o.crashed))
  {
    std::string exhausted;
    if (auto name = float_divergence(oracle, f, c, o.verdict == Verdict::Error, kDefaultBoundMultiple,
                                     o.verdict == Verdict::BoundaryFlip, &exhausted)) {
      // The divergence explains the disagreement, but what is left the dtype cannot judge.
      j.verdict = exhausted.empty() ? Verdict::NamedDivergence : Verdict::PrecisionExhausted;
      j.detail = exhausted.empty() ? *name : *name + " explains the difference; " + exhausted;
      return j;
    }
  }
  j.verdict = o.verdict;
  j.crashed = o.crashed;
  j.worst = o.worst_ratio;
  switch (o.verdict) {
    case Verdict::BoundaryFlip: {
      AccuracyStats one;
      one.add(c, o);
      j.detail = one.flip_summary();
      break;
    }
    case Verdict::Disagree:
      j.detail = o.detail + " (" + f.name() + " vs " + oracle.name() + ", " + dtype_name(j.dtype) + " bound)";
      break;
    default: j.detail = o.detail;
  }
  j.float_outcome = o;
  return j;
}

Judgement by_agreement(Backend& subject, Backend& against, const Case& c, const Evaluate& eval) {
  // Divergences are stated for the peer relative to SPEC, whose code is the reference: the
  // peer always plays `other`, whichever side of the comparison the user put it on.
  Backend* oracle = &against;
  Backend* other = &subject;
  if (!divergences_for(against).empty() && divergences_for(subject).empty()) std::swap(oracle, other);
  const Outcome o =
      compare_on_case(*oracle, *other, case_for(*other, c), tolerance_between(subject, against, c.op), divergences_for(*other), eval);
  Judgement j;
  j.verdict = o.verdict;
  j.worst = o.max_rel;
  j.detail = o.verdict == Verdict::NamedDivergence ? o.divergence : o.detail;
  if (o.verdict == Verdict::Disagree) j.detail += " (" + other->name() + " vs " + oracle->name() + ")";
  if (o.verdict == Verdict::Error) {
    Backend* failed = o.ref_failed ? oracle : other;
    if (failed == &against && failed != &subject) {
      j.verdict = Verdict::Skipped;
      j.detail = "the oracle (" + against.name() + ") failed: " + o.detail;
    }
  }
  return j;
}

}  // namespace

Judgement judge(Backend& subject, Backend& against, const Case& c, const Evaluate& eval) {
  if (&subject == &against) {
    Judgement j;
    j.verdict = Verdict::Skipped;
    j.detail = "the subject is its own oracle";
    return j;
  }
  // 8-bit pixels (SPEC §16): the uint8 rule against the double side.
  if (subject.dtype(c.op) == DType::UInt8) return judge_uint8(subject, against, c, eval);
  if (against.dtype(c.op) == DType::UInt8) {
    Judgement j;
    j.verdict = Verdict::Skipped;
    j.detail = "a uint8 backend is no oracle";
    return j;
  }
  const bool sf = judged_by_bound(subject, c.op), af = judged_by_bound(against, c.op);
  if (sf && af) {
    Judgement j;
    j.verdict = Verdict::Skipped;
    j.detail = "two float backends: no double oracle";
    return j;
  }
  if (sf) return by_bound(against, subject, true, c, eval);
  if (af) return by_bound(subject, against, false, c, eval);
  return by_agreement(subject, against, c, eval);
}

Judgement judge(Backend& subject, Backend& against, const Case& c) {
  return judge(subject, against, c, [](Backend& b, const Case& x) { return evaluate(b, x); });
}

}  // namespace oplab::compare
