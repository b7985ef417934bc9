// roi_pool, roi_align, deform_roi_pool: parameters and the SPEC §7 checks.
#include <cmath>
#include <tuple>

#include "core/echo.h"
#include "core/op_desc.h"
#include "core/ops/checks.h"
#include "core/params.h"

namespace oplab {

using namespace checks;

namespace {

// Fills the sizes common to the three RoI ops from input [N,C,H,W] and rois [K,5].
template <class P>
void parse_common(const Case& c, P& p) {
  const Tensor& x = input_of_rank(c, "input", 4);
  const Tensor& rois = c.in("rois");
  check_rois(c.op, rois, x.dim(0));
  p.N = x.dim(0), p.C = x.dim(1), p.H = x.dim(2), p.W = x.dim(3), p.K = rois.dim(0);
  std::tie(p.PH, p.PW) = output_size(c);
  p.spatial_scale = spatial_scale(c);
  check_roi_extent(c.op, rois, p.spatial_scale);
}

}  // namespace

RoiPoolParams parse_roi_pool(const Case& c) {
  only_params(c, {"output_size", "spatial_scale"});
  only_inputs(c, {"input", "rois"}, {});
  RoiPoolParams p;
  parse_common(c, p);
  check_grad_output(c, p.output_shape());
  enforce_roi_pooling(c, p.output_shape(), p.K, p.C, p.PH, p.PW,
                      max_pool_bin(c.in("rois"), p.spatial_scale, p.PH, p.PW, p.H, p.W));
  return p;
}

RoiAlignParams parse_roi_align(const Case& c) {
  only_params(c, {"output_size", "spatial_scale", "sampling_ratio", "aligned", "pool_mode"});
  only_inputs(c, {"input", "rois"}, {});
  RoiAlignParams p;
  parse_common(c, p);
  p.sampling_ratio = integer(c, "sampling_ratio", -1);
  p.aligned = boolean(c, "aligned", false);
  const std::string mode = text(c, "pool_mode", "avg");
  if (mode == "avg") p.mode = PoolMode::Avg;
  else if (mode == "max") p.mode = PoolMode::Max;
  else fail(c.op, "pool_mode=\"" + echo(mode) + "\" must be \"avg\" or \"max\"");
  check_grad_output(c, p.output_shape());
  enforce_roi_sampling(c, p.output_shape(), p.K, p.C, p.PH, p.PW,
                       max_roi_grid(c.in("rois"), p.spatial_scale, p.PH, p.PW, p.sampling_ratio, !p.aligned),
                       p.sampling_ratio);
  return p;
}

DeformRoiPoolParams parse_deform_roi_pool(const Case& c) {
  only_params(c, {"output_size", "spatial_scale", "sampling_ratio", "gamma"});
  only_inputs(c, {"input", "rois"}, {"offset"});
  DeformRoiPoolParams p;
  parse_common(c, p);
  p.sampling_ratio = integer(c, "sampling_ratio", 0);
  p.gamma = number(c, "gamma", 0.1);
  if (!std::isfinite(p.gamma)) fail(c.op, "gamma=" + num_str(p.gamma) + " must be finite");
  if (const Tensor* off = c.opt("offset")) {
    const Shape want{p.K, 2, p.PH, p.PW};
    if (off->shape != want) fail(c.op, "offset shape " + shape_str(off->shape) + " must be " + shape_str(want));
    p.has_offset = true;
  }
  check_grad_output(c, p.output_shape());
  // The offsets move the bins but do not change the grid (SPEC §5).
  enforce_roi_sampling(c, p.output_shape(), p.K, p.C, p.PH, p.PW,
                       max_roi_grid(c.in("rois"), p.spatial_scale, p.PH, p.PW, p.sampling_ratio, false),
                       p.sampling_ratio);
  return p;
}

namespace {
const OpRegistrar kRoiPool{"roi_pool",
                           {"roi_pool", 10, {{"input", true, true}, {"rois", true, false, true, 0}},
                            typed_parser(parse_roi_pool)}};
const OpRegistrar kRoiAlign{
    "roi_align",
    {"roi_align", 20, {{"input", true, true}, {"rois", true, false, true, 0}},
     typed_parser(parse_roi_align)}};
const OpRegistrar kDeformRoiPool{
    "deform_roi_pool",
    {"deform_roi_pool", 30, {{"input", true, true}, {"rois", true, false, true, 0}, {"offset", false, true, true}},
     typed_parser(parse_deform_roi_pool)}};
}  // namespace

}  // namespace oplab
