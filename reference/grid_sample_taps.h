#pragma once
// grid_sample (SPEC §12) seen as taps: every grid position reads a short list of input pixels
// of its batch image, each with a weight and the weight's derivative in the position's raw
// grid values. The reference's forward gathers through the taps, its grad_input scatters
// through the same taps (the exact transpose) and its grad_grid sums the derivatives, so the
// three read alike. The kink finder, the comparison's decisions and the seeded bugs reuse the
// per-axis steps below rather than restate them.
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/case.h"
#include "core/params.h"

namespace oplab::ref {

// Unnormalise a grid value g along an axis of size S: align_corners (g + 1)/2 (S - 1), else
// ((g + 1) S - 1)/2 (PyTorch's order of operations, so edge values land exactly where its do).
double grid_unnormalise(double g, int64_t S, bool align_corners);
// d coordinate / d g: (S - 1)/2 or S/2.
double grid_unnormalise_factor(int64_t S, bool align_corners);

// A coordinate after padding, and its derivative in the unpadded coordinate.
struct Padded {
  double c = 0;
  double dc = 1;
};
// zeros: unchanged. border: clamped to [0, S - 1]. reflection: reflected about [0, S - 1]
// (align_corners) or [-0.5, S - 0.5], then clamped to [0, S - 1]. The clamp's derivative is 0
// at and beyond both ends (the flat side of the kink, as PyTorch takes it); the reflection's is
// +1 or -1 by the parity of the folds (a single pixel with align_corners: 0, constant).
Padded grid_pad(double c, int64_t S, GridPadding pad, bool align_corners);

// Cubic convolution weight (A = -0.75) at distance d, and its derivative in d.
double grid_cubic(double d);
double grid_cubic_slope(double d);

// One pixel a grid position reads: its flat index in the [D, H, W] plane of one channel, its
// weight, and the weight's derivative in the position's grid values (x, y, z).
struct GridTap {
  int64_t index = 0;
  double w = 0;
  std::array<double, 3> dw{};
  // bicubic: the signed distance d of each axis' coordinate from the tap, whose W(d) the weight
  // multiplies (for the comparison's bounds); 0 for the other modes.
  std::array<double, 3> dist{};
};

// Rules a seeded bug may switch (variants/bug_grid_*.cpp); the reference takes the defaults.
struct GridSampleRules {
  // nearest's rounding of the padded coordinate: half to even (nearbyint), SPEC §12.
  double (*round_nearest)(double) = [](double v) { return std::nearbyint(v); };
  // bicubic: pad the unnormalised coordinate before taking its taps, instead of each tap.
  bool bicubic_pad_coordinate = false;
};

// The taps of the grid position whose grid values (x, y[, z]) start at `g`. A non-finite grid
// value gives no tap: the position samples nothing and gets no gradient.
void grid_position_taps(const GridSampleParams& p, const double* g, const GridSampleRules& rules,
                        std::vector<GridTap>& taps);

struct GridSampleGrads {
  Tensor input, grid;
};
Tensor grid_sample_forward(const GridSampleParams& p, const Tensor& input, const Tensor& grid,
                           const GridSampleRules& rules = {});
GridSampleGrads grid_sample_backward(const GridSampleParams& p, const Tensor& input, const Tensor& grid,
                                     const Tensor& grad_output, const GridSampleRules& rules = {});
// The whole case (output, and both gradients when it has grad_output) under `rules`.
Result grid_sample_run(const Case& c, const GridSampleParams& p, const GridSampleRules& rules = {});

}  // namespace oplab::ref
