// The RoI ops in the comparison layer (compare/op_compare.h): their boxes are coordinates;
// the sampled ops (roi_align, deform_roi_pool) sum a grid of four-corner
// samples, roi_pool takes a max.
#include <algorithm>
#include <cmath>

#include "compare/op_compare.h"
#include "core/params.h"
#include "reference/reference.h"

namespace oplab::compare {

namespace {

void nudge_boxes(Case& c, double ra, double rb, double end_sign) { nudge_rois(c, ra, rb, end_sign); }
void nudge_boxes_and_offset(Case& c, double ra, double rb, double end_sign) {
  nudge_rois(c, ra, rb, end_sign);
  nudge_offset(c, ra, rb);
}

// roi_pool: a max, no arithmetic beyond the conversion to float.
double roi_pool_terms(const Case&) { return 2; }

double roi_align_terms(const Case& c) { return roi_grid_terms(c, parse_roi_align(c).sampling_ratio, 0); }

// roi_align max: float32 may pick another winner among near-tied samples.
bool roi_align_ties(const Case& c, double tolerance, Tensor& lo, Tensor& hi) {
  const RoiAlignParams p = parse_roi_align(c);
  if (p.mode != PoolMode::Max || !c.grad_output) return false;
  ref::roi_align_max_grad_range(p, c.in("input"), c.in("rois"), *c.grad_output, tolerance, lo, hi);
  return true;
}

double deform_roi_pool_terms(const Case& c) { return roi_grid_terms(c, parse_deform_roi_pool(c).sampling_ratio, 0); }

const OpCompareRegistrar kRoiPool{"roi_pool", {roi_pool_terms, nudge_boxes, nullptr, nullptr, longest_box_side}};
const OpCompareRegistrar kRoiAlign{"roi_align",
                                   {roi_align_terms, nudge_boxes, nullptr, roi_align_ties, longest_box_side}};
const OpCompareRegistrar kDeformRoiPool{
    "deform_roi_pool", {deform_roi_pool_terms, nudge_boxes_and_offset, nullptr, nullptr, longest_box_side}};
}  // namespace

}  // namespace oplab::compare
