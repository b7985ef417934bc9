#pragma once
// Structural checks of a backend's gradients (no numerics): which entries, what shapes, and
// exact zeros for a zero grad_output.
#include <vector>

#include "gradcheck/context.h"

namespace oplab::gradcheck {

// The result has an output of the validated shape and exactly one gradient per
// differentiable input the case supplies (op_desc grad_inputs), each of its input's shape.
CheckRecord check_shapes(const CheckContext& ctx, const Case& c, const Result& got);
// grad_output = 0 gives gradients that are exactly 0 (finite cases: 0 * NaN would not be).
CheckRecord check_zero_grad(const CheckContext& ctx, const Case& c);
// For each optional differentiable input the case supplies: the case without it gives no
// gradient entry for it, and still the right entries and shapes for the others.
std::vector<CheckRecord> check_optional_absent(const CheckContext& ctx, const Case& c);

}  // namespace oplab::gradcheck
