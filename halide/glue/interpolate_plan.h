#pragma once
// What the interpolate glue (interpolate.cpp) hands the CPU forward kernels besides the
// tensors: the closed-form path of each kernel axis (x = W, y = H, z = D; interpolate_paths.h).
// Exposed so that tests can see which path a case takes.
#include <array>

#include "core/params.h"

namespace oplab::halide_glue {

std::array<int, 3> interpolate_forward_paths(const InterpParams& p);

}  // namespace oplab::halide_glue
