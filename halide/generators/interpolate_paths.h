#pragma once
// The x-axis paths of the interpolate CPU kernels, chosen by the glue (the `x_path` input)
// and checked by the kernels against their own tap tables (a wrong choice is an error, never
// a wrong result). Shared by generators/interpolate_generator.cpp and glue/interpolate.cpp;
// deliberately free of Halide headers.
namespace oplab_interp {

enum XPath : int {
  kXTables = 0,     // taps read from the per-axis tables: any size, scale or mode (gathers)
  kXUpsample2 = 1,  // nearest/linear/cubic, out = 2 in, taps in closed form (the glue checks they fit)
  kXPool2 = 2,      // area, in = 2 out: bins [2d, 2d+2)
  kXPool4 = 3,      // area, in = 4 out: bins [4d, 4d+4)
};

}  // namespace oplab_interp
