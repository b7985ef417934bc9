#pragma once
// What the comparison layer knows of one op, to judge a float32 backend by the per-element
// bound of SPEC §9 and to tell a boundary flip from a wrong answer (compare/float_compare.h).
// Each op registers it from its own file in compare/ops/; the comparison asks through
// op_compare(op) and never tests an op's name.
#include <string>

#include "core/case.h"
#include "core/op_traits.h"

namespace oplab::compare {

// The parameter that drives float32 error in a case, for plots of error against it.
struct DrivingParameter {
  std::string name;
  double value = 0;
};

struct OpCompare {
  static constexpr const char* kLayer = "compare";
  // Terms accumulated into one output element (the n of gamma_n), from the op's parameters.
  double (*forward_terms)(const Case&) = nullptr;
  // Moves the case's coordinates by a relative `ra` on one axis and `rb` on the other, a box's
  // end corner by `end_sign` times as much as its start (so boxes grow and shrink too), and
  // any float32-rounded parameter (a scale factor) by `ra`: the flip check's nudges.
  void (*nudge)(Case&, double ra, double rb, double end_sign) = nullptr;
  // Optional: what the kernel rounds beyond its inputs, applied to the float32-rounded case
  // (deform_conv2d forms each sampling point as float(tap) + float(offset)).
  void (*kernel_rounding)(Case&) = nullptr;
  // Optional: per element of grad_input, the range the choice among near-tied max winners
  // allows (`tolerance` relative); false when the case has no such choice.
  bool (*tie_range)(const Case&, double tolerance, Tensor& lo, Tensor& hi) = nullptr;
  DrivingParameter (*driving)(const Case&) = nullptr;
};
using OpCompareRegistrar = OpTraits<OpCompare>::Registrar;
inline const OpCompare& op_compare(const std::string& op) { return OpTraits<OpCompare>::of(op); }

// Shared pieces of the ops' traits (compare/nudge.cpp).
double nudged(double v, double r);  // v (1 + r), and r itself at 0
// rois: x columns 1, 3 by ra, y columns 2, 4 by rb; columns 3, 4 (the end corner) by end_sign.
void nudge_rois(Case& c, double ra, double rb, double end_sign);
// offset: even and odd channels (the two axes, in either op's order) by rb and ra.
void nudge_offset(Case& c, double ra, double rb);
// The RoI ops' driving parameter: the longest box side in feature-map pixels.
DrivingParameter longest_box_side(const Case& c);
// The RoI ops' sampled grid: the largest number of samples per bin, from sampling_ratio or
// the adaptive extent (plus one, for float32's ceil), with a minimum box of `min_extent`.
double roi_grid_terms(const Case& c, int64_t sampling_ratio, double min_extent);

}  // namespace oplab::compare
