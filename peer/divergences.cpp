#include "peer/divergences.h"

#include <cmath>

#include "core/params.h"

namespace oplab {

namespace {

// PyTorch's CPU upsampling takes index shortcuts that are not the formula of SPEC §6:
// an axis whose output size equals its input size is copied (nearest and the linear family;
// bicubic only when every axis keeps its size) and nearest with out == 2*in uses dst >> 1,
// whatever scale_factor said. Giving the reference scale_factor 1 (resp. 2) on exactly those
// axes reproduces the peer. Some kernels take the shortcut in one direction only (measured:
// 1-D nearest forward follows the formula and its backward copies; bicubic the same);
// the comparison reports which.
std::optional<Case> interp_shortcut_equivalent(const Case& c, bool same_size) {
  if (c.op != "interpolate") return std::nullopt;
  const InterpParams p = parse_interpolate(c);
  const bool nearest = p.mode == InterpMode::Nearest;
  const bool linear = p.mode == InterpMode::Linear || p.mode == InterpMode::Bilinear || p.mode == InterpMode::Trilinear;
  bool all_same = true;
  for (const InterpAxis& a : p.axes) all_same &= a.out == a.in;
  const bool bicubic = p.mode == InterpMode::Bicubic && all_same;
  if (!(nearest || (same_size && (linear || bicubic))) || p.align_corners) return std::nullopt;
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

// torchvision's CPU roi_align sizes a buffer by gh*gw*PH*PW; with aligned=True, a reversed
// box and the adaptive grid, one of gh = ceil(rh/PH), gw = ceil(rw/PW) can be negative and
// the other positive, and the negative size makes it raise instead of returning 0.
bool roi_align_negative_grid(const Case& c) {
  if (c.op != "roi_align") return false;
  const RoiAlignParams p = parse_roi_align(c);
  if (!p.aligned || p.sampling_ratio > 0) return false;
  const Tensor& rois = c.in("rois");
  for (int64_t k = 0; k < p.K; ++k) {
    const double rw = (rois.at(k, 3) - rois.at(k, 1)) * p.spatial_scale;
    const double rh = (rois.at(k, 4) - rois.at(k, 2)) * p.spatial_scale;
    const int64_t gh = int64_t(std::ceil(rh / double(p.PH))), gw = int64_t(std::ceil(rw / double(p.PW)));
    if (gh * gw < 0) return true;
  }
  return false;
}

}  // namespace

const std::vector<Divergence>& torchvision_divergences() {
  static const std::vector<Divergence> list = {
      {"interp-same-size-copy",
       "PyTorch CPU copies an axis whose output size equals its input size (nearest, linear family), ignoring scale_factor",
       [](const Case& c) { return interp_shortcut_equivalent(c, true); }, nullptr},
      {"interp-nearest-2x-shift",
       "PyTorch CPU nearest with out == 2*in uses dst >> 1, ignoring scale_factor",
       [](const Case& c) { return interp_shortcut_equivalent(c, false); }, nullptr},
      {"roi_align-negative-grid-raises",
       "torchvision CPU roi_align raises (buffer of negative size) for an aligned reversed box whose adaptive grid has gh*gw < 0; the spec gives 0",
       nullptr, roi_align_negative_grid},
  };
  return list;
}

}  // namespace oplab
