// Kinks of roi_pool (SPEC §3). The bins depend only on the rois and spatial_scale (rounding,
// floor and ceil of bin edges), none of which is differentiable, so those decisions are
// constant under any perturbation of the input. What moves is the argmax: each bin outputs
// its winning pixel, and the winner changes where another pixel of the bin reaches it (an
// exact tie keeps the first pixel in scan order, so it is a kink with the winner's side
// chosen by position, not by slope).
#include <algorithm>
#include <cmath>

#include "core/params.h"
#include "gradcheck/kinks_ops.h"
#include "reference/pool_geometry.h"

namespace oplab::gradcheck {

namespace {

// Bins exactly as the reference takes them (reference/pool_geometry.h).
ref::PoolBin bin_of(const RoiPoolParams& p, const Tensor& rois, int64_t r, int64_t ph, int64_t pw) {
  return ref::pool_bin(rois, r, p.spatial_scale, ref::kRoiPoolBox, p.PH, p.PW, ph, pw, p.H, p.W);
}

// Calls f(base, winner, competitors...) for every plane of every bin: flat pixel indices.
template <class F>
void for_each_bin(const RoiPoolParams& p, const Tensor& input, const Tensor& rois, F f) {
  for (int64_t r = 0; r < p.K; ++r)
    for (int64_t ph = 0; ph < p.PH; ++ph)
      for (int64_t pw = 0; pw < p.PW; ++pw) {
        const ref::PoolBin b = bin_of(p, rois, r, ph, pw);
        for (int64_t c = 0; c < p.C; ++c) {
          const int64_t base = (b.n * p.C + c) * p.H * p.W;
          int64_t w = -1;
          for (int64_t h = b.hs; h < b.he; ++h)
            for (int64_t x = b.ws; x < b.we; ++x) {
              const int64_t i = base + h * p.W + x;
              const double v = input.data[size_t(i)];
              if (!std::isnan(v) && (w < 0 || v > input.data[size_t(w)])) w = i;
            }
          if (w < 0) continue;  // empty bin, or only NaN: no argmax
          for (int64_t h = b.hs; h < b.he; ++h)
            for (int64_t x = b.ws; x < b.we; ++x) {
              const int64_t i = base + h * p.W + x;
              if (i != w && !std::isnan(input.data[size_t(i)])) f(w, i);
            }
        }
      }
}

}  // namespace

OpKinks roi_pool_kinks() {
  OpKinks k;
  k.affine = [](const Case&, const std::string&) { return false; };
  k.sources = [](const Case& c, const std::string& input, const KinkVisitor& visit) {
    if (input != "input") return;
    const Tensor& x = c.in("input");
    for_each_bin(parse_roi_pool(c), x, c.in("rois"), [&](int64_t w, int64_t i) {
      visit(max_gap(x.data[size_t(i)] - x.data[size_t(w)], {{i, 1.0}, {w, -1.0}}, "argmax tie"));
    });
  };
  return k;
}

const OpKinksRegistrar kRoiPoolKinks{"roi_pool", roi_pool_kinks()};

}  // namespace oplab::gradcheck
