#pragma once
// Comparison of a backend of dtype float32, float16 or bfloat16 with the double reference, by
// the per-element error bound of SPEC §9 and §15 (docs/spec.md §15 derives it), with discrete
// boundary flips told apart.
//
// Bound of element i:  B_i = 8 * kappa * (A_i + 1e-3 * max_j A_j)
//   A     : the reference evaluated on the magnitude case (feature maps, weights, mask and
//           grad_output replaced by their absolute values; coordinates unchanged), i.e. the sum
//           of |w_k x_k| over the terms of the element (every op's sampling weights are >= 0,
//           except bicubic's: interpolate and grid_sample state the sum of |w_k x_k| itself,
//           OpCompare::magnitude, for the output, grad_input and grid_sample's grad_grid).
//   kappa : u_acc n + u (2C + s): n terms accumulate rounding in the accumulation type
//           (Backend::accumulation), the sampling coordinate of magnitude up to C pixels is off
//           by up to u C in the dtype, which moves a bilinear value by at most 2 u C A, and a
//           kernel that is not held to the kernel-rounding rule stores s = 4 more roundings of
//           each term (weights, result) in its dtype.
//   The 1e-3 floor covers elements whose terms cancel. Offset gradients are differences of
//   neighbouring pixels: their A is the largest of the magnitude case and two cases whose
//   feature maps alternate sign by row / by column, which add the two pixels' magnitudes.
// A backend passes a case when every element is within B_i, or (a kernel forming its geometry
// in its dtype) within B_i plus twice the geometry's slope term, measured by the reference on
// the case as the dtype forms it (FlipSearch in float_compare.cpp).
//
// Boundary flips: where an element still fails, the reference is re-run on alternatives of the
// case that take a discrete decision (a floor, a round, a range cut-off, a max winner, an
// adaptive grid size) the way the backend's rounding may have taken it; if the backend then
// agrees, the element is a flip. Which alternatives count is the backend's flip rule
// (compare/flip_rule.h): for the Halide kernels' precision only the float32-rounded case (with
// the op's kernel rounding); for every other backend the case as its dtype forms it (inputs and
// parameters rounded; the reference with its geometry in that type, core/geometry_rounding.h)
// and that case's coordinates nudged by 4 and 32 ulps of the dtype, boxes also one at a time.
// roi_align max: float32 may also pick another winner among near-tied samples; an element within
// the reference's range over those choices (ref::roi_align_max_grad_range) is a flip as well.
// Flips are counted per decision kind and reported, never as passes, and each op x backend has
// a budget of them (compare/flip_rule.h). A case that passes only under a bound as wide as its
// terms is precision-exhausted (compare/verdict.h).
#include <array>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compare/flip_rule.h"
#include "compare/verdict.h"
#include "core/backend.h"
#include "core/metrics.h"

namespace oplab::compare {

constexpr double kDefaultBoundMultiple = 8.0;

struct FloatOutcome {
  // agree, boundary-flip, DISAGREE, unsupported or ERROR (compare/verdict.h).
  Verdict verdict = Verdict::Agree;
  double worst_ratio = 0;  // max over elements of |e - r| / B_i (of the passing comparison)
  std::string detail;      // the first failing element, or the error text
  bool crashed = false;    // the error is the backend's process dying or hanging (KernelCrash)
  // The forward output, for reports: SPEC §9 metrics (ULP in float32, th = 1e-6) and each
  // element's |e - r| / B_i (NaN where either side is not finite), in the output's layout.
  Metrics output_metrics;
  std::vector<double> output_ratio;
  std::vector<double> output_ulp;  // float32 ULP distance per element (NaN where not finite)
  Shape output_shape;
  // Flipped elements per decision kind (indexed by FlipKind), the rule that admitted them, and
  // the op x backend budget of flipped cases (a fraction of cases, compare/flip_rule.h).
  std::array<int64_t, kFlipKinds> flips{};
  FlipRule rule = FlipRule::KernelRounding;
  double flip_budget = 0;
  // Elements that passed only with the geometry's slope term (SPEC §15 (b)): agreement.
  int64_t slope_passes = 0;
  // The oracle failed or declined the case (verdict Skipped): its outcome, not the backend's.
  bool oracle_failed = false;
};

FloatOutcome compare_float_backend(Backend& ref, Backend& backend, const Case& c,
                                   double multiple = kDefaultBoundMultiple);
// The same, with the backend's one evaluation done by `eval_backend` (the fuzz campaign's
// crash-isolating evaluator: a KernelCrash it throws is an Error outcome marked crashed). The
// reference's evaluations stay in this process.
FloatOutcome compare_float_backend(Backend& ref, Backend& backend, const Case& c, double multiple,
                                   const std::function<Result(Backend&, const Case&)>& eval_backend);

// The magnitude case: every input that is not a coordinate (feature maps, weights, mask,
// bias) and grad_output by their absolute values; `alternate` 1 (2) then flips the sign of
// every other row (column) of the feature map, for the gradients of coordinates.
Case magnitude_case(const Case& c, int alternate = 0);

// The bound B_i above, `multiple` x u (n + 2 C) (A_i + 1e-3 max A), of every element of `want`
// (the reference's result on c), keyed "outputs.NAME" / "grads.NAME"; A from `ref` on the
// magnitude case(s), evaluated through `eval`. With u = 2^-53 it is the rounding a double
// backend may show (the double comparison's rule for terms that cancel, compare/differential.h).
std::map<std::string, Tensor> element_bounds(Backend& ref, const Case& c, const Result& want, double u, double multiple,
                                             const std::function<Result(Backend&, const Case&)>& eval);

// The case as a float32 kernel sees it: every input rounded to float32, then what the op's
// kernels round beyond their inputs (OpCompare::kernel_rounding: deform_conv2d's sampling
// point float(tap) + float(offset), roi_pool's corners x * s in float32). The reference on it
// decides floors and cut-offs the kernel's way (compare_float_backend's flip search uses it).
Case float_rounded_case(const Case& c);

// The case as a kernel that forms its geometry in dtype t sees it (SPEC §15): every floating
// input and every floating parameter (spatial_scale, scale_factor) rounded to t, and for
// float32 the op's kernel rounding too. The flip search of a backend that is not held to the
// kernel-rounding rule starts from it.
Case dtype_formed_case(const Case& c, DType t);

}  // namespace oplab::compare
