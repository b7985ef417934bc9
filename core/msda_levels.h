#pragma once
// The level inputs of an ms_deform_attn case (SPEC §13) from the levels' sizes: spatial_shapes
// [L, 2] (H, W per level), level_start_index [L] (the first row of each level in value), and S,
// the rows of value the levels span. Every builder of such cases (corpus, bench, tests,
// notebooks) derives them here, so the start index is always the running sum the op requires.
#include <cstdint>
#include <utility>
#include <vector>

#include "core/tensor.h"

namespace oplab {

struct MsdaLevels {
  Tensor spatial_shapes, level_start_index;
  int64_t S = 0;
};

inline MsdaLevels msda_levels(const std::vector<std::pair<int64_t, int64_t>>& hw) {
  const int64_t L = int64_t(hw.size());
  MsdaLevels m{Tensor(Shape{L, 2}), Tensor(Shape{L}), 0};
  for (int64_t l = 0; l < L; ++l) {
    const auto [H, W] = hw[size_t(l)];
    m.spatial_shapes.at(l, 0) = double(H), m.spatial_shapes.at(l, 1) = double(W);
    m.level_start_index.data[size_t(l)] = double(m.S);
    m.S += H * W;
  }
  return m;
}

}  // namespace oplab
