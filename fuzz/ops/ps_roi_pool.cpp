// ps_roi_pool in the fuzz layer (fuzz/op_fuzz.h): the RoI family's boxes, rounded (C round,
// ties at x*s = n + 0.5), over a feature map of Co * PH * PW channels. An average: linear in
// input; its channel permutation moves each output channel's PH * PW input channels together.
#include "core/params.h"
#include "fuzz/roi_family.h"

namespace oplab::fuzz {

namespace {

rc::Gen<Case> gen() {
  return rc::gen::exec([] { return roi_case("ps_roi_pool", pick_roi_shape(true), 0.0); });
}

std::vector<Mutation> mutations() {
  std::vector<Mutation> m = roi_mutations();
  m.push_back([](Case& c) {  // C not a multiple of PH * PW
    Shape s = c.in("input").shape;
    s[1] += 1;
    c.inputs["input"] = Tensor(s, 0.5);
    c.params["output_size"] = json{2, 2};
  });
  return m;
}

void features(const Case& c, std::set<std::string>& f) {
  roi_rounded_features(c, roi_frame(parse_ps_roi_pool(c)), false, f);
}

Permuted permute(const Case& c) {
  const PsRoiParams p = parse_ps_roi_pool(c);
  return permute_roi(c, p.PH * p.PW);
}

const OpFuzzRegistrar kRegistrar{"ps_roi_pool", {gen, mutations, features, permute, always_linear, {"input"}}};

}  // namespace

}  // namespace oplab::fuzz
