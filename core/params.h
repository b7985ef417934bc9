#pragma once
// Typed, validated parameters of each op, derived from a Case by parse_* (core/ops/*.cpp).
// Every parse_* enforces SPEC §7 for its op and throws InvalidCase with a one-line message
// before any backend does work. Derived sizes (groups, output size) live here so that every
// backend reads them from one place.
#include <optional>
#include <vector>

#include "core/case.h"

namespace oplab {

struct DeformConvParams {
  int64_t N = 0, C = 0, H = 0, W = 0;  // input
  int64_t Co = 0, kh = 0, kw = 0;      // weight [Co, C/G, kh, kw]
  int64_t G = 1;                       // weight groups  = C / weight.shape[1]
  int64_t D = 1;                       // offset groups  = offset.shape[1] / (2 kh kw)
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t Ho = 0, Wo = 0;
  bool has_mask = false, has_bias = false;
  Shape output_shape() const { return {N, Co, Ho, Wo}; }
};

struct RoiPoolParams {
  int64_t N = 0, C = 0, H = 0, W = 0, K = 0;
  int64_t PH = 0, PW = 0;
  double spatial_scale = 1.0;
  Shape output_shape() const { return {K, C, PH, PW}; }
};

enum class PoolMode { Avg, Max };

struct RoiAlignParams {
  int64_t N = 0, C = 0, H = 0, W = 0, K = 0;
  int64_t PH = 0, PW = 0;
  double spatial_scale = 1.0;
  int64_t sampling_ratio = -1;  // > 0 fixed grid, <= 0 adaptive
  bool aligned = false;
  PoolMode mode = PoolMode::Avg;
  Shape output_shape() const { return {K, C, PH, PW}; }
};

struct DeformRoiPoolParams {
  int64_t N = 0, C = 0, H = 0, W = 0, K = 0;
  int64_t PH = 0, PW = 0;
  double spatial_scale = 1.0;
  int64_t sampling_ratio = 0;
  double gamma = 0.1;
  bool has_offset = false;
  Shape output_shape() const { return {K, C, PH, PW}; }
};

// ps_roi_align and ps_roi_pool (SPEC §11, R-FCN): input channel c_in = (c*PH + ph)*PW + pw
// feeds output (k, c, ph, pw); Co = C / (PH*PW).
struct PsRoiParams {
  int64_t N = 0, C = 0, H = 0, W = 0, K = 0;
  int64_t PH = 0, PW = 0;
  int64_t Co = 0;               // C / (PH*PW)
  double spatial_scale = 1.0;
  int64_t sampling_ratio = -1;  // ps_roi_align only: > 0 fixed grid, <= 0 adaptive
  Shape output_shape() const { return {K, Co, PH, PW}; }
  // The one input channel that output channel c at bin (ph, pw) reads.
  int64_t input_channel(int64_t c, int64_t ph, int64_t pw) const { return (c * PH + ph) * PW + pw; }
};

// ms_deform_attn (SPEC §13, Deformable DETR): value [N, S, M, Dh] holds L levels, level l an
// H[l] x W[l] map starting at row start[l] of S; Lq queries sample P points per level and head.
struct MsDeformAttnParams {
  int64_t N = 0, S = 0, M = 0, Dh = 0, Lq = 0, L = 0, P = 0;
  std::vector<int64_t> H, W, start;  // per level, from spatial_shapes and level_start_index
  Shape output_shape() const { return {N, Lq, M * Dh}; }
};

// grid_sample (SPEC §12, torch.nn.functional.grid_sample): input [N, C, (D,) H, W] read at the
// positions of grid [N, (Do,) Ho, Wo, 2 or 3], whose last axis is (x, y[, z]) in [-1, 1].
enum class GridMode { Bilinear, Nearest, Bicubic };
enum class GridPadding { Zeros, Border, Reflection };
const char* grid_mode_name(GridMode m);
const char* grid_padding_name(GridPadding p);
struct GridSampleParams {
  GridMode mode = GridMode::Bilinear;
  GridPadding padding = GridPadding::Zeros;
  bool align_corners = false;
  int nd = 2;                                  // spatial dims: 2 (4-D input) or 3 (5-D input)
  int64_t N = 0, C = 0, D = 1, H = 0, W = 0;   // input (D = 1 for a 4-D input)
  int64_t Do = 1, Ho = 0, Wo = 0;              // grid's sample lattice (Do = 1 for 4-D)
  Shape output_shape() const { return nd == 2 ? Shape{N, C, Ho, Wo} : Shape{N, C, Do, Ho, Wo}; }
};

enum class InterpMode { Nearest, NearestExact, Linear, Bilinear, Bicubic, Trilinear, Area };
const char* interp_mode_name(InterpMode m);

// One spatial axis of interpolate: sizes and the scale factor the kernel receives.
struct InterpAxis {
  int64_t in = 0, out = 0;
  // The user's scale factor when the kernel uses it (scale_factor given, recompute off);
  // empty when `size` was given or recompute_scale_factor=true (the kernel then uses in/out).
  std::optional<double> scale_factor;
};

struct InterpParams {
  InterpMode mode = InterpMode::Nearest;
  int64_t N = 0, C = 0;
  std::vector<InterpAxis> axes;  // 1, 2 or 3 spatial axes (W; H,W; D,H,W)
  bool align_corners = false;
  // SPEC §16: bilinear and bicubic (2-D, align_corners false) with a filter whose support is
  // scaled by the downscale factor (torch's antialias=True, Pillow's BILINEAR and BICUBIC).
  bool antialias = false;
  Shape output_shape() const {
    Shape s{N, C};
    for (const auto& a : axes) s.push_back(a.out);
    return s;
  }
};

// Scale used by the linear and cubic kernels on one axis (SPEC §6):
// align_corners: (in-1)/(out-1) if out > 1 else 0; else 1/sf when sf is used, else in/out.
double interp_area_scale(const InterpAxis& a, bool align_corners);
// Scale of nearest and nearest-exact, computed in float32 as PyTorch does.
float interp_nearest_scale(const InterpAxis& a);
// The filter support of antialias along one axis, in input pixels: 1 (bilinear) or 2 (bicubic)
// times max(scale, 1), with the scale of interp_area_scale (SPEC §16).
double interp_antialias_support(InterpMode mode, double scale);
// The most taps an antialias output position reads along one axis (for bounds and budgets).
int64_t interp_antialias_max_taps(InterpMode mode, const InterpAxis& a);

DeformConvParams parse_deform_conv2d(const Case& c);
RoiPoolParams parse_roi_pool(const Case& c);
RoiAlignParams parse_roi_align(const Case& c);
DeformRoiPoolParams parse_deform_roi_pool(const Case& c);
InterpParams parse_interpolate(const Case& c);
PsRoiParams parse_ps_roi_align(const Case& c);
PsRoiParams parse_ps_roi_pool(const Case& c);
GridSampleParams parse_grid_sample(const Case& c);
MsDeformAttnParams parse_ms_deform_attn(const Case& c);

}  // namespace oplab
