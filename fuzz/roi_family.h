#pragma once
// What the RoI ops (roi_pool, roi_align, deform_roi_pool, ps_roi_align, ps_roi_pool) share in
// the fuzz layer: edge-aimed boxes, the roi rules of SPEC §7, the features of a box's sampling
// grid or rounded bins, and the batch/channel/roi permutation. Each op's own file in fuzz/ops/
// composes its traits from these.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/case.h"
#include "fuzz/gen_values.h"
#include "fuzz/op_fuzz.h"

namespace oplab::fuzz {

struct RoiShape {
  int64_t N, C, H, W, K, PH, PW;
  double scale;
  int64_t Co;  // output channels: C, or C / (PH*PW) for the position-sensitive ops
};

// Sizes, scale and box count. position_sensitive: C is a multiple of PH*PW. wide: the sizes
// that reach the CPU kernels' paths the small ones never do (halide/generators/kernel_widths.h):
// an image 16 pixels wide or more (tiled copies and transposes), more channels than a block
// (16, or 8 output channels of the position-sensitive ops), 16 bins or more a roi; one image
// or two, a box or more.
RoiShape pick_roi_shape(bool position_sensitive = false, bool wide = false);
// Weights for sometimes_redrawn (gen_values.h): one case in 16 redrawn wide.
inline std::vector<int> roi_wide_weights() { return {15, 1}; }
// A case of `op` with edge-aimed boxes (`off`: the op's half-pixel shift, so that boxes
// centred on a border hit it) and a grad_output.
Case roi_case(const std::string& op, const RoiShape& s, double off);
int64_t pick_sampling_ratio();  // fixed grids 1-3 and adaptive (0, -1)

// SPEC §7's roi rules, each broken alone: rois not [K, 5], a bad batch index, a non-finite
// coordinate, spatial_scale <= 0, a bad or missing output_size.
std::vector<Mutation> roi_mutations();

// roi_mutations, and C not a multiple of PH * PW (the position-sensitive ops).
std::vector<Mutation> ps_roi_mutations();

// The sizes every RoI case has, for the feature functions.
struct RoiFrame {
  int64_t N, C, H, W, K, PH, PW;
  double scale;
};
template <class P>
RoiFrame roi_frame(const P& p) {
  return {p.N, p.C, p.H, p.W, p.K, p.PH, p.PW, p.spatial_scale};
}

// Features of a sampled box (roi_align family): reversed, zero-size and outside boxes, grids
// with no samples or on an adaptive jump, and where each sample lands relative to the borders.
// clamp: legacy roi_align's minimum box of one pixel.
void roi_grid_features(const Case& c, const RoiFrame& p, bool aligned, int64_t sampling_ratio, bool clamp,
                       std::set<std::string>& f);
// Features of a rounded box (roi_pool family): round ties, reversed and outside boxes, more
// bins than pixels. plus_one: roi_pool's width xe - xs + 1 (ps_roi_pool: xe - xs).
void roi_rounded_features(const Case& c, const RoiFrame& p, bool plus_one, std::set<std::string>& f);

// Batch, channel and roi permutations. channel_block: the input channels one output channel
// reads (PH*PW for the position-sensitive ops), moved together.
Permuted permute_roi(const Case& c, int64_t channel_block = 1);

// permute_roi for the position-sensitive ops (PsRoiParams): each output channel's PH * PW
// input channels move together.
Permuted permute_ps_roi(const Case& c);

// Where a sampling coordinate lies relative to the borders -1, 0, len-1, len of an axis.
void classify_coord(double v, int64_t len, const char* axis, std::set<std::string>& f);

}  // namespace oplab::fuzz
