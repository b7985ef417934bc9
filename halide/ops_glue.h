#pragma once
// One function per op: evaluate a validated case on the Halide kernels of `device`.
#include "core/case.h"
#include "halide/halide_backend.h"

namespace oplab::halide_glue {

Result roi_align(const Case& c, HalideDevice device);

}  // namespace oplab::halide_glue
