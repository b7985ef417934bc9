// Standard shapes of deform_conv2d (DESIGN.md): mask, 3x3, padding 1, offsets in [-2, 2];
// N1 C64 56x56, N8 C64 56x56, N4 C128 64x64. Its forward is bound by arithmetic: flops set.
#include <algorithm>

#include "bench/shape_builder.h"

namespace oplab::bench {

namespace {

void shapes(ShapeBuilder& b) {
  const json dcn{{"stride", {1, 1}}, {"padding", {1, 1}}, {"dilation", {1, 1}}};
  const Uniform unit{-1, 1}, offsets{-2, 2}, mask{0, 1};
  for (auto [n, c, hw] : {std::tuple<int64_t, int64_t, int64_t>{1, 64, 56}, {8, 64, 56}, {4, 128, 64}}) {
    if (b.reduced()) n = std::max<int64_t>(1, n / b.divisor()), c = c / 2;
    b.add("deform_conv2d N" + std::to_string(n) + " C" + std::to_string(c) + " " + std::to_string(hw) + "x" +
              std::to_string(hw),
          "deform_conv2d", dcn,
          {{"input", {n, c, hw, hw}, unit},
           {"offset", {n, 18, hw, hw}, offsets},
           {"mask", {n, 9, hw, hw}, mask},
           {"weight", {c, c, 3, 3}, unit},
           {"bias", {c}, unit}});
    b.last().flops = 2.0 * double(n * c * c * 9 * hw * hw) + 8.0 * double(n * c * 9 * hw * hw);
  }
}

const OpBenchShapesRegistrar kRegistrar{"deform_conv2d", {shapes}};

}  // namespace

}  // namespace oplab::bench
