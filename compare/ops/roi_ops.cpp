// The RoI ops in the comparison layer (compare/op_compare.h): their boxes are coordinates;
// the sampled ops (roi_align, deform_roi_pool) sum a grid of four-corner
// samples, roi_pool takes a max.
//
// What their kernels round (halide/glue, halide/generators): roi_align and deform_roi_pool form
// boxes, grids and sample positions in double from the float32 rois (and offsets), with the
// reference's operations, so the reference on the float32-rounded case takes every decision
// theirs. roi_pool scales the corners in float32, x * s with s rounded to float32, as
// torchvision's float kernel does: its kernel rounding below. Its bins are floor / ceil of
// p * (extent / pooled) in float32 too; for pooled sizes up to 6 those equal the reference's
// double bounds for every extent up to 2e6 (checked exhaustively), and the generators draw at
// most 4, so no emulation is needed there (at 7 or 11 the last bin's end can differ by one).
#include <algorithm>
#include <cmath>

#include "compare/op_compare.h"
#include "core/params.h"
#include "reference/reference.h"
#include "reference/roi_geometry.h"

namespace oplab::compare {

namespace {

void nudge_boxes(Case& c, double ra, double rb, double end_sign) { nudge_rois(c, ra, rb, end_sign); }
void nudge_boxes_and_offset(Case& c, double ra, double rb, double end_sign) {
  nudge_rois(c, ra, rb, end_sign);
  nudge_offset(c, ra, rb);
}

// A rounded coordinate as a decision: saturated, so that a corner far outside cannot make the
// conversion undefined (it decides nothing different from any other far-away value).
int64_t as_decision(double v) {
  if (!(v == v)) return INT64_MIN;
  return int64_t(std::clamp(v, -0x1p62, 0x1p62));
}

// ---- roi_pool

// roi_pool: a max, no arithmetic beyond the conversion to float.
double roi_pool_terms(const Case&) { return 2; }

// The kernels' corners: float(x) * float(s) rounded to float32, then C round. Stored as the
// scaled corners with spatial_scale 1, so that the reference rounds exactly the kernels'
// products (a product on n + 0.5 rounds the same way on both sides; one the double product
// puts just off it, but float32 onto it, is decided the kernels' way).
void roi_pool_kernel_rounding(Case& f) {
  const float s = float(f.params.value("spatial_scale", 1.0));
  Tensor& rois = f.inputs.at("rois");
  for (int64_t k = 0; k < rois.dim(0); ++k)
    for (int j = 1; j < 5; ++j) rois.at(k, j) = double(float(rois.at(k, j)) * s);
  f.params["spatial_scale"] = 1.0;
}

// The reference's decisions (reference/roi_pool.cpp): the rounded corners, then each bin's
// bounds clamped to [0, size].
void roi_pool_axis(Decisions& d, double a, double b, int64_t pooled, int64_t size) {
  const double start = std::round(a), end = std::round(b);
  d.add(FlipKind::Round, as_decision(start));
  d.add(FlipKind::Round, as_decision(end));
  const double bin = std::max(end - start + 1.0, 1.0) / double(pooled);
  for (int64_t p = 0; p < pooled; ++p) {
    // Clamped as the reference clamps; NaN (corners beyond double's range) to 0.
    for (double v : {std::floor(double(p) * bin) + start, std::ceil(double(p + 1) * bin) + start})
      d.add(FlipKind::BinBound, v >= 0.0 ? int64_t(std::min(v, double(size))) : 0);
  }
}

void roi_pool_decisions(const Case& c, Decisions& d) {
  const RoiPoolParams p = parse_roi_pool(c);
  const Tensor& rois = c.in("rois");
  const double s = p.spatial_scale;
  for (int64_t k = 0; k < p.K; ++k) {
    roi_pool_axis(d, rois.at(k, 2) * s, rois.at(k, 4) * s, p.PH, p.H);
    roi_pool_axis(d, rois.at(k, 1) * s, rois.at(k, 3) * s, p.PW, p.W);
  }
}

// ---- roi_align

double roi_align_terms(const Case& c) { return roi_grid_terms(c, parse_roi_align(c).sampling_ratio, 0); }

// roi_align max: float32 may pick another winner among near-tied samples.
bool roi_align_ties(const Case& c, double tolerance, Tensor& lo, Tensor& hi) {
  const RoiAlignParams p = parse_roi_align(c);
  if (p.mode != PoolMode::Max || !c.grad_output) return false;
  ref::roi_align_max_grad_range(p, c.in("input"), c.in("rois"), *c.grad_output, tolerance, lo, hi);
  return true;
}

// The grid of every box, then every sample's range test and floor (reference/roi_align.cpp):
// samples are separable, y from (roi, ph, iy), x from (roi, pw, ix).
void roi_align_decisions(const Case& c, Decisions& d) {
  const RoiAlignParams p = parse_roi_align(c);
  const Tensor& rois = c.in("rois");
  for (int64_t k = 0; k < p.K; ++k) {
    const ref::RoiBox b =
        ref::roi_box(rois, k, p.spatial_scale, p.aligned ? ref::kAlignedBox : ref::kLegacyBox, p.PH, p.PW, p.sampling_ratio);
    d.add(FlipKind::AdaptiveGrid, b.gh);
    d.add(FlipKind::AdaptiveGrid, b.gw);
    for (int64_t ph = 0; ph < p.PH; ++ph) roi_axis_decisions(d, ref::roi_bin_start(b.sy, ph, b.bin_h), b.bin_h, b.gh, p.H);
    for (int64_t pw = 0; pw < p.PW; ++pw) roi_axis_decisions(d, ref::roi_bin_start(b.sx, pw, b.bin_w), b.bin_w, b.gw, p.W);
  }
}

// ---- deform_roi_pool

double deform_roi_pool_terms(const Case& c) { return roi_grid_terms(c, parse_deform_roi_pool(c).sampling_ratio, 0); }

// As roi_align, with every bin translated by its offset (reference/deform_roi_pool.cpp: channel
// 0 moves x by gamma * rw, channel 1 moves y by gamma * rh), so samples are per bin.
void deform_roi_pool_decisions(const Case& c, Decisions& d) {
  const DeformRoiPoolParams p = parse_deform_roi_pool(c);
  const Tensor& rois = c.in("rois");
  const Tensor* offset = p.has_offset ? &c.in("offset") : nullptr;
  for (int64_t k = 0; k < p.K; ++k) {
    const ref::RoiBox b = ref::roi_box(rois, k, p.spatial_scale, ref::kAlignedBox, p.PH, p.PW, p.sampling_ratio);
    d.add(FlipKind::AdaptiveGrid, b.gh);
    d.add(FlipKind::AdaptiveGrid, b.gw);
    for (int64_t ph = 0; ph < p.PH; ++ph)
      for (int64_t pw = 0; pw < p.PW; ++pw) {
        double sy = b.sy, sx = b.sx;
        if (offset) {
          sx += p.gamma * b.rw * offset->at(k, 0, ph, pw);
          sy += p.gamma * b.rh * offset->at(k, 1, ph, pw);
        }
        roi_axis_decisions(d, ref::roi_bin_start(sy, ph, b.bin_h), b.bin_h, b.gh, p.H);
        roi_axis_decisions(d, ref::roi_bin_start(sx, pw, b.bin_w), b.bin_w, b.gw, p.W);
      }
  }
}

// Flip budgets (fractions of cases; README "Accuracy of the float32 kernels"). The kernels
// decide like the reference on their float32 inputs, so a flip needs a coordinate that is not
// a float32 and whose rounding crosses a decision: the generators aim corners and samples at
// the decisions (n + 0.5, -1, 0, H-1, H, a whole grid) and push some a hair (1e-9) off them,
// which float32 rounds back on. Measured on halide-cpu over seeds 1-8 of 500 cases, the
// flipped fraction is at most 5.4% for roi_pool (corners), 3.0% for roi_align and 3.2% for
// deform_roi_pool (grids and cut-offs); each budget is that plus about half again, so that
// another seed stays within it and a bug that doubles them does not.
constexpr double kRoiPoolBudget = 0.08;
constexpr double kRoiAlignBudget = 0.06;
constexpr double kDeformRoiPoolBudget = 0.06;

const OpCompareRegistrar kRoiPool{"roi_pool",
                                  {roi_pool_terms, nudge_boxes, roi_pool_kernel_rounding, nullptr, longest_box_side,
                                   roi_pool_decisions, FlipKind::MaxWinnerTie, kRoiPoolBudget, nullptr, nullptr,
                                   scale_boxes_in}};
const OpCompareRegistrar kRoiAlign{"roi_align",
                                   {roi_align_terms, nudge_boxes, nullptr, roi_align_ties, longest_box_side,
                                    roi_align_decisions, FlipKind::MaxWinnerTie, kRoiAlignBudget, nullptr, nullptr,
                                   scale_boxes_in}};
const OpCompareRegistrar kDeformRoiPool{"deform_roi_pool",
                                        {deform_roi_pool_terms, nudge_boxes_and_offset, nullptr, nullptr, longest_box_side,
                                         deform_roi_pool_decisions, FlipKind::InputRounding, kDeformRoiPoolBudget, nullptr, nullptr,
                                   scale_boxes_in}};
}  // namespace

}  // namespace oplab::compare
