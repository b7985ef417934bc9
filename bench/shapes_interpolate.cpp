// Standard shapes of interpolate (DESIGN.md): bilinear x2 [8,256,64,64] (both align_corners),
// nearest x2 (same), bicubic x2 [8,128,64,64], trilinear x2 [1,32,32,32,32], area 128->32
// [8,64,128,128]; antialias (SPEC §16) bilinear and bicubic [8,3,512,512] -> 224x224 (the
// classic preprocessing) and x0.5 / x0.25 on a feature map [8,256,64,64].
#include "bench/shape_builder.h"

namespace oplab::bench {

namespace {

void shapes(ShapeBuilder& b) {
  const Uniform unit{-1, 1};
  const int64_t r = b.divisor(), n8 = 8 / r;
  for (bool ac : {false, true})
    b.add(std::string("bilinear x2 align_corners=") + (ac ? "true" : "false"), "interpolate",
          json{{"mode", "bilinear"}, {"scale_factor", 2.0}, {"align_corners", ac}}, {{"input", {n8, 256 / r, 64, 64}, unit}});
  b.add("nearest x2", "interpolate", json{{"mode", "nearest"}, {"scale_factor", 2.0}}, {{"input", {n8, 256 / r, 64, 64}, unit}});
  b.add("bicubic x2", "interpolate", json{{"mode", "bicubic"}, {"scale_factor", 2.0}, {"align_corners", false}},
        {{"input", {n8, 128 / r, 64, 64}, unit}});
  b.add("trilinear x2", "interpolate", json{{"mode", "trilinear"}, {"scale_factor", 2.0}, {"align_corners", false}},
        {{"input", {1, 32 / r, 32, 32, 32}, unit}});
  b.add("area 128->32", "interpolate", json{{"mode", "area"}, {"size", {32, 32}}}, {{"input", {n8, 64, 128, 128}, unit}});
  for (const char* mode : {"bilinear", "bicubic"})
    b.add(std::string("antialias ") + mode + " 512->224", "interpolate",
          json{{"mode", mode}, {"antialias", true}, {"size", {224, 224}}}, {{"input", {n8, 3, 512, 512}, unit}});
  b.add("antialias bilinear x0.5", "interpolate", json{{"mode", "bilinear"}, {"antialias", true}, {"scale_factor", 0.5}},
        {{"input", {n8, 256 / r, 64, 64}, unit}});
  b.add("antialias bicubic x0.25", "interpolate", json{{"mode", "bicubic"}, {"antialias", true}, {"scale_factor", 0.25}},
        {{"input", {n8, 256 / r, 64, 64}, unit}});
}

const OpBenchShapesRegistrar kRegistrar{"interpolate", {shapes}};

}  // namespace

}  // namespace oplab::bench
