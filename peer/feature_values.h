#pragma once
// Tests on a case's feature map that the peers' declines share: the peers differ from the spec
// only where a value is NaN or infinite (docs/divergences.md, "Findings"), so they decline
// exactly those cases, not every case of the op.
#include <algorithm>
#include <cmath>

#include "core/tensor.h"

namespace oplab {

inline bool any_non_finite(const Tensor& t) {
  return std::any_of(t.data.begin(), t.data.end(), [](double v) { return !std::isfinite(v); });
}

// NaN or -Inf: what a max pool whose running best starts at -FLT_MAX, or that compares with
// a plain `>`, answers otherwise than docs/semantics.md's max (the first non-NaN element
// wins; -Inf is a value).
inline bool any_nan_or_minus_inf(const Tensor& t) {
  return std::any_of(t.data.begin(), t.data.end(), [](double v) { return std::isnan(v) || v == -INFINITY; });
}

// A non-finite pixel at (h, w) = (0, 0) of any plane of an NCHW map: the pixel a sampler that
// parks its out-of-range samples there (index 0, weight 0) multiplies by 0.
inline bool corner_pixel_non_finite(const Tensor& x) {
  if (x.rank() != 4 || x.dim(2) == 0 || x.dim(3) == 0) return false;
  const int64_t plane = x.dim(2) * x.dim(3);
  for (int64_t p = 0; p < x.dim(0) * x.dim(1); ++p)
    if (!std::isfinite(x.data[size_t(p * plane)])) return true;
  return false;
}

}  // namespace oplab
