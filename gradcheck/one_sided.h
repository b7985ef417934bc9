#pragma once
// One-sided derivatives at the kinks, and which side a backend's gradient takes there.
//
// For every element of a non-affine input that sits exactly on a kink (the per-op finders say
// which: y = -1, y = H, a max tie, ...), the reference forward is sampled at 0, ±h, ±2h, ±3h
// along that element, each side with a step small enough to stay inside its own piece. A
// quadratic through the three points of a side gives that side's derivative exactly (the
// pieces are quadratic) and its limit value, so a jump (the RoIAlign rule at -1 and H) is seen
// too. The backend's gradient element is then "right", "left", "both" (the sides agree, or it
// equals both) or "neither"; neither is wrong under any convention and fails the check.
// "right" is the side where the kink's own quantity is larger (the sample coordinate, the gap
// of a max competitor to its winner), whichever way the input moves it. At a max tie the
// first sample in scan order keeps winning, which is the left side of the gap. An element on
// several kinks at once is a "compound" kink: its sides are reported, "neither" does not fail.
#include <vector>

#include "gradcheck/context.h"

namespace oplab::gradcheck {

// One record per kink kind met in (case, input); `grad` is the backend's gradient of `input`
// for the case's own grad_output. At most `max_elements` kink elements are examined.
std::vector<CheckRecord> one_sided(const CheckContext& ctx, const Case& c, const std::string& input, const Tensor& grad,
                                   int max_elements);

}  // namespace oplab::gradcheck
