// roi_align in the fuzz layer (fuzz/op_fuzz.h): aligned or not, fixed or adaptive grids, avg
// (linear in input) or max (not), on the RoI family's edge-aimed boxes.
#include "core/params.h"
#include "fuzz/gen_values.h"
#include "fuzz/roi_family.h"

namespace oplab::fuzz {

namespace {

rc::Gen<Case> gen() {
  return sometimes_redrawn(roi_wide_weights(), [](int wide) {
    const bool aligned = *rc::gen::arbitrary<bool>();
    Case c = roi_case("roi_align", pick_roi_shape(false, wide), aligned ? 0.5 : 0.0);
    c.params["sampling_ratio"] = pick_sampling_ratio();
    c.params["aligned"] = aligned;
    c.params["pool_mode"] = pick_one<std::string>({{3, "avg"}, {1, "max"}});
    return c;
  });
}

std::vector<Mutation> mutations() {
  std::vector<Mutation> m = roi_mutations();
  m.push_back([](Case& c) { c.params["pool_mode"] = "min"; });
  m.push_back([](Case& c) { c.params["aligned"] = 1; });
  return m;
}

void features(const Case& c, std::set<std::string>& f) {
  const RoiAlignParams p = parse_roi_align(c);
  f.insert(p.mode == PoolMode::Max ? "max mode" : "avg mode");
  f.insert(p.aligned ? "aligned" : "not aligned");
  roi_grid_features(c, roi_frame(p), p.aligned, p.sampling_ratio, !p.aligned, f);
}

Permuted permute(const Case& c) { return permute_roi(c); }
bool linear(const Case& c) { return parse_roi_align(c).mode == PoolMode::Avg; }

const OpFuzzRegistrar kRegistrar{"roi_align", {gen, mutations, features, permute, linear, {"input"}}};

}  // namespace

}  // namespace oplab::fuzz
