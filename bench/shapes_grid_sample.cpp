// Standard shapes of grid_sample: bilinear sampling of [8, 64, 128, 128] at a 128 x 128 grid
// per image (a spatial-transformer or flow-warp layer), zeros and border padding. The grid is
// drawn in [-1.1, 1.1], so that some positions fall outside the image and the padding decides.
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
}

const OpBenchShapesRegistrar kRegistrar{"grid_sample", {shapes}};

}  // namespace

}  // namespace oplab::bench
