#pragma once
// The per-op kink finders (kinks_<op>.cpp). kinks.cpp binds them to op names.
#include "gradcheck/kinks.h"

namespace oplab::gradcheck {

OpKinks deform_conv2d_kinks();
OpKinks roi_pool_kinks();
OpKinks roi_align_kinks();
OpKinks deform_roi_pool_kinks();
OpKinks interpolate_kinks();

// The finder of an op that is affine in every differentiable input: no kinks anywhere.
OpKinks affine_kinks();

// Kink sources shared by several finders.

// A sampling coordinate `value` along an axis of length `size`, moving with the inputs as
// `grad` says, under deform_conv2d's zero-padded rule: the piece changes at every integer
// from -1 (cut-off) to size (cut-off).
KinkSource zero_padded_axis(double value, int64_t size, std::vector<std::pair<int64_t, double>> grad, bool is_y);
// The same under the RoIAlign rule (SPEC §4): jumps at -1 and size, clamps at 0 and size-1,
// floor switches between.
KinkSource roi_rule_axis(double value, int64_t size, std::vector<std::pair<int64_t, double>> grad, bool is_y);
// The gap v_b - v_w <= 0 between a max competitor and the winner: the winner changes where
// it reaches 0 (lo = hi = 0).
KinkSource max_gap(double gap, std::vector<std::pair<int64_t, double>> grad, const char* label);

}  // namespace oplab::gradcheck
