// Standard shapes of grid_sample: bilinear sampling of [8, 64, 128, 128] at a 128 x 128 grid
// per image (a spatial-transformer or flow-warp layer), zeros and border padding. The grid is
// drawn in [-1.1, 1.1], so that some positions fall outside the image and the padding decides.
// One 5-D shape: a volume sampled trilinearly (the 5-D kernels).
#include "bench/shape_builder.h"

namespace oplab::bench {

namespace {

void shapes(ShapeBuilder& b) {
  const Uniform unit{-1, 1}, grid{-1.1, 1.1};
  const int64_t r = b.divisor(), n8 = 8 / r;
  for (const char* pad : {"zeros", "border"})
    b.add(std::string("grid bilinear ") + pad, "grid_sample",
          json{{"mode", "bilinear"}, {"padding_mode", pad}, {"align_corners", false}},
          {{"input", {n8, 64 / r, 128, 128}, unit}, {"grid", {n8, 128, 128, 2}, grid}});
  // 5-D: trilinear sampling of [2, 16, 32, 64, 64] at a 32 x 64 x 64 grid per volume.
  b.add("grid 5-D trilinear zeros", "grid_sample",
        json{{"mode", "bilinear"}, {"padding_mode", "zeros"}, {"align_corners", false}},
        {{"input", {2, 16 / r, 32, 64, 64}, unit}, {"grid", {2, 32, 64, 64, 3}, grid}});
}

const OpBenchShapesRegistrar kRegistrar{"grid_sample", {shapes}};

}  // namespace

}  // namespace oplab::bench
