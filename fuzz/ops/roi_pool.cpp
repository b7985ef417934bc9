// roi_pool in the fuzz layer (fuzz/op_fuzz.h): the RoI family's boxes, rules and permutation;
// features of its rounded bins (roi_pool's width xe - xs + 1). A max: not linear in input.
#include "core/params.h"
#include "fuzz/roi_family.h"

namespace oplab::fuzz {

namespace {

rc::Gen<Case> gen() {
  return sometimes_redrawn(roi_wide_weights(), [](int wide) { return roi_case("roi_pool", pick_roi_shape(false, wide), 0.0); });
}

void features(const Case& c, std::set<std::string>& f) {
  roi_rounded_features(c, roi_frame(parse_roi_pool(c)), true, f);
}

Permuted permute(const Case& c) { return permute_roi(c); }
bool linear(const Case&) { return false; }

const OpFuzzRegistrar kRegistrar{"roi_pool", {gen, roi_mutations, features, permute, linear, {"input"}}};

}  // namespace

}  // namespace oplab::fuzz
