#pragma once
// What a separable 8-bit resize that runs as two passes may add to its output's error, in pixel
// steps (Backend::uint8_error, SPEC §16): the first pass's pixels rounded to integers (half a
// step) and clipped to 0..255 (by as much as that pass overshoots), both times the second pass's
// largest sum of |weights|; and each pass's weights in fixed point with `frac_bits` fractional
// bits (within 2^-(frac_bits+1) each, doubled for the sum's own rounding), times pixels of at
// most 255. A resize that changes one axis only runs one pass: its weights alone.
#include <cstdint>
#include <utility>
#include <vector>

#include "core/case.h"

namespace oplab {

using AxisWeights = std::vector<std::vector<std::pair<int64_t, double>>>;  // [output] -> (input, weight)

// What such a resize states (Backend::uint8_error and uint8_clipping): the rounding part, and
// the clipping of the first pass's pixels (its overshoot times the second pass's |w| sum).
struct Uint8Error {
  double rounding = 0, clipping = 0;
};

// `rows` and `cols`: the taps of H and W; `input` [N, C, H, W]; the first pass is along W
// (`w_first`) or along H.
Uint8Error two_pass_uint8_error(const AxisWeights& rows, const AxisWeights& cols, const Tensor& input, bool w_first,
                                int frac_bits);

}  // namespace oplab
