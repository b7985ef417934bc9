#pragma once
// interpolate with antialias on the Halide kernels (generators/interpolate_antialias_generator.cpp):
// the glue of interpolate.cpp hands these the cases whose antialias is true.
#include <functional>

#include "core/case.h"
#include "core/params.h"
#include "halide/halide_backend.h"

namespace oplab::halide_glue {

Result run_interpolate_antialias(const Case& c, const InterpParams& p, HalideDevice device);
std::function<void()> prepare_interpolate_antialias(const Case& c, const InterpParams& p, HalideDevice device, bool backward);

}  // namespace oplab::halide_glue
