#pragma once
// The one judge (SPEC §15): "this case, this subject, this oracle -> judgement". The
// differential property of `fuzz` and `campaign`, `oplab compare` and `oplab replay` all ask
// it, so one case gets one verdict whichever verb asks.
//
// Which rule applies follows what each side declares for the op (Backend::dtype):
//   * a side in float32, float16 or bfloat16 is held to the per-element bound of its dtype
//     against the double side (compare/float_compare.h), its boundary flips counted apart, and
//     its named divergences proven on their equivalent case (compare/float_divergence.h);
//   * two double sides are held to double agreement, the terms' rounding bound where sums
//     cancel, and the peer's named divergences (compare/differential.h);
//   * two float sides have no double oracle between them: skipped.
// A side that fails or declines a case it should answer: when it is the oracle, that is the
// oracle's outcome (skipped, the reason given), never a failure of the subject.
#include <optional>
#include <string>

#include "compare/differential.h"
#include "compare/float_compare.h"
#include "compare/verdict.h"
#include "core/backend.h"

namespace oplab::compare {

struct Judgement {
  Verdict verdict = Verdict::Agree;
  // DISAGREE / ERROR: what differed first or the error, with the pair and the rule; skipped /
  // unsupported / precision-exhausted: why; named-divergence: the divergence's name(s);
  // boundary-flip: the flipped decision kinds against the budget.
  std::string detail;
  bool crashed = false;     // the error is a process dying or hanging (KernelCrash)
  double worst = 0;         // agreeing: the worst error (relative, or error / bound)
  bool by_bound = false;    // judged by the per-element bound of a float side
  DType dtype = DType::Float64;  // the float side's dtype (by_bound), for messages
  // by_bound: the float comparison itself (metrics, flips, ratios) for accuracy statistics.
  std::optional<FloatOutcome> float_outcome;
};

// `subject` judged against `against` on `c` (both sides evaluated through `eval`).
Judgement judge(Backend& subject, Backend& against, const Case& c, const Evaluate& eval);
Judgement judge(Backend& subject, Backend& against, const Case& c);

}  // namespace oplab::compare
