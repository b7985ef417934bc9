#include "peer/divergences.h"

#include "core/params.h"

namespace oplab {

namespace {

// PyTorch's CPU upsampling takes index shortcuts that are not the formula of SPEC §6:
// an axis whose output size equals its input size is copied (nearest and the linear family)
// and nearest with out == 2*in uses dst >> 1, whatever scale_factor said. Giving the
// reference scale_factor 1 (resp. 2) on exactly those axes reproduces the peer.
std::optional<Case> interp_shortcut_equivalent(const Case& c, bool same_size) {
  if (c.op != "interpolate") return std::nullopt;
  const InterpParams p = parse_interpolate(c);
  const bool nearest = p.mode == InterpMode::Nearest;
  const bool linear = p.mode == InterpMode::Linear || p.mode == InterpMode::Bilinear || p.mode == InterpMode::Trilinear;
  if (!(nearest || (same_size && linear)) || p.align_corners) return std::nullopt;
  json sf = json::array();
  bool changed = false;
  for (const InterpAxis& a : p.axes) {
    if (!a.scale_factor) return std::nullopt;  // size given or recomputed: the kernel scale is in/out already
    double s = *a.scale_factor;
    if (same_size && a.out == a.in && s != 1.0) s = 1.0, changed = true;
    if (!same_size && a.out == 2 * a.in && s != 2.0) s = 2.0, changed = true;
    sf.push_back(s);
  }
  if (!changed) return std::nullopt;
  Case e = c;
  e.params["scale_factor"] = sf;
  e.params["recompute_scale_factor"] = nullptr;
  return e;
}

}  // namespace

const std::vector<Divergence>& torchvision_divergences() {
  static const std::vector<Divergence> list = {
      {"interp-same-size-copy",
       "PyTorch CPU copies an axis whose output size equals its input size (nearest, linear family), ignoring scale_factor",
       [](const Case& c) { return interp_shortcut_equivalent(c, true); }},
      {"interp-nearest-2x-shift",
       "PyTorch CPU nearest with out == 2*in uses dst >> 1, ignoring scale_factor",
       [](const Case& c) { return interp_shortcut_equivalent(c, false); }},
  };
  return list;
}

}  // namespace oplab
