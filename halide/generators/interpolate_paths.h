#pragma once
// The closed-form paths of the interpolate CPU kernels, chosen by the glue per axis (the
// `x_path` input; area's forward also takes kXPool2/kXPool4 along y through `y_path`) and
// checked by the kernels against their own tap tables (a wrong choice is an error, never a
// wrong result). Shared by generators/interpolate_generator.cpp and glue/interpolate.cpp;
// deliberately free of Halide headers.
namespace oplab_interp {

enum XPath : int {
  kXTables = 0,     // taps read from the per-axis tables: any size, scale or mode (gathers)
  kXUpsample2 = 1,  // nearest/linear/cubic, out = 2 in, taps in closed form (the glue checks they fit)
  kXPool2 = 2,      // area, in = 2 out: bins [2d, 2d+2)
  kXPool4 = 3,      // area, in = 4 out: bins [4d, 4d+4)
  // linear/cubic forward along x, out = 2 in, align_corners=false with a kernel scale of
  // exactly 1/2: the taps of kXUpsample2 and fixed weights too (linear 1/4, 3/4; cubic
  // W(7/4), W(3/4), W(1/4), W(5/4) and the mirror), so the x pass loads no weights
  // (the kernels check them against the tables)
  kXUpsample2Half = 4,
};

// The reach (the most outputs that read one input) for which the backward kernels run their
// closed form along x (interpolate_axis.h): the usual one of that form; at other reaches (a
// short axis, whose clamped border reads one input more or fewer times) the same path runs with
// run-time bounds.
constexpr int kClosedReachNearest = 2;
constexpr int kClosedReachLinear = 5;
constexpr int kClosedReachCubic = 8;
constexpr int kClosedReachArea = 1;

}  // namespace oplab_interp
