#pragma once
// The exact adjoint test for an input the forward is affine in (the feature map of every op
// but the max modes; deform_conv2d's weight, mask and bias): with J x = f(x) - f(0),
// <J x, y> = <x, J^T y> for random x and y, to ~1e-12 relative in double. Unlike finite
// differences this has no step and no truncation: it checks that the backward is the exact
// transpose of the forward, element for element, summed over the whole tensor.
#include "gradcheck/context.h"

namespace oplab::gradcheck {

// Error: |<Jx, y> - <x, J^T y>| / (|Jx| |y| + |x| |J^T y|) (Cauchy-Schwarz scale); tolerance:
// 1e-12 (1e-5 float32) plus the rounding of f, 4 eps Σ|y_j| (|f(x)_j| + |f(0)_j|), on the same
// scale, which matters only when an affine part (a large bias) dominates J x.
CheckRecord adjoint_check(const CheckContext& ctx, const Case& c, const std::string& input);
double adjoint_tolerance(Precision p);

}  // namespace oplab::gradcheck
