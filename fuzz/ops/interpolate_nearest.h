#pragma once
// Where nearest's float32 source index matters (SPEC §6): PyTorch computes the scale of
// nearest and nearest-exact in float32 (in/out, or 1/sf) and the product dst * scale
// ((dst + 0.5) * scale) in float32 too; the same formula in double floors differently at a few
// output positions, where the product lands within a float32 rounding of an integer. Those
// axes are rare among small sizes (14 -> 46 is the only nearest one with in <= 16, out <= 64),
// so the interpolate generator draws them from tables found here rather than waiting for them.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/params.h"

namespace oplab::fuzz {

// Source index of output position dst on axis a: float32 as PyTorch (and the reference), or
// the same formula with the scale and the product in double.
int64_t nearest_index_float(const InterpAxis& a, bool exact, int64_t dst);
int64_t nearest_index_double(const InterpAxis& a, bool exact, int64_t dst);
// The first output position where the two differ, or -1.
int64_t nearest_index_disagreement(const InterpAxis& a, bool exact);

// An axis on which the two differ: input and output size, the scale factor when the kernel
// uses one (otherwise in/out), and the first output position that differs.
struct NearestF32Axis {
  int64_t in = 0, out = 0;
  std::optional<double> scale_factor;
  int64_t dst = 0;
};

// Every (in, out) with 2 <= in <= max_in and 1 <= out <= max_out given as `size`, ordered by
// in, then out (the simplest first, so that a pick from it shrinks towards small inputs).
// Neither table has out == in or out == 2*in, where PyTorch takes index shortcuts instead.
std::vector<NearestF32Axis> find_nearest_f32_sizes(bool exact, int64_t max_in, int64_t max_out);
// Every (in, sf) with 2 <= in <= max_in and floor(in*sf) <= max_out, for sf among two-decimal
// numbers up to 16 and fractions p/q with q <= 16 (the factors people write), in the same
// order (then by sf).
std::vector<NearestF32Axis> find_nearest_f32_scale_factors(bool exact, int64_t max_in, int64_t max_out);

// The tables the generator draws from (searched once): in <= 13 (the generator's largest
// extent), out <= 128.
const std::vector<NearestF32Axis>& nearest_f32_sizes(bool exact);
const std::vector<NearestF32Axis>& nearest_f32_scale_factors(bool exact);

}  // namespace oplab::fuzz
