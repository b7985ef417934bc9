#pragma once
// Building blocks shared by the per-op generators. Call them inside rc::gen::exec.
#include <rapidcheck.h>

#include "core/tensor.h"

namespace oplab::fuzz {

// A feature-map value: mostly smooth reals in (-2, 2), sometimes small multiples of 1/4
// (exact in binary; they make ties for max modes), sometimes exactly 0. Shrinks to 0.
double pick_value();
// A tensor of `shape` filled with pick_value().
Tensor pick_tensor(const Shape& shape);
// A real in [-mag, mag], shrinking to 0.
double pick_real(double mag);
// One of `edges` (exact), possibly nudged by a hair (1e-9) either way.
double pick_edge(const std::vector<double>& edges);
// A dimension in [lo, hi], shrinking to lo.
int64_t pick_dim(int64_t lo, int64_t hi);
// A coordinate along an axis of length `len` in feature-map units, edge-aimed:
// exactly -1, 0, len-1, len (± a hair), lattice points (quarters), far outside, or smooth.
double pick_coord(int64_t len);

}  // namespace oplab::fuzz
