// deform_roi_pool in the fuzz layer (fuzz/op_fuzz.h): aligned boxes of the RoI family, with or
// without an offset (channel 0 is x), gamma 0 to 1. Linear in input at a fixed offset.
#include "core/params.h"
#include "fuzz/gen_values.h"
#include "fuzz/roi_family.h"

namespace oplab::fuzz {

namespace {

rc::Gen<Case> gen() {
  return sometimes_redrawn(roi_wide_weights(), [](int wide) {
    const RoiShape s = pick_roi_shape(false, wide);
    Case c = roi_case("deform_roi_pool", s, 0.5);
    c.params["sampling_ratio"] = pick_sampling_ratio();
    c.params["gamma"] = pick_of<double>({0.1, 0.0, 0.5, 1.0});
    if (pick_one<int>({{1, 0}, {3, 1}}))
      c.inputs["offset"] = *rc::gen::exec([s, K = c.in("rois").dim(0)] {  // one pick of its own (see pick_tensor)
        Tensor off({K, 2, s.PH, s.PW});
        for (double& v : off.data) v = pick_one<int>({{1, 0}, {3, 1}}) ? pick_real(2.0) : 0.0;
        return off;
      });
    return c;
  });
}

std::vector<Mutation> mutations() {
  std::vector<Mutation> m = roi_mutations();
  m.push_back([](Case& c) {  // offset not [K, 2, PH, PW]
    const auto osz = c.params.at("output_size");
    c.inputs["offset"] = Tensor({c.in("rois").dim(0), 2, osz[0].get<int64_t>() + 1, osz[1].get<int64_t>()}, 0.0);
  });
  return m;
}

void features(const Case& c, std::set<std::string>& f) {
  const DeformRoiPoolParams p = parse_deform_roi_pool(c);
  f.insert(p.has_offset ? "offset" : "no offset");
  roi_grid_features(c, roi_frame(p), true, p.sampling_ratio, false, f);
}

Permuted permute(const Case& c) { return permute_roi(c); }

const OpFuzzRegistrar kRegistrar{"deform_roi_pool",
                                 {gen, mutations, features, permute, always_linear, {"input"}}};

}  // namespace

}  // namespace oplab::fuzz
