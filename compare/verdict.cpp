#include "compare/verdict.h"

namespace oplab::compare {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Agree: return "agree";
    case Verdict::NamedDivergence: return "named-divergence";
    case Verdict::BoundaryFlip: return "boundary-flip";
    case Verdict::Unsupported: return "unsupported";
    case Verdict::Skipped: return "skipped";
    case Verdict::Disagree: return "DISAGREE";
    case Verdict::Error: return "ERROR";
    case Verdict::PrecisionExhausted: return "precision-exhausted";
  }
  return "?";
}

std::optional<Verdict> verdict_from_name(const std::string& name) {
  for (int i = 0; i < kVerdicts; ++i)
    if (name == verdict_name(Verdict(i))) return Verdict(i);
  return std::nullopt;
}

}  // namespace oplab::compare
