// ps_roi_align and ps_roi_pool in the comparison layer (compare/op_compare.h): boxes are
// their coordinates; ps_roi_align averages a grid of four-corner samples, ps_roi_pool the
// pixels of a rounded bin. Both kernels form boxes, bins and samples in double from the
// float32 rois with the reference's operations (halide/generators/ps_roi_*), so neither has a
// kernel rounding of its own.
#include <algorithm>
#include <cmath>

#include "compare/op_compare.h"
#include "core/params.h"
#include "reference/roi_geometry.h"

namespace oplab::compare {

namespace {

void nudge_boxes(Case& c, double ra, double rb, double end_sign) { nudge_rois(c, ra, rb, end_sign); }

double ps_roi_align_terms(const Case& c) { return roi_grid_terms(c, parse_ps_roi_align(c).sampling_ratio, 0); }

// ps_roi_pool: the mean of a bin of up to (ceil(rh / PH) + 1) x (ceil(rw / PW) + 1) pixels of
// the rounded box (one more each way for the rounding of its corners).
double ps_roi_pool_terms(const Case& c) {
  const PsRoiParams p = parse_ps_roi_pool(c);
  const Tensor& rois = c.in("rois");
  double n = 1;
  for (int64_t k = 0; k < rois.dim(0); ++k) {
    const double h = std::max(std::fabs(rois.at(k, 4) - rois.at(k, 2)) * p.spatial_scale + 1, 1.0);
    const double w = std::max(std::fabs(rois.at(k, 3) - rois.at(k, 1)) * p.spatial_scale + 1, 1.0);
    n = std::max(n, (std::ceil(h / double(p.PH)) + 2) * (std::ceil(w / double(p.PW)) + 2));
  }
  return n + 4;
}

// The aligned box's grid, then every sample's range test and floor (reference/ps_roi_align.cpp).
void ps_roi_align_decisions(const Case& c, Decisions& d) {
  const PsRoiParams p = parse_ps_roi_align(c);
  const Tensor& rois = c.in("rois");
  for (int64_t k = 0; k < p.K; ++k) {
    const ref::RoiBox b = ref::roi_box(rois, k, p.spatial_scale, ref::kAlignedBox, p.PH, p.PW, p.sampling_ratio);
    d.add(FlipKind::AdaptiveGrid, b.gh);
    d.add(FlipKind::AdaptiveGrid, b.gw);
    for (int64_t ph = 0; ph < p.PH; ++ph) roi_axis_decisions(d, ref::roi_bin_start(b.sy, ph, b.bin_h), b.bin_h, b.gh, p.H);
    for (int64_t pw = 0; pw < p.PW; ++pw) roi_axis_decisions(d, ref::roi_bin_start(b.sx, pw, b.bin_w), b.bin_w, b.gw, p.W);
  }
}

// An index clamped into [0, hi], NaN to 0 (reference/ps_roi_pool.cpp).
int64_t clamp_index(double v, int64_t hi) {
  if (!(v >= 0.0)) v = 0.0;
  return int64_t(std::min(v, double(hi)));
}

// The rounded corners (saturated: far-away corners decide nothing different), then each bin's
// bounds clamped into [0, size - 1] (reference/ps_roi_pool.cpp: no +1 on the extent).
void ps_roi_pool_axis(Decisions& d, double a, double b, int64_t pooled, int64_t size) {
  const double start = std::round(a), end = std::round(b);
  for (double v : {start, end}) d.add(FlipKind::Round, v == v ? int64_t(std::clamp(v, -0x1p62, 0x1p62)) : INT64_MIN);
  double extent = end - start;
  if (!(extent >= 1.0)) extent = 1.0;
  const double bin = extent / double(pooled);
  for (int64_t q = 0; q < pooled; ++q) {
    d.add(FlipKind::BinBound, clamp_index(std::floor(double(q) * bin) + start, size - 1));
    d.add(FlipKind::BinBound, clamp_index(std::ceil(double(q + 1) * bin) + start, size - 1));
  }
}

void ps_roi_pool_decisions(const Case& c, Decisions& d) {
  const PsRoiParams p = parse_ps_roi_pool(c);
  const Tensor& rois = c.in("rois");
  const double s = p.spatial_scale;
  for (int64_t k = 0; k < p.K; ++k) {
    ps_roi_pool_axis(d, rois.at(k, 2) * s, rois.at(k, 4) * s, p.PH, p.H);
    ps_roi_pool_axis(d, rois.at(k, 1) * s, rois.at(k, 3) * s, p.PW, p.W);
  }
}

// Flip budgets (fractions of cases, README "Accuracy of the float32 kernels"): as the other
// RoI ops (compare/ops/roi_ops.cpp), a flip needs a box corner that is not a float32 and whose
// rounding crosses a decision. Measured on halide-cpu over seeds 1-8 of 500 cases: at most
// 3.6% for ps_roi_align (grids, cut-offs), 2.4% for ps_roi_pool (corners); each budget is that
// plus about half again.
constexpr double kPsRoiAlignBudget = 0.06;
constexpr double kPsRoiPoolBudget = 0.04;

const OpCompareRegistrar kPsRoiAlign{"ps_roi_align",
                                     {ps_roi_align_terms, nudge_boxes, nullptr, nullptr, longest_box_side,
                                      ps_roi_align_decisions, FlipKind::InputRounding, kPsRoiAlignBudget, nullptr, nullptr,
                                   scale_boxes_in}};
const OpCompareRegistrar kPsRoiPool{"ps_roi_pool",
                                    {ps_roi_pool_terms, nudge_boxes, nullptr, nullptr, longest_box_side,
                                     ps_roi_pool_decisions, FlipKind::InputRounding, kPsRoiPoolBudget, nullptr, nullptr,
                                   scale_boxes_in}};

}  // namespace

}  // namespace oplab::compare
