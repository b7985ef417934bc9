#pragma once
// Building blocks of the peers' interpolate divergences (SPEC §8): cases on which the
// reference computes what a peer computes when the peer picks other source pixels or other
// weights than SPEC §6.
#include <optional>
#include <utility>
#include <vector>

#include "core/case.h"
#include "core/params.h"

namespace oplab {

// The source index SPEC §6 gives nearest (exact = false) or nearest-exact on one axis.
int64_t spec_nearest_index(const InterpAxis& a, int64_t dst, bool exact);

// A nearest-type peer reading source index src[axis][dst] on each spatial axis of the case:
// the input gathered at those indices, read back by nearest with out == in (the identity).
Case gathered_case(const Case& c, const InterpParams& p, const std::vector<std::vector<int64_t>>& src);

// The params of a 2-D interpolate case on the half-pixel grid (align_corners false or null),
// what cv::resize and Image.resize can be asked; nullopt for any other case.
std::optional<InterpParams> resize_params(const Case& c);

// A peer that takes the output size and never the caller's scale factor (cv::resize,
// Image.resize): the case as if it gave `size`, where some axis' 1/sf is not in/out (nullopt
// where every axis already has the scale in/out).
std::optional<Case> sized_case(const Case& c, const InterpParams& p);

// One axis of a separable linear map: for each output index, its (source index, weight) taps.
using AxisMap = std::vector<std::vector<std::pair<int64_t, double>>>;

// A 2-D peer computing out[y][x] = sum_i sum_j wy_i * wx_j * in[ry_i][cx_j] on every plane:
// the same sum as a deform_conv2d case (depthwise, weight 1; each kernel tap samples one whole
// pixel through its offset and carries the weight as its mask; unused taps sample far outside
// the image, which reads 0). The kernel is as wide as the widest tap list; the input is
// zero-padded at the bottom and right and the convolution strided so that it has exactly the
// output size (a large downscale strides rather than widening the kernel to in - out + 1).
Case separable_map_case(const Case& c, const InterpParams& p, const AxisMap& rows, const AxisMap& cols);

}  // namespace oplab
