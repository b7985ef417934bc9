// ps_roi_align in the fuzz layer (fuzz/op_fuzz.h): the RoI family's aligned boxes over a
// feature map of Co * PH * PW channels, fixed and adaptive grids. Linear in input; its
// channel permutation moves each output channel's PH * PW input channels together.
#include "core/params.h"
#include "fuzz/roi_family.h"
#include "reference/roi_bilinear.h"

namespace oplab::fuzz {

namespace {

rc::Gen<Case> gen() {
  return sometimes_redrawn(roi_wide_weights(), [](int wide) {
    Case c = roi_case("ps_roi_align", pick_roi_shape(true, wide), 0.5);
    c.params["sampling_ratio"] = pick_sampling_ratio();
    return c;
  });
}

void features(const Case& c, std::set<std::string>& f) {
  const PsRoiParams p = parse_ps_roi_align(c);
  roi_grid_features(c, roi_frame(p), true, p.sampling_ratio, false, f);
  // What makes the op position-sensitive: bins of one box reading different channels, which
  // needs two bins with a sample in the image (most drawn boxes have none, and a zero gradient).
  for (int64_t k = 0; k < p.K; ++k) {
    const ref::RoiBox b =
        ref::roi_box(c.in("rois"), k, p.spatial_scale, ref::kAlignedBox, p.PH, p.PW, p.sampling_ratio);
    // A sample is in range when both its coordinates are (roi_bilinear), so each axis is
    // searched alone: a far-outside box's adaptive grid can be a million samples per bin.
    auto any_y = [&](int64_t ph) {
      for (int64_t iy = 0; iy < b.gh; ++iy) {
        const double y = ref::roi_sample(ref::roi_bin_start(b.sy, ph, b.bin_h), b.bin_h, iy, b.gh);
        if (ref::roi_bilinear(y, 0, p.H, p.W).in_range) return true;
      }
      return false;
    };
    auto any_x = [&](int64_t pw) {
      for (int64_t ix = 0; ix < b.gw; ++ix) {
        const double x = ref::roi_sample(ref::roi_bin_start(b.sx, pw, b.bin_w), b.bin_w, ix, b.gw);
        if (ref::roi_bilinear(0, x, p.H, p.W).in_range) return true;
      }
      return false;
    };
    int64_t read = 0;
    for (int64_t ph = 0; ph < p.PH; ++ph)
      for (int64_t pw = 0; pw < p.PW; ++pw) read += any_y(ph) && any_x(pw);
    if (read >= 2) f.insert("several bins reading the image");
  }
}

const OpFuzzRegistrar kRegistrar{"ps_roi_align", {gen, ps_roi_mutations, features, permute_ps_roi, always_linear, {"input"}}};

}  // namespace

}  // namespace oplab::fuzz
