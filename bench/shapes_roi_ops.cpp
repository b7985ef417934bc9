// Standard shapes of the RoI ops (DESIGN.md): input [2,256,200,304], 1000 rois (boxes 8-200 px
// on an 800x1216 image), 7x7, spatial_scale 0.25; roi_align with sampling_ratio 2 and
// adaptive, deform_roi_pool with sampling_ratio 2, gamma 0.1 and offsets in [-0.5, 0.5].
#include "bench/shape_builder.h"

namespace oplab::bench {

namespace {

const Uniform kUnit{-1, 1};
const json kCommon{{"output_size", {7, 7}}, {"spatial_scale", 0.25}};

oplab::Shape feature(const ShapeBuilder& b) { return {2, 256 / b.divisor(), 200, 304}; }
int64_t rois(const ShapeBuilder& b) { return 1000 / b.divisor(); }

void roi_pool(ShapeBuilder& b) {
  b.add("roi_pool", "roi_pool", kCommon, {{"input", feature(b), kUnit}}, {{"rois", b.random_rois(rois(b), 2)}});
}

void roi_align(ShapeBuilder& b) {
  const Tensor boxes = b.random_rois(rois(b), 2);
  json ra = kCommon;
  ra["aligned"] = true;
  ra["sampling_ratio"] = 2;
  b.add("roi_align sr2", "roi_align", ra, {{"input", feature(b), kUnit}}, {{"rois", boxes}});
  ra["sampling_ratio"] = 0;
  b.add("roi_align adaptive", "roi_align", ra, {{"input", feature(b), kUnit}}, {{"rois", boxes}});
}

void deform_roi_pool(ShapeBuilder& b) {
  json drp = kCommon;
  drp["sampling_ratio"] = 2;
  drp["gamma"] = 0.1;
  b.add("deform_roi_pool sr2", "deform_roi_pool", drp,
        {{"input", feature(b), kUnit}, {"offset", {rois(b), 2, 7, 7}, Uniform{-0.5, 0.5}}},
        {{"rois", b.random_rois(rois(b), 2)}});
}

const OpBenchShapesRegistrar kRoiPool{"roi_pool", {roi_pool}};
const OpBenchShapesRegistrar kRoiAlign{"roi_align", {roi_align}};
const OpBenchShapesRegistrar kDeformRoiPool{"deform_roi_pool", {deform_roi_pool}};

}  // namespace

}  // namespace oplab::bench
