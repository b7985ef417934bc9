// ps_roi_align and ps_roi_pool in the comparison layer (compare/op_compare.h): boxes are
// their coordinates; ps_roi_align averages a grid of four-corner samples, ps_roi_pool the
// pixels of a rounded bin.
#include <algorithm>
#include <cmath>

#include "compare/op_compare.h"
#include "core/params.h"

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

const OpCompareRegistrar kPsRoiAlign{"ps_roi_align",
                                     {ps_roi_align_terms, nudge_boxes, nullptr, nullptr, longest_box_side}};
const OpCompareRegistrar kPsRoiPool{"ps_roi_pool", {ps_roi_pool_terms, nudge_boxes, nullptr, nullptr, longest_box_side}};

}  // namespace

}  // namespace oplab::compare
