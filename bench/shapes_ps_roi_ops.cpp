// Standard shapes of the position-sensitive RoI ops (R-FCN's head): input [2, 7*7*21, 50, 76]
// (C = 1029, a ResNet stride-16 map of an 800x1216 image), 300 rois (boxes 8-200 px),
// 7x7 bins, spatial_scale 1/16; ps_roi_align with sampling_ratio 2.
#include "bench/shape_builder.h"

namespace oplab::bench {

namespace {

const Uniform kUnit{-1, 1};

oplab::Shape feature(const ShapeBuilder& b) { return {2, 7 * 7 * 21 / (b.reduced() ? 3 : 1), 50, 76}; }

void ps_roi_align(ShapeBuilder& b) {
  b.add("ps_roi_align sr2", "ps_roi_align",
        json{{"output_size", {7, 7}}, {"spatial_scale", 1.0 / 16}, {"sampling_ratio", 2}},
        {{"input", feature(b), kUnit}}, {{"rois", b.random_rois(300 / b.divisor(), 2)}});
}

void ps_roi_pool(ShapeBuilder& b) {
  b.add("ps_roi_pool", "ps_roi_pool", json{{"output_size", {7, 7}}, {"spatial_scale", 1.0 / 16}},
        {{"input", feature(b), kUnit}}, {{"rois", b.random_rois(300 / b.divisor(), 2)}});
}

const OpBenchShapesRegistrar kPsRoiAlign{"ps_roi_align", {ps_roi_align}};
const OpBenchShapesRegistrar kPsRoiPool{"ps_roi_pool", {ps_roi_pool}};

}  // namespace

}  // namespace oplab::bench
