#pragma once
// The one vocabulary every check speaks: the comparison layer, the fuzz properties, the
// campaign, gradcheck, the notebooks and the reports all count the same verdicts under the same
// names, so a number in a report means the same thing whichever check produced it.
//
//   agree             within the tolerance (double) or the per-element bound (float32)
//   named-divergence  differs, and one of the backend's named divergences predicts exactly how
//                     (proven on the divergence's equivalent case, compare/differential.h)
//   boundary-flip     a float32 backend took a discrete decision (floor, round, cut-off, max
//                     winner) the other way, within the rounding its flip rule allows
//                     (compare/flip_rule.h); counted against a budget, never as agreement
//   unsupported       the backend declined the case (no such kernel, dtype, mode)
//   skipped           the check does not apply or gives no evidence (the reason is given); also
//                     when the oracle failed or declined the case (the oracle's outcome, never
//                     the subject's)
//   precision-exhausted  the backend's declared precision cannot answer this case meaningfully:
//                     its bound admits an error as large as the terms (SPEC §15). Neither
//                     agreement nor a finding; reported with its smallest case
//   DISAGREE          a finding: the results differ beyond anything that explains them
//   ERROR             a finding: the backend errored, crashed or hung where it should have run
#include <optional>
#include <ostream>
#include <string>

namespace oplab::compare {

enum class Verdict { Agree, NamedDivergence, BoundaryFlip, Unsupported, Skipped, Disagree, Error, PrecisionExhausted };
inline constexpr int kVerdicts = 8;

const char* verdict_name(Verdict v);
std::optional<Verdict> verdict_from_name(const std::string& name);
inline std::ostream& operator<<(std::ostream& os, Verdict v) { return os << verdict_name(v); }

// DISAGREE and ERROR: what makes a check fail and a campaign exit non-zero.
inline bool is_failure(Verdict v) { return v == Verdict::Disagree || v == Verdict::Error; }
// A difference explained by name (a divergence) or by rounding (a flip): not a failure, not
// agreement either, and always counted apart.
inline bool is_explained(Verdict v) { return v == Verdict::NamedDivergence || v == Verdict::BoundaryFlip; }

}  // namespace oplab::compare
