#pragma once
// roi_align (avg) with one of its rules changed, for the seeded-bug variants that reproduce
// published RoIAlign bugs (bug_roialign_*.cpp, bug_bilinear_neg_band.cpp). Everything is the
// reference's own machinery (reference/roi_bilinear.h: the bilinear rule, its scatter, the
// adaptive grid); only the rule a bug got wrong is switched.
#include "core/case.h"
#include "core/params.h"

namespace oplab::variants {

struct RoiAlignRules {
  // count = gh * gw without max(., 1): an empty adaptive grid divides 0 by 0 (NaN).
  bool count_without_max = false;
  // The backward clamps the roi size to >= 1 when aligned (and not when legacy): the forward
  // keeps the right rule.
  bool clamp_inverted_in_backward = false;
  // The sampler treats y < 0 as outside the image (0, no gradient) instead of y < -1.
  bool y_below_zero_is_outside = false;
};

// roi_align avg forward, and backward when the case has grad_output, under `rules`.
// Max mode is evaluated by the reference unchanged.
Result roi_align_with_rules(const Case& c, const RoiAlignParams& p, const RoiAlignRules& rules);

}  // namespace oplab::variants
