// Kinks of deform_roi_pool (SPEC §5). The output is linear in the input (a mean of bilinear
// samples at fixed coordinates). In the offset, element (r, 0, ph, pw) translates every
// sample column x of bin (r, ph, pw) at rate gamma*rw, and (r, 1, ph, pw) every sample row y
// at rate gamma*rh. The RoIAlign rule switches pieces at every integer from -1 to H: jumps at
// -1 and H (in range at exactly -1 and H, 0 beyond), clamps at 0 and H-1, floor between.
#include <cmath>

#include "core/params.h"
#include "gradcheck/kinks_ops.h"
#include "reference/roi_geometry.h"

namespace oplab::gradcheck {

namespace {

// Calls f(r, ph, pw, box) for every bin that has samples.
template <class F>
void for_each_bin(const DeformRoiPoolParams& p, const Tensor& rois, F f) {
  for (int64_t r = 0; r < p.K; ++r) {
    const ref::RoiBox b = ref::roi_box(rois, r, p.spatial_scale, ref::kAlignedBox, p.PH, p.PW, p.sampling_ratio);
    if (b.gh <= 0 || b.gw <= 0) continue;  // no samples: the bin is 0 whatever the offset
    for (int64_t ph = 0; ph < p.PH; ++ph)
      for (int64_t pw = 0; pw < p.PW; ++pw) f(r, ph, pw, b);
  }
}

}  // namespace

OpKinks deform_roi_pool_kinks() {
  OpKinks k;
  k.affine = [](const Case&, const std::string& input) { return input != "offset"; };
  k.sources = [](const Case& c, const std::string& input, const KinkVisitor& visit) {
    if (input != "offset" || !c.has("offset")) return;
    const DeformRoiPoolParams p = parse_deform_roi_pool(c);
    if (p.H <= 0 || p.W <= 0 || p.C == 0) return;  // nothing is ever in range, or nothing reads
    const Tensor& off = c.in("offset");
    for_each_bin(p, c.in("rois"), [&](int64_t r, int64_t ph, int64_t pw, const ref::RoiBox& b) {
      const int64_t ix = ((r * 2 + 0) * p.PH + ph) * p.PW + pw, iy = ((r * 2 + 1) * p.PH + ph) * p.PW + pw;
      const double ox = off.data[size_t(ix)], oy = off.data[size_t(iy)];
      if (!std::isfinite(ox) || !std::isfinite(oy)) return;  // out of range for good
      const double rate_y = p.gamma * b.rh, rate_x = p.gamma * b.rw;
      // Same operation order as the reference: translate the start, then step to the bin.
      const double y0 = ref::roi_bin_start(b.sy + p.gamma * b.rh * oy, ph, b.bin_h);
      const double x0 = ref::roi_bin_start(b.sx + p.gamma * b.rw * ox, pw, b.bin_w);
      if (rate_y != 0)
        for (int64_t i = 0; i < b.gh; ++i) visit(roi_rule_axis(ref::roi_sample(y0, b.bin_h, i, b.gh), p.H, {{iy, rate_y}}, true));
      if (rate_x != 0)
        for (int64_t i = 0; i < b.gw; ++i) visit(roi_rule_axis(ref::roi_sample(x0, b.bin_w, i, b.gw), p.W, {{ix, rate_x}}, false));
    });
  };
  return k;
}

const OpKinksRegistrar kDeformRoiPoolKinks{"deform_roi_pool", deform_roi_pool_kinks()};

}  // namespace oplab::gradcheck
