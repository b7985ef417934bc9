#pragma once
// What the comparison layer knows of one op, to judge a float32 backend by the per-element
// bound of SPEC §9 and to tell a boundary flip from a wrong answer (compare/float_compare.h).
// Each op registers it from its own file in compare/ops/; the comparison asks through
// op_compare(op) and never tests an op's name.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend.h"
#include "core/case.h"
#include "core/op_traits.h"

namespace oplab::compare {

// The kinds of discrete decision float32 may take the other way (SPEC §9), upstream first: a
// flip is named after the first kind whose decisions differ between the case and the
// alternative that explained it (a different rounded corner moves every bin and sample after
// it, so the corner is the cause).
enum class FlipKind {
  Round,          // a rounded box corner (roi_pool, ps_roi_pool)
  AdaptiveGrid,   // ceil(extent / pooled): the number of samples of a bin
  BinBound,       // floor / ceil of an integer bin's bounds
  RangeCutoff,    // a sample inside or outside the image
  Floor,          // the pixel a sample's interpolation starts from
  NearestIndex,   // interpolate's nearest source index
  MaxWinnerTie,   // another winner among near-tied maxima
  InputRounding,  // no listed decision moved: the float32 rounding of the inputs explains it
};
constexpr size_t kFlipKinds = 8;
const char* flip_kind_name(FlipKind k);  // "round", "adaptive grid", ..., "input rounding"

// An op's discrete decisions on one case, per kind, each a list of integers in a fixed order:
// two cases took the same decisions of a kind exactly when their lists are equal.
struct Decisions {
  std::array<std::vector<int64_t>, kFlipKinds> of;
  void add(FlipKind k, int64_t v) { of[size_t(k)].push_back(v); }
};

// The parameter that drives float32 error in a case, for plots of error against it.
struct DrivingParameter {
  std::string name;
  double value = 0;
};

struct OpCompare {
  static constexpr const char* kLayer = "compare";
  // Terms accumulated into one output element (the n of gamma_n), from the op's parameters.
  double (*forward_terms)(const Case&) = nullptr;
  // Moves the case's coordinates by a relative `ra` on one axis and `rb` on the other, a box's
  // end corner by `end_sign` times as much as its start (so boxes grow and shrink too), and
  // any float32-rounded parameter (a scale factor) by `ra`: the flip check's nudges.
  void (*nudge)(Case&, double ra, double rb, double end_sign) = nullptr;
  // Optional: what the kernels round beyond their inputs, applied to the float32-rounded case
  // so that the reference on it takes every float32 decision the kernels' way (deform_conv2d
  // forms each sampling point as float(tap) + float(offset); roi_pool scales its corners in
  // float32). Under the kernel-rounding rule (compare/flip_rule.h) this is the only thing,
  // besides the rounding of the inputs, that may explain a flip.
  void (*kernel_rounding)(Case&) = nullptr;
  // Optional: per element of grad_input, the range the choice among near-tied max winners
  // allows (`tolerance` relative); false when the case has no such choice.
  bool (*tie_range)(const Case&, double tolerance, Tensor& lo, Tensor& hi) = nullptr;
  DrivingParameter (*driving)(const Case&) = nullptr;
  // The op's discrete decisions on a case, as the reference takes them (what names a flip).
  void (*decisions)(const Case&, Decisions&) = nullptr;
  // The kind of a flip that moved none of the listed decisions: a max winner among values
  // float32 rounding made equal (MaxWinnerTie), or nothing discrete (InputRounding).
  FlipKind value_flip = FlipKind::InputRounding;
  // The most boundary flips a backend that follows the Halide kernels' precision may show,
  // as a fraction of cases (compare/flip_rule.h; each op's file says why its number).
  double flip_budget = 0;
  // Optional, for an op whose coordinate gradient is a difference of neighbouring pixels of a
  // feature map that is not "input" [.., H, W]: flips the sign of every other row (alternate 1)
  // or column (2) of that map in the magnitude case (compare/float_compare.cpp says why).
  void (*alternate_signs)(Case&, int alternate) = nullptr;
  // Optional, for an op whose sampling weights take either sign (bicubic's outer taps): the
  // reference on the magnitude case keeps the signed weights, so its Σ w_k |x_k| can cancel
  // far below the Σ |w_k x_k| that float32 rounds. Replaces, in `mag` (the reference's result
  // on the magnitude case), each tensor it can state exactly by that sum. `partials`: the
  // kernel evaluates its weights' polynomials in the bound's own type, so each weight counts
  // with its partial results (compare/ops/cubic_partials.h); false for a kernel that forms them in
  // double and rounds each once (the Halide kernels under the kernel-rounding rule).
  void (*magnitude)(const Case&, Result& mag, bool partials) = nullptr;
  // Optional: what a kernel forming its geometry in dtype t rounds of the case before any
  // sample (the RoI ops: the box corners x * spatial_scale), applied to the case as t forms it
  // (dtype_formed_case, compare/float_compare.h).
  void (*dtype_geometry)(Case&, DType t) = nullptr;
};
using OpCompareRegistrar = OpTraits<OpCompare>::Registrar;
inline const OpCompare& op_compare(const std::string& op) { return OpTraits<OpCompare>::of(op); }

// Shared pieces of the ops' traits (compare/nudge.cpp).
double nudged(double v, double r);  // v (1 + r), and r itself at 0
// A normalised coordinate (grid_sample's grid in [-1, 1], ms_deform_attn's locations in
// [0, 1]) nudged by r (|v| + 1): a kernel forms its pixel coordinate as (v + 1) * size / 2 or
// v * size - 0.5, whose rounding is relative to the pixel coordinate, not to v (v near 0 reads
// the middle of the map, where a relative nudge of v moves nothing).
double nudged_normalised(double v, double r);
// rois: x columns 1, 3 by ra, y columns 2, 4 by rb; columns 3, 4 (the end corner) by end_sign.
void nudge_rois(Case& c, double ra, double rb, double end_sign);
// offset: even and odd channels (the two axes, in either op's order) by rb and ra.
void nudge_offset(Case& c, double ra, double rb);
// The RoI ops' corners as a kernel of dtype t scales them: x * spatial_scale rounded to t once;
// the case then carries the scaled corners with spatial_scale 1, which the reference reads as
// the same boxes (OpCompare::dtype_geometry).
void scale_boxes_in(Case& c, DType t);
// The RoI ops' driving parameter: the longest box side in feature-map pixels.
DrivingParameter longest_box_side(const Case& c);
// The decisions of one axis of RoIAlign samples (reference/roi_bilinear.h): the range test
// [-1, size] and the floor of the clamped coordinate, for the g samples of a bin starting at
// `bin_start` (reference/roi_geometry.h). Of a larger grid only the first `kMaxLoggedGrid`
// samples are logged: the grid's size, a decision of its own, still tells it apart.
constexpr int64_t kMaxLoggedGrid = 4096;
void roi_axis_decisions(Decisions& d, double bin_start, double bin, int64_t g, int64_t size);
// The RoI ops' sampled grid: the largest number of samples per bin, from sampling_ratio or
// the adaptive extent (plus one, for float32's ceil), with a minimum box of `min_extent`.
double roi_grid_terms(const Case& c, int64_t sampling_ratio, double min_extent);

}  // namespace oplab::compare
