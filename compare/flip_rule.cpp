#include "compare/flip_rule.h"

namespace oplab::compare {

const char* flip_kind_name(FlipKind k) {
  switch (k) {
    case FlipKind::Round: return "round";
    case FlipKind::AdaptiveGrid: return "adaptive grid";
    case FlipKind::BinBound: return "bin bound";
    case FlipKind::RangeCutoff: return "range cut-off";
    case FlipKind::Floor: return "floor";
    case FlipKind::NearestIndex: return "nearest index";
    case FlipKind::MaxWinnerTie: return "max winner tie";
    case FlipKind::InputRounding: return "input rounding";
  }
  return "?";
}

const char* flip_rule_name(FlipRule r) {
  switch (r) {
    case FlipRule::KernelRounding: return "kernel-rounding";
    case FlipRule::NearbyCoordinates: return "nearby-coordinates";
  }
  return "?";
}

FlipRule flip_rule(const Backend& b) {
  return b.is_float32() && b.geometry_as_reference() ? FlipRule::KernelRounding : FlipRule::NearbyCoordinates;
}

double flip_budget(const std::string& op, const Backend&) {
  // One budget per op for now: the only float32 backends follow one precision (flip_rule), and
  // a backend of undeclared precision that flips more than the Halide kernels is worth a look.
  return op_compare(op).flip_budget;
}

namespace {

// The op's decisions, or the error of a registration that lacks them (core/op_traits.h).
const OpCompare& with_decisions(const std::string& op) {
  const OpCompare& t = op_compare(op);
  if (!t.decisions) throw MissingTrait(op + ": its compare traits list no decisions (compare/ops/)");
  return t;
}

}  // namespace

FlipKind flip_kind_between(const Case& c, const Decisions& dc, const Case& alt) {
  const OpCompare& t = with_decisions(c.op);
  Decisions da;
  t.decisions(alt, da);
  for (size_t k = 0; k < kFlipKinds; ++k)
    if (dc.of[k] != da.of[k]) return FlipKind(k);
  return t.value_flip;
}

Decisions decisions_of(const Case& c) {
  Decisions d;
  with_decisions(c.op).decisions(c, d);
  return d;
}

FlipKind flip_kind_between(const Case& c, const Case& alt) { return flip_kind_between(c, decisions_of(c), alt); }

}  // namespace oplab::compare
