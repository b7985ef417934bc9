#pragma once
// A backend's gradients against the reference's, under the project's agreement policies:
//  * a double backend (torchvision, the variants): per gradient tensor, every element within
//    rtol = 1e-10 of the reference relative to |ref| + max|ref| of the tensor (README,
//    "Agreement"); error = the largest such relative difference;
//  * a float32 backend (halide-cpu, -cuda, -opencl): the per-element error bound of SPEC §9 with
//    boundary flips told apart (compare/float_compare.h), over the outputs and every gradient of
//    the case at once; error = the largest |e - r| / bound. A flip is "explained", not a pass.
// A double backend's disagreement that a named divergence reproduces (the reference on the
// divergence's equivalent case matches the backend) is a "named-divergence".
#include <vector>

#include "gradcheck/context.h"
#include "peer/divergences.h"

namespace oplab::gradcheck {

std::vector<CheckRecord> vs_ref(const CheckContext& ctx, const Case& c, const Result& got,
                                const std::vector<Divergence>& known);

}  // namespace oplab::gradcheck
