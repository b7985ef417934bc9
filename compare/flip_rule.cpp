#include "compare/flip_rule.h"

#include <algorithm>

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

double flip_budget(const std::string& op, const Backend& b) {
  // The op's budget is set for kernels that take their decisions as the reference does
  // (KernelRounding: the Halide kernels); where they flip never (interpolate), it is 0. A
  // backend that rounds its coordinates its own way (NearbyCoordinates: ONNX Runtime's float32
  // Resize, OpenCV's float32 weights) may land on the other side of a cut-off than the double
  // reference on a case whose coordinates sit a rounding away from it; each such flip is still
  // checked to be explained by nearby coordinates, and more than 2% of cases is a finding
  // (measured: onnxruntime interpolate, 1 flip in 226 compared cases of a 300-case campaign).
  const double budget = op_compare(op).flip_budget;
  return flip_rule(b) == FlipRule::NearbyCoordinates ? std::max(budget, 0.02) : budget;
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
