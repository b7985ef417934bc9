#include "peer/divergences.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/params.h"
#include "reference/ms_deform_attn_points.h"
#include "reference/roi_geometry.h"

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
  // torch's antialias kernels follow the formula on such axes (measured on 1.13: none of the
  // campaign's antialias cases with out == in at a scale != 1 departs).
  if (!(nearest || (same_size && (linear || bicubic))) || p.align_corners || p.antialias) return std::nullopt;
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

// PyTorch's CPU nearest and nearest-exact forward on float64 input, in its generic kernel,
// computes the scale (in/out or 1/sf) and the source position dst * scale ((dst + 0.5) *
// scale) in double, its opmath type, and floors the position with floorf, which first rounds
// it to float32. The generic kernel runs for 1-D input, and for 2-D and 3-D input that is not
// also channels-last contiguous (C > 1; with C == 1 a channels-last kernel runs). Every other
// nearest kernel -- those, the backward, any float32 input -- takes the float32 scale and
// product of SPEC §6, as the reference does. The two differ where the product lies within a
// float32 rounding of an integer: 2 -> 82 reads index 1 at dst 41 on float64 input, 0 on
// float32 (fuzz/ops/interpolate_nearest.h draws such axes; on every axis of its tables the 1-D
// float64 forward is this rule and the float32 one SPEC's). The equivalent case hands the
// reference the input gathered at this rule's indices, read back by nearest with out == in on
// every axis (scale 1, the identity); only the forward is claimed, the backward keeps SPEC's.
std::optional<Case> interp_nearest_double_equivalent(const Case& c) {
  if (c.op != "interpolate") return std::nullopt;
  const InterpParams p = parse_interpolate(c);
  if (p.mode != InterpMode::Nearest && p.mode != InterpMode::NearestExact) return std::nullopt;
  if (p.axes.size() > 1 && p.C == 1) return std::nullopt;  // the channels-last kernel: float32
  const bool exact = p.mode == InterpMode::NearestExact;
  // Padded to three axes (D, H, W) with single-pixel leading axes.
  std::vector<InterpAxis> axes(3 - p.axes.size(), InterpAxis{1, 1, std::nullopt});
  axes.insert(axes.end(), p.axes.begin(), p.axes.end());
  std::vector<std::vector<int64_t>> src(3);
  bool differs = false;
  for (size_t i = 0; i < 3; ++i) {
    const InterpAxis& a = axes[i];
    const float scale = interp_nearest_scale(a);
    const double scale_d = a.scale_factor ? 1.0 / *a.scale_factor : double(a.in) / double(a.out);
    for (int64_t dst = 0; dst < a.out; ++dst) {
      const double pos_d = exact ? (double(dst) + 0.5) * scale_d : double(dst) * scale_d;
      src[i].push_back(std::min(int64_t(std::floor(float(pos_d))), a.in - 1));
      const float pos = exact ? float(double(dst) + 0.5) * scale : float(dst) * scale;
      differs |= src[i].back() != std::min(int64_t(std::floor(pos)), a.in - 1);
    }
  }
  if (!differs) return std::nullopt;
  const Tensor& x = c.in("input");
  const int64_t planes = p.N * p.C, in_plane = axes[0].in * axes[1].in * axes[2].in;
  Tensor gathered(p.output_shape());
  size_t k = 0;
  for (int64_t n = 0; n < planes; ++n)
    for (int64_t d = 0; d < axes[0].out; ++d)
      for (int64_t h = 0; h < axes[1].out; ++h)
        for (int64_t w = 0; w < axes[2].out; ++w) {
          const int64_t from = (src[0][size_t(d)] * axes[1].in + src[1][size_t(h)]) * axes[2].in + src[2][size_t(w)];
          gathered.data[k++] = x.data[size_t(n * in_plane + from)];
        }
  json size = json::array();
  for (const InterpAxis& a : p.axes) size.push_back(a.out);
  Case e = c;
  e.params = json{{"mode", "nearest"}, {"size", size}};
  e.inputs.at("input") = gathered;
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


// torchvision's ps_roi_align divides the bin's sum by count = gh * gw with no floor at 1: an
// adaptive grid with gh = 0 or gw = 0 (a box of zero size, or reversed by less than one bin)
// gives 0 / 0 = NaN in every bin of that roi (and gh * gw < 0 gives -0, which compares equal to
// the spec's 0). The reference gives NaN only by sampling NaN, so the equivalent case appends one
// image of NaN to the batch and moves those rois onto it, as a one-pixel box at the image's
// corner (whose samples read pixel (0, 0)): every bin of such a roi is then NaN, every other
// roi is unchanged. No sample means no gradient on either side, so only the forward differs.
std::optional<Case> ps_roi_align_empty_grid_equivalent(const Case& c) {
  if (c.op != "ps_roi_align") return std::nullopt;
  const PsRoiParams p = parse_ps_roi_align(c);
  if (p.sampling_ratio > 0 || p.H == 0 || p.W == 0) return std::nullopt;
  Tensor rois = c.in("rois");
  bool changed = false;
  for (int64_t k = 0; k < p.K; ++k) {
    const ref::RoiBox b = ref::roi_box(rois, k, p.spatial_scale, ref::kAlignedBox, p.PH, p.PW, p.sampling_ratio);
    if (b.gh != 0 && b.gw != 0) continue;
    rois.at(k, 0) = double(p.N);
    rois.at(k, 1) = rois.at(k, 2) = 0.0;
    rois.at(k, 3) = rois.at(k, 4) = 1.0 / p.spatial_scale;  // one pixel once scaled
    changed = true;
  }
  if (!changed) return std::nullopt;
  Case e = c;
  Tensor& x = e.inputs.at("input");
  x.shape[0] += 1;
  x.data.resize(x.data.size() + size_t(p.C * p.H * p.W), std::numeric_limits<double>::quiet_NaN());
  e.inputs.at("rois") = rois;
  return e;
}

// torchvision's ps_roi_pool backward rounds the scaled roi corners with roundf, that is after
// converting them to float32, where the forward rounds the double: a corner within float32
// rounding of a half (x1*s = 2.4999999999 becomes 2.5f, then 3; the forward takes 2) gives the
// backward other bins than the forward. The equivalent case moves every such corner to
// r / s, with r the backward's rounding, so that the reference rounds it to r as well.
std::optional<Case> ps_roi_pool_roundf_equivalent(const Case& c) {
  if (c.op != "ps_roi_pool" || !c.grad_output) return std::nullopt;
  const PsRoiParams p = parse_ps_roi_pool(c);
  Tensor rois = c.in("rois");
  bool changed = false;
  for (int64_t k = 0; k < p.K; ++k)
    for (int64_t j = 1; j <= 4; ++j) {
      const double a = rois.at(k, j) * p.spatial_scale;
      const float af = float(a);
      if (!std::isfinite(af)) return std::nullopt;  // torchvision converts inf to int: undefined
      const double r = double(std::round(af));
      if (r == std::round(a)) continue;
      rois.at(k, j) = r / p.spatial_scale;
      changed = true;
    }
  if (!changed) return std::nullopt;
  Case e = c;
  e.inputs.at("rois") = rois;
  return e;
}

// One ps_roi_pool bin along one axis (SPEC §11) with both ends clamped into [0, hi].
void ps_pool_axis(double a, double b, int64_t pooled, int64_t i, int64_t hi, int64_t& lo_out, int64_t& hi_out) {
  const double start = std::round(a), end = std::round(b);
  double extent = end - start;
  if (!(extent >= 1.0)) extent = 1.0;
  const double bin = extent / double(pooled);
  auto clamp = [hi](double v) { return int64_t(std::min(std::max(v, 0.0), double(hi))); };
  lo_out = clamp(std::floor(double(i) * bin) + start);
  hi_out = clamp(std::ceil(double(i + 1) * bin) + start);
}

// torchvision's ps_roi_pool backward clamps the bins into [0, H] x [0, W] where its forward
// clamps into [0, H-1] x [0, W-1] (SPEC §11), so its gradient is not the transpose of its
// forward: a bin that reaches the last row or column hands gout / (its wider area) to that row
// or column as well. What it computes is the transpose of an average over those wider bins;
// the equivalent case writes each of them as a roi_align: an aligned box [w0, w1) x [h0, h1)
// at scale 1 with one bin and the adaptive grid puts exactly one sample on every pixel centre
// of the bin (x = w0 - 0.5 + (i + 0.5) = w0 + i, bilinear weight 1 on that pixel), and the
// grid's count is the bin's area. grad_output carries gout at the bin's input channel, 0 at
// the others. Only the backward is claimed (the forward output has another shape).
std::optional<Case> ps_roi_pool_backward_clamp_equivalent(const Case& c) {
  if (c.op != "ps_roi_pool" || !c.grad_output) return std::nullopt;
  const PsRoiParams p = parse_ps_roi_pool(c);
  const Tensor& rois = c.in("rois");
  const Tensor& gout = *c.grad_output;
  struct Bin {
    int64_t n, c_in;
    int64_t h0, h1, w0, w1;
    double g;
  };
  std::vector<Bin> bins;
  bool differs = false;
  for (int64_t k = 0; k < p.K; ++k)
    for (int64_t ph = 0; ph < p.PH; ++ph)
      for (int64_t pw = 0; pw < p.PW; ++pw) {
        const double s = p.spatial_scale;
        int64_t fh0, fh1, fw0, fw1, bh0, bh1, bw0, bw1;  // forward's and backward's bin
        ps_pool_axis(rois.at(k, 2) * s, rois.at(k, 4) * s, p.PH, ph, p.H - 1, fh0, fh1);
        ps_pool_axis(rois.at(k, 1) * s, rois.at(k, 3) * s, p.PW, pw, p.W - 1, fw0, fw1);
        ps_pool_axis(rois.at(k, 2) * s, rois.at(k, 4) * s, p.PH, ph, p.H, bh0, bh1);
        ps_pool_axis(rois.at(k, 1) * s, rois.at(k, 3) * s, p.PW, pw, p.W, bw0, bw1);
        const bool f_empty = fh1 <= fh0 || fw1 <= fw0, b_empty = bh1 <= bh0 || bw1 <= bw0;
        if (f_empty != b_empty || (!b_empty && (fh0 != bh0 || fh1 != bh1 || fw0 != bw0 || fw1 != bw1))) differs = true;
        if (b_empty) continue;
        for (int64_t co = 0; co < p.Co; ++co)
          bins.push_back({int64_t(rois.at(k, 0)), p.input_channel(co, ph, pw), bh0, bh1, bw0, bw1, gout.at(k, co, ph, pw)});
      }
  if (!differs) return std::nullopt;
  const int64_t K = int64_t(bins.size());
  Tensor eq_rois(Shape{K, 5});
  Tensor eq_gout(Shape{K, p.C, 1, 1});
  for (int64_t i = 0; i < K; ++i) {
    const Bin& b = bins[size_t(i)];
    eq_rois.at(i, 0) = double(b.n);
    eq_rois.at(i, 1) = double(b.w0);
    eq_rois.at(i, 2) = double(b.h0);
    eq_rois.at(i, 3) = double(b.w1);
    eq_rois.at(i, 4) = double(b.h1);
    eq_gout.at(i, b.c_in, 0, 0) = b.g;
  }
  Case e;
  e.op = "roi_align";
  e.params = {{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", -1}, {"aligned", true}};
  e.inputs["input"] = c.in("input");
  e.inputs["rois"] = eq_rois;
  e.grad_output = eq_gout;
  return e;
}

// The pure-PyTorch ms_deform_attn (peer/msda_pytorch.py) hands grid_sample the grid
// g = 2 * loc - 1, which grid_sample maps back to pixels as (g + 1) * (size / 2) - 0.5; the
// spec forms loc * size - 0.5. The two agree unless 2 * loc - 1 rounds (loc below 1/4 or above
// 1, mostly), when the peer's pixel coordinate is off by an ulp: nothing in a value, but a
// location on a pixel centre or a cut-off then lands on the other side of it, and the
// location's gradient takes the other one-sided derivative. The equivalent case gives the
// reference loc' = ((2 * loc - 1) + 1) / 2 (halving is exact), whose loc' * size is the
// peer's (g + 1) * (size / 2) exactly.
// Only a case with a moved point near an integer coordinate (within 1e-4 of a floor switch or a
// cut-off) is affected: there the ulp may cross it, or change a corner weight of 1e-9 by a
// relative 1e-7; elsewhere it moves a weight by less than 1e-12 of itself, inside the
// tolerance, and the algebraic properties, which skip the cases a divergence touches, keep them.
std::optional<Case> msda_grid_equivalent(const Case& c) {
  if (c.op != "ms_deform_attn") return std::nullopt;
  const MsDeformAttnParams p = parse_ms_deform_attn(c);
  const Tensor& loc = c.in("sampling_locations");
  Tensor peer_loc = loc;
  // geom(): under a judge's geometry-in-T scope (core/geometry_rounding.h) the peer's own
  // float pipeline, g = 2 loc - 1 and g + 1 rounded (the halving is exact); identity in double.
  for (double& v : peer_loc.data)
    if (std::isfinite(v)) v = geom(geom(2.0 * v - 1.0) + 1.0) / 2.0;
  auto near_integer = [](double v) { return std::fabs(v - std::round(v)) < 1e-4; };
  bool affected = false;
  ref::for_each_msda_point(p, loc, [&](const ref::MsdaPoint& s) {
    const bool moved = loc.data[size_t(s.loc)] != peer_loc.data[size_t(s.loc)] ||
                       loc.data[size_t(s.loc + 1)] != peer_loc.data[size_t(s.loc + 1)];
    affected |= moved && (near_integer(s.x) || near_integer(s.y));
  });
  if (!affected) return std::nullopt;
  Case e = c;
  e.inputs.at("sampling_locations") = peer_loc;
  return e;
}

}  // namespace

const std::vector<Divergence>& torchvision_divergences() {
  static const std::vector<Divergence> list = {
      {"interp-same-size-copy",
       "PyTorch CPU copies an axis whose output size equals its input size (nearest, linear family), ignoring scale_factor",
       [](const Case& c) { return interp_shortcut_equivalent(c, true); }, nullptr,
       R"({"op":"interpolate","params":{"mode":"linear","scale_factor":[1.1],"align_corners":false},
        "inputs":{"input":{"shape":[1,1,2],"data":[0,1]}}})"},
      {"interp-nearest-2x-shift",
       "PyTorch CPU nearest with out == 2*in uses dst >> 1, ignoring scale_factor",
       [](const Case& c) { return interp_shortcut_equivalent(c, false); }, nullptr,
       R"({"op":"interpolate","params":{"mode":"nearest","scale_factor":[1,2.1]},
        "inputs":{"input":{"shape":[1,1,1,2],"data":[0,1]}}})"},
      // After the shortcuts, which need the case's own scale factor.
      {"interp-nearest-float64-index",
       "PyTorch CPU nearest / nearest-exact forward on float64 input (1-D, or C > 1) computes the scale and the source "
       "position in double and rounds the position to float32 before the floor; SPEC (and the backward) computes both in "
       "float32",
       interp_nearest_double_equivalent, nullptr,
       R"({"op":"interpolate","params":{"mode":"nearest-exact","scale_factor":[1.6428571428571428]},
        "inputs":{"input":{"shape":[1,1,8],"data":[0,1,2,3,4,5,6,7]}}})"},
      {"roi_align-negative-grid-raises",
       "torchvision CPU roi_align raises (buffer of negative size) for an aligned reversed box whose adaptive grid has gh*gw < 0; the spec gives 0",
       nullptr, roi_align_negative_grid,
       R"({"op":"roi_align","params":{"output_size":[1,1],"spatial_scale":1,"sampling_ratio":-1,"aligned":true},
        "inputs":{"input":{"shape":[1,1,1,1],"data":[1]},"rois":{"shape":[1,5],"data":[0,0,1,1,0]}}})"},
      {"ps_roi_align-empty-grid-nan",
       "torchvision ps_roi_align divides by gh*gw without a floor of 1: an adaptive grid with gh = 0 or gw = 0 (zero-size "
       "or slightly reversed box) gives NaN for every bin of the roi (gh*gw < 0 gives -0); the spec gives 0",
       ps_roi_align_empty_grid_equivalent, nullptr,
       R"({"op":"ps_roi_align","params":{"output_size":[1,1],"spatial_scale":1,"sampling_ratio":-1},
        "inputs":{"input":{"shape":[1,1,1,1],"data":[1]},"rois":{"shape":[1,5],"data":[0,0,0,0,0]}}})"},
      // Before the clamp divergence: that one rewrites the case as a roi_align, this one needs
      // the ps_roi_pool case, and the clamp's bins must be formed from the rounding this one fixes.
      {"ps_roi_pool-backward-roundf",
       "torchvision ps_roi_pool backward rounds the scaled roi corners in float32 (roundf), its forward in double: a "
       "corner within float32 rounding of a half gives the backward other bins than the forward",
       ps_roi_pool_roundf_equivalent, nullptr,
       R"({"op":"ps_roi_pool","params":{"output_size":[1,1],"spatial_scale":1},
        "inputs":{"input":{"shape":[1,1,2,2],"data":[1,0,0,0]},"rois":{"shape":[1,5],"data":[0,-0.4999999999,0,0,0]}},"grad_output":{"shape":[1,1,1,1],"data":[1]}})"},
      {"ps_roi_pool-backward-clamps-to-size",
       "torchvision ps_roi_pool backward clamps bins into [0, H] x [0, W], its forward into [0, H-1] x [0, W-1]: the "
       "gradient is not the transpose of the forward (the last row and column get gradient, with the wider bin's area)",
       ps_roi_pool_backward_clamp_equivalent, nullptr,
       R"({"op":"ps_roi_pool","params":{"output_size":[1,1],"spatial_scale":1},
        "inputs":{"input":{"shape":[1,1,1,1],"data":[1]},"rois":{"shape":[1,5],"data":[0,0,0,0,0]}},"grad_output":{"shape":[1,1,1,1],"data":[1]}})"},
      {"msda-grid-normalisation",
       "the pure-PyTorch ms_deform_attn samples at grid_sample's (2*loc - 1 + 1) * size/2 - 0.5, the spec at "
       "loc * size - 0.5: an ulp apart where 2*loc - 1 rounds, which moves a location on a pixel centre or a cut-off "
       "to its other side (the location gradient's other one-sided derivative)",
       msda_grid_equivalent, nullptr,
       R"({"op":"ms_deform_attn","params":{},
        "inputs":{"value":{"shape":[1,3,1,1],"data":[0,1,0]},"spatial_shapes":{"shape":[1,2],"data":[1,3]},"level_start_index":{"shape":[1],"data":[0]},"sampling_locations":{"shape":[1,1,1,1,1,2],"data":[0.16666666666666666,0.5]},"attention_weights":{"shape":[1,1,1,1,1],"data":[1]}},"grad_output":{"shape":[1,1,1],"data":[1]}})"},
      {"grid_sample-3d-nearest-round-half-away",
       "PyTorch CPU grid_sample on a 5-D input rounds nearest's coordinate half away from zero (2.5 reads pixel 3); "
       "SPEC and its 4-D kernel round half to even (2.5 reads pixel 2)",
       grid_sample_3d_nearest_equivalent, nullptr,
       R"({"op":"grid_sample","params":{"mode":"nearest","padding_mode":"zeros","align_corners":false},
        "inputs":{"input":{"shape":[1,1,1,1,1],"data":[1]},"grid":{"shape":[1,1,1,1,3],"data":[1,0,0]}}})"},
  };
  return list;
}

}  // namespace oplab
