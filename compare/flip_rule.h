#pragma once
// What may explain a float32 element that fails its bound (a boundary flip, SPEC §9), and how
// many flips a backend may show before that is a finding (README "Accuracy of the float32
// kernels").
//
// A flip is a discrete decision (a rounded corner, a floor, a range cut-off, an adaptive grid,
// a max winner) that float32 took the other way. Which ones a backend can take the other way
// depends on where it rounds: that is the backend's precision, and what each op's kernels
// round beyond their inputs is the op's (OpCompare::kernel_rounding).
#include <string>

#include "compare/op_compare.h"
#include "core/backend.h"

namespace oplab::compare {

enum class FlipRule {
  // The backend forms boxes, bins, grids and sample positions in double from its float32
  // inputs, with the reference's operations, and in float32 only where the op's traits emulate
  // it (the Halide kernels). A sample exactly on a cut-off is then decided exactly as the
  // reference decides it, so only the reference on the float32-rounded case (with the op's
  // kernel rounding) may explain a failing element, besides a tie among max winners.
  KernelRounding,
  // The backend forms its geometry in its own dtype T, as the kernels people ship do (SPEC
  // §15: torchvision's and ONNX Runtime's kernels, a user's kernel over --exec or --plugin):
  // the reference on the case with its inputs and parameters rounded to T (the T-formed case,
  // compare/float_compare.h), and on that case with its coordinates nudged by 4 and 32 T ulps
  // (each axis either way, boxes growing and shrinking), may explain it; the 4-ulp ones that
  // move no decision measure the geometry's slope term instead. Generous, since a real border
  // bug looks like a nudge: what keeps it honest is the budget and the seeded precision bugs
  // it must still catch (variants/bug_*precision*).
  NearbyCoordinates,
};
const char* flip_rule_name(FlipRule r);  // "kernel-rounding", "nearby-coordinates"

// The rule for a backend, from what it declares (Backend::geometry_as_reference): the Halide
// kernels and the seeded bugs that mimic them follow the reference's geometry; anything else
// compared by the float32 bound (test doubles, a kernel a user brings) is of undeclared
// precision.
FlipRule flip_rule(const Backend& b);

// The most flips a backend may show on an op, as a fraction of the cases compared: the op's
// stated budget (OpCompare::flip_budget, its reason next to it).
double flip_budget(const std::string& op, const Backend& b);

// The op's discrete decisions on a case (OpCompare::decisions; MissingTrait without them).
Decisions decisions_of(const Case& c);

// Which kind of decision differs between case `c` and an alternative `alt` of it (the first
// in FlipKind's order); the op's value_flip when none of the listed decisions does. `dc` is
// decisions_of(c), when the caller has it.
FlipKind flip_kind_between(const Case& c, const Case& alt);
FlipKind flip_kind_between(const Case& c, const Decisions& dc, const Case& alt);

}  // namespace oplab::compare
