// Standard shapes of ms_deform_attn (SPEC §13): Deformable DETR's encoder on an 800 x 1216
// image, 4 levels (strides 8 to 64: 100x152, 50x76, 25x38, 13x19; S = 20197), 8 heads of
// Dh 32, 4 points per level, a query per pixel (Lq = S), batch 2; and its decoder, 300 queries
// on the same levels (the small shape). Locations uniform in [0, 1], weights in [0, 1].
#include <utility>
#include <vector>

#include "bench/shape_builder.h"
#include "core/msda_levels.h"

namespace oplab::bench {

namespace {

void shapes(ShapeBuilder& b) {
  const std::vector<std::pair<int64_t, int64_t>> levels{{100, 152}, {50, 76}, {25, 38}, {13, 19}};
  const int64_t L = int64_t(levels.size()), M = 8, Dh = 32, P = 4;
  const MsdaLevels lv = msda_levels(levels);
  const Tensor &shapes = lv.spatial_shapes, &starts = lv.level_start_index;
  const int64_t S = lv.S;
  const Uniform unit{-1, 1}, positive{0, 1};
  // The reduced set keeps the levels (their sizes are the point) and cuts the batch and queries.
  const int64_t N = b.reduced() ? 1 : 2;
  for (auto [name, Lq] : {std::pair<const char*, int64_t>{"encoder", b.reduced() ? S / 4 : S}, {"decoder", 300}}) {
    b.add(std::string("ms_deform_attn ") + name + " Lq" + std::to_string(Lq), "ms_deform_attn", json::object(),
          {{"value", {N, S, M, Dh}, unit},
           {"sampling_locations", {N, Lq, M, L, P, 2}, positive},
           {"attention_weights", {N, Lq, M, L, P}, positive}},
          {{"spatial_shapes", shapes}, {"level_start_index", starts}});
  }
}

const OpBenchShapesRegistrar kRegistrar{"ms_deform_attn", {shapes}};

}  // namespace

}  // namespace oplab::bench
