// Kinks of roi_align (SPEC §4). avg is linear in the input (fixed coordinates, fixed
// weights): no kinks. max is piecewise linear: each bin outputs its winning sample, and the
// winner changes where a competitor's interpolated value reaches the winner's. Both values
// are linear in the input, so the gap is a kink source whose rates are the two samples'
// bilinear weights (detected from the values, never guessed).
#include <cmath>
#include <vector>

#include "core/params.h"
#include "gradcheck/kinks_ops.h"
#include "reference/roi_bilinear.h"
#include "reference/roi_geometry.h"

namespace oplab::gradcheck {

namespace {

struct Sample {
  double value = 0;
  ref::RoiBilinear b;
};

// The samples of bin (r, ph, pw) on one plane, in the reference's scan order.
std::vector<Sample> bin_samples(const ref::RoiBox& box, const double* plane, int64_t H, int64_t W, int64_t ph,
                                int64_t pw) {
  std::vector<Sample> s;
  const double y0 = ref::roi_bin_start(box.sy, ph, box.bin_h), x0 = ref::roi_bin_start(box.sx, pw, box.bin_w);
  for (int64_t iy = 0; iy < box.gh; ++iy) {
    const double y = ref::roi_sample(y0, box.bin_h, iy, box.gh);
    for (int64_t ix = 0; ix < box.gw; ++ix) {
      Sample smp;
      smp.b = ref::roi_bilinear(y, ref::roi_sample(x0, box.bin_w, ix, box.gw), H, W);
      smp.value = ref::roi_bilinear_value(plane, W, smp.b);
      s.push_back(smp);
    }
  }
  return s;
}

// The winner of the max rule: first non-NaN sample, replaced only by a strictly greater one.
int64_t winner_of(const std::vector<Sample>& s) {
  int64_t w = -1;
  for (size_t i = 0; i < s.size(); ++i)
    if (!std::isnan(s[i].value) && (w < 0 || s[i].value > s[size_t(w)].value)) w = int64_t(i);
  return w;
}

// d value / d pixel of one sample: its four corner weights, at flat offset `base`.
void add_weights(const ref::RoiBilinear& b, int64_t base, int64_t W, double sign,
                 std::vector<std::pair<int64_t, double>>& g) {
  if (!b.in_range) return;
  g.push_back({base + b.y0 * W + b.x0, sign * b.w00()});
  g.push_back({base + b.y0 * W + b.x1, sign * b.w01()});
  g.push_back({base + b.y1 * W + b.x0, sign * b.w10()});
  g.push_back({base + b.y1 * W + b.x1, sign * b.w11()});
}

template <class F>
void for_each_plane_bin(const RoiAlignParams& p, const Tensor& input, const Tensor& rois, F f) {
  for (int64_t r = 0; r < p.K; ++r) {
    const ref::RoiBox box =
        ref::roi_box(rois, r, p.spatial_scale, p.aligned ? ref::kAlignedBox : ref::kLegacyBox, p.PH, p.PW, p.sampling_ratio);
    for (int64_t c = 0; c < p.C; ++c) {
      const int64_t base = (box.n * p.C + c) * p.H * p.W;
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw) f(box, base, bin_samples(box, input.data.data() + base, p.H, p.W, ph, pw));
    }
  }
}

}  // namespace

OpKinks roi_align_kinks() {
  OpKinks k;
  k.affine = [](const Case& c, const std::string&) { return parse_roi_align(c).mode == PoolMode::Avg; };
  k.sources = [](const Case& c, const std::string& input, const KinkVisitor& visit) {
    const RoiAlignParams p = parse_roi_align(c);
    if (input != "input" || p.mode != PoolMode::Max) return;
    for_each_plane_bin(p, c.in("input"), c.in("rois"), [&](const ref::RoiBox&, int64_t base, const std::vector<Sample>& s) {
      const int64_t w = winner_of(s);
      if (w < 0) return;  // no samples, or only NaN: the bin does not depend on the winner
      for (size_t i = 0; i < s.size(); ++i) {
        if (int64_t(i) == w || std::isnan(s[i].value)) continue;
        std::vector<std::pair<int64_t, double>> g;
        add_weights(s[i].b, base, p.W, 1.0, g);
        add_weights(s[size_t(w)].b, base, p.W, -1.0, g);
        visit(max_gap(s[i].value - s[size_t(w)].value, std::move(g), "max tie"));
      }
    });
  };
  return k;
}

const OpKinksRegistrar kRoiAlignKinks{"roi_align", roi_align_kinks()};

}  // namespace oplab::gradcheck
