// ps_roi_pool in the fuzz layer (fuzz/op_fuzz.h): the RoI family's boxes, rounded (C round,
// ties at x*s = n + 0.5), over a feature map of Co * PH * PW channels. An average: linear in
// input; its channel permutation moves each output channel's PH * PW input channels together.
#include "core/params.h"
#include "fuzz/roi_family.h"
#include "reference/pool_geometry.h"

namespace oplab::fuzz {

namespace {

rc::Gen<Case> gen() {
  return sometimes_redrawn(roi_wide_weights(), [](int wide) { return roi_case("ps_roi_pool", pick_roi_shape(true, wide), 0.0); });
}

void features(const Case& c, std::set<std::string>& f) {
  const PsRoiParams p = parse_ps_roi_pool(c);
  roi_rounded_features(c, roi_frame(p), false, f);
  // What makes the op position-sensitive: bins of one box reading different channels. Most
  // drawn boxes have no bin with a pixel (the last row and column are never read, so a 1-pixel
  // map reads nothing), and their gradient is zero.
  for (int64_t k = 0; k < p.K; ++k) {
    int64_t read = 0;
    for (int64_t ph = 0; ph < p.PH; ++ph)
      for (int64_t pw = 0; pw < p.PW; ++pw)
        read += !ref::pool_bin(c.in("rois"), k, p.spatial_scale, ref::kPsRoiPoolBox, p.PH, p.PW, ph, pw, p.H, p.W)
                     .empty();
    if (read >= 2) f.insert("several bins reading the image");
  }
}

const OpFuzzRegistrar kRegistrar{"ps_roi_pool", {gen, ps_roi_mutations, features, permute_ps_roi, always_linear, {"input"}}};

}  // namespace

}  // namespace oplab::fuzz
