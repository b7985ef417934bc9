// ps_roi_align, ps_roi_pool (SPEC §11): parameters and the SPEC §7 checks, plus C being a
// multiple of PH*PW (every output channel reads PH*PW input channels, one per bin).
#include <tuple>

#include "core/op_desc.h"
#include "core/ops/checks.h"
#include "core/params.h"

namespace oplab {

using namespace checks;

namespace {

PsRoiParams parse_ps_common(const Case& c) {
  only_inputs(c, {"input", "rois"}, {});
  const Tensor& x = input_of_rank(c, "input", 4);
  const Tensor& rois = c.in("rois");
  check_rois(c.op, rois, x.dim(0));
  PsRoiParams p;
  p.N = x.dim(0), p.C = x.dim(1), p.H = x.dim(2), p.W = x.dim(3), p.K = rois.dim(0);
  std::tie(p.PH, p.PW) = output_size(c);
  p.spatial_scale = spatial_scale(c);
  check_roi_extent(c.op, rois, p.spatial_scale);
  if (p.PH > kMaxElements / p.PW)
    fail(c.op, "output_size " + std::to_string(p.PH) + "x" + std::to_string(p.PW) + " has more bins than the kernels can index");
  if (p.C % (p.PH * p.PW) != 0)
    fail(c.op, "input channels C=" + std::to_string(p.C) + " must be a multiple of output_size PH*PW=" +
                   std::to_string(p.PH) + "*" + std::to_string(p.PW));
  p.Co = p.C / (p.PH * p.PW);
  return p;
}

}  // namespace

PsRoiParams parse_ps_roi_align(const Case& c) {
  only_params(c, {"output_size", "spatial_scale", "sampling_ratio"});
  PsRoiParams p = parse_ps_common(c);
  p.sampling_ratio = integer(c, "sampling_ratio", -1);
  check_grad_output(c, p.output_shape());
  // Each output channel reads one input channel per bin: Co channels of work, not C.
  enforce_roi_sampling(c, p.output_shape(), p.K, p.Co, p.PH, p.PW,
                       max_roi_grid(c.in("rois"), p.spatial_scale, p.PH, p.PW, p.sampling_ratio, false),
                       p.sampling_ratio);
  return p;
}

PsRoiParams parse_ps_roi_pool(const Case& c) {
  only_params(c, {"output_size", "spatial_scale"});
  PsRoiParams p = parse_ps_common(c);
  check_grad_output(c, p.output_shape());
  enforce_roi_pooling(c, p.output_shape(), p.K, p.Co, p.PH, p.PW,
                      max_pool_bin(c.in("rois"), p.spatial_scale, p.PH, p.PW, p.H, p.W));
  return p;
}

namespace {
const OpRegistrar kPsRoiAlign{"ps_roi_align",
                              {"ps_roi_align", 50, {{"input", true, true}, {"rois", true, false, true, 0}},
                               typed_parser(parse_ps_roi_align)}};
const OpRegistrar kPsRoiPool{"ps_roi_pool",
                             {"ps_roi_pool", 60, {{"input", true, true}, {"rois", true, false, true, 0}},
                              typed_parser(parse_ps_roi_pool)}};
}  // namespace

}  // namespace oplab
