// The torchvision peer's named divergences of grid_sample (SPEC §12; listed in
// peer/divergences.cpp), each proven by the reference on its equivalent case.
#include <cmath>

#include "core/params.h"
#include "peer/divergences.h"
#include "reference/grid_sample_taps.h"

namespace oplab {

// PyTorch 1.13's CPU kernel for a 5-D input rounds nearest's coordinate half away from zero
// (std::round: 2.5 reads pixel 3, 0.5 pixel 1, -0.5 pixel -1, outside) where its 4-D kernel
// and SPEC round half to even (nearbyint: 2, 0, 0), measured. Only exact ties differ. The
// equivalent case moves every such grid value to the unnormalised position of the pixel the
// peer reads (its inverse, which rounds back to that pixel under every padding), so that the
// reference reads it too; forward and grad_input both follow it, grad_grid is 0 either way.
std::optional<Case> grid_sample_3d_nearest_equivalent(const Case& c) {
  if (c.op != "grid_sample") return std::nullopt;
  const GridSampleParams p = parse_grid_sample(c);
  if (p.nd != 3 || p.mode != GridMode::Nearest) return std::nullopt;
  Tensor g = c.in("grid");
  const int64_t sizes[3] = {p.W, p.H, p.D};
  bool changed = false;
  for (size_t i = 0; i < g.data.size(); ++i) {
    if (!std::isfinite(g.data[i])) continue;
    const int64_t S = sizes[i % 3];
    const double q = ref::grid_pad(ref::grid_unnormalise(g.data[i], S, p.align_corners), S, p.padding, p.align_corners).c;
    const double peer_pixel = std::round(q);
    if (peer_pixel == std::nearbyint(q)) continue;
    const double moved =
        p.align_corners ? 2 * peer_pixel / double(S - 1) - 1 : (2 * peer_pixel + 1) / double(S) - 1;
    const double back = ref::grid_pad(ref::grid_unnormalise(moved, S, p.align_corners), S, p.padding, p.align_corners).c;
    if (std::nearbyint(back) != peer_pixel) return std::nullopt;  // not expressible: no claim
    g.data[i] = moved;
    changed = true;
  }
  if (!changed) return std::nullopt;
  Case e = c;
  e.inputs.at("grid") = g;
  return e;
}

}  // namespace oplab
