// The onnxruntime peer's named divergences (SPEC §8, §14): what ONNX Runtime 1.30's CPU kernels,
// fed the one-node models of peer/onnxruntime_bridge.js, compute differently from SPEC, each with
// the case on which the reference computes the same.
#include <algorithm>
#include <cmath>

#include "core/params.h"
#include "peer/interp_equivalents.h"
#include "peer/onnxruntime_backend.h"
#include "reference/grid_sample_taps.h"

namespace oplab {

namespace {

// ONNX float attributes are float32: RoiAlign's and MaxRoiPool's spatial_scale arrive rounded,
// which moves a sample across a cut-off (y = -1, y = H) or a corner across a rounding half.
std::optional<Case> float_spatial_scale(const Case& c) {
  if (c.op != "roi_align" && c.op != "roi_pool") return std::nullopt;
  const double s = c.params.value("spatial_scale", 1.0);
  const double f = double(float(s));
  if (f == s) return std::nullopt;
  Case e = c;
  e.params["spatial_scale"] = f;
  return e;
}

bool linear_family(InterpMode m) {
  return m == InterpMode::Linear || m == InterpMode::Bilinear || m == InterpMode::Trilinear || m == InterpMode::Bicubic;
}

// Resize's pytorch_half_pixel maps every output of an axis of output size 1 to source 0
// (PyTorch before commit 6ab3a21 did the same); SPEC takes the centre, src = in/2 - 0.5. The
// reference reads source 0 when that axis of the input is cut to its first slice.
std::optional<Case> size1_origin(const Case& c) {
  if (c.op != "interpolate") return std::nullopt;
  const InterpParams p = parse_interpolate(c);
  // antialias goes as half_pixel: an output of 1 reads the centre there.
  if (!linear_family(p.mode) || p.align_corners || p.antialias) return std::nullopt;
  std::vector<bool> cut(p.axes.size(), false);
  bool any = false;
  for (size_t i = 0; i < p.axes.size(); ++i) any |= (cut[i] = p.axes[i].out == 1 && p.axes[i].in > 1);
  if (!any) return std::nullopt;
  const Tensor& x = c.in("input");
  Shape s = x.shape;
  for (size_t i = 0; i < cut.size(); ++i)
    if (cut[i]) s[2 + i] = 1;
  Tensor y(s);
  // Copy element by element: each output index reads the same index of x with 0 on cut axes.
  std::vector<int64_t> stride_x(x.shape.size(), 1);
  for (int i = int(x.shape.size()) - 2; i >= 0; --i) stride_x[size_t(i)] = stride_x[size_t(i + 1)] * x.shape[size_t(i + 1)];
  for (size_t k = 0; k < y.data.size(); ++k) {
    size_t rest = k, from = 0;
    for (int i = int(s.size()) - 1; i >= 0; --i) {
      const size_t idx = rest % size_t(s[size_t(i)]);
      rest /= size_t(s[size_t(i)]);
      from += idx * size_t(stride_x[size_t(i)]);
    }
    y.data[k] = x.data[from];
  }
  Case e = c;
  e.inputs.at("input") = y;
  if (c.params.contains("scale_factor") && !c.params["scale_factor"].is_null()) {
    json sf = json::array();
    for (size_t i = 0; i < p.axes.size(); ++i) {
      const json& g = c.params["scale_factor"];
      sf.push_back(cut[i] ? json(1.0) : (g.is_array() ? g[i] : g));
    }
    e.params["scale_factor"] = sf;
  }
  return e;
}

// Resize's nearest index, as ORT computes it in float32: scale = float(sf), or out / in in
// float when sizes are given; asymmetric (nearest) x / scale then floor; half_pixel
// (nearest-exact) x = (d + 0.5) / scale - 0.5 then round half up, where ORT 1.30 counts x as
// a tie when its fraction is within 1e-6 of 0.5 (so 6.49999952 rounds up to 7); clamped into
// [0, in - 1]. SPEC multiplies by the float32 inverse scale instead, which lands on the other
// side of an integer now and then (4 -> 122 nearest-exact, dst 30: ORT 1, SPEC 0).
// Measured against ORT's indices on 10^5 random (in, out, scale) triples: docs/semantics.md.
constexpr float kOrtTieWidth = 1e-6f;

int64_t ort_nearest(const InterpAxis& a, int64_t dst, bool exact) {
  const float scale = a.scale_factor ? float(*a.scale_factor) : float(a.out) / float(a.in);
  double idx;
  if (exact) {
    const float x = (float(dst) + 0.5f) / scale - 0.5f;
    const float frac = x - std::floor(x);
    idx = std::fabs(frac - 0.5f) <= kOrtTieWidth ? std::ceil(x) : std::round(x);
  } else {
    idx = std::floor(float(dst) / scale);
  }
  return std::min(std::max<int64_t>(int64_t(idx), 0), a.in - 1);
}

std::optional<Case> nearest_float_division(const Case& c) {
  if (c.op != "interpolate") return std::nullopt;
  const InterpParams p = parse_interpolate(c);
  if (p.mode != InterpMode::Nearest && p.mode != InterpMode::NearestExact) return std::nullopt;
  const bool exact = p.mode == InterpMode::NearestExact;
  std::vector<std::vector<int64_t>> src;
  bool differs = false;
  for (const InterpAxis& a : p.axes) {
    src.emplace_back();
    for (int64_t d = 0; d < a.out; ++d) {
      src.back().push_back(ort_nearest(a, d, exact));
      differs |= src.back().back() != spec_nearest_index(a, d, exact);
    }
  }
  if (!differs) return std::nullopt;
  return gathered_case(c, p, src);
}

// Resize's source coordinate for linear and cubic, in float32 as ORT computes it:
// pytorch_half_pixel (d + 0.5) / scale - 0.5, 0 for an output of one; align_corners, which the
// bridge sends as sizes, d * (in - 1) / (out - 1); d itself where the scale is 1.
float ort_scale(const InterpAxis& a, bool align_corners) {
  return (a.scale_factor && !align_corners) ? float(*a.scale_factor) : float(a.out) / float(a.in);
}

float ort_coordinate(const InterpAxis& a, int64_t dst, bool align_corners) {
  const float d = float(dst), scale = ort_scale(a, align_corners);
  if (scale == 1.0f) return d;
  if (align_corners) return a.out == 1 ? 0.0f : d * float(a.in - 1) / float(a.out - 1);
  return a.out > 1 ? (d + 0.5f) / scale - 0.5f : 0.0f;
}

// Resize cubic (ResizeBiCubic) in float32 throughout: from the coordinate its fraction t, and
// Keys' weights with A = -0.75 evaluated in float32 from t + 1, t, 1 - t and 2 - t. Near t = 0
// the outer weight W(t + 1) = ((A(t+1) - 5A)(t+1) + 8A)(t+1) - 4A cancels from terms of ~3 to
// ~0 and keeps an absolute error of ~12 u, where SPEC's weights are exact to u of themselves:
// an output off by ~1e-7 of its taps' |x| rather than of Σ |w x|.
AxisMap ort_cubic_map(const InterpAxis& a, bool align_corners) {
  const float A = -0.75f;
  AxisMap m(size_t(a.out));
  for (int64_t dst = 0; dst < a.out; ++dst) {
    const float x = ort_coordinate(a, dst, align_corners);
    const float f = std::floor(x), t = x - f;
    const float w[4] = {((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A,
                        ((A + 2) * t - (A + 3)) * t * t + 1,
                        ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1,
                        ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A};
    for (int k = 0; k < 4; ++k) {
      const int64_t src = std::min(std::max<int64_t>(int64_t(f) - 1 + k, 0), a.in - 1);
      m[size_t(dst)].push_back({src, double(w[k])});
    }
  }
  return m;
}

// The equivalent case of a 2-D interpolate of `mode` read through ORT's float32 axis maps;
// none at scale 1 on every axis, where x = d exactly and ORT reads each pixel with SPEC's taps
// and weights (0, 1, 0, 0 for cubic, exact in float32): nothing to state.
std::optional<Case> float32_map_case(const Case& c, InterpMode mode, AxisMap (*map)(const InterpAxis&, bool)) {
  if (c.op != "interpolate") return std::nullopt;
  const InterpParams p = parse_interpolate(c);
  if (p.mode != mode || p.antialias) return std::nullopt;  // these equivalents carry 2 or 4 taps per axis
  if (ort_scale(p.axes[0], p.align_corners) == 1.0f && ort_scale(p.axes[1], p.align_corners) == 1.0f)
    return std::nullopt;
  return separable_map_case(c, p, map(p.axes[0], p.align_corners), map(p.axes[1], p.align_corners));
}

std::optional<Case> cubic_float_weights(const Case& c) { return float32_map_case(c, InterpMode::Bicubic, ort_cubic_map); }

// Resize linear (2-D, UpsampleBilinear) as ORT computes it: the float32 coordinate above,
// clamped into [0, in - 1] in float32, taps i = (int)x and min(i + 1, in - 1) with weights
// |x - (i + 1)| and |x - i| (1/2 each where both taps are one pixel). The weights are exact
// given x, but x carries ~u C of absolute error (C the coordinate), and where one weight is
// small the bound's Σ |w x| does not cover that error times the other tap's |x|.
AxisMap ort_linear_map(const InterpAxis& a, bool align_corners) {
  AxisMap m(size_t(a.out));
  const float top = float(a.in - 1);
  for (int64_t dst = 0; dst < a.out; ++dst) {
    const float x = std::max(0.0f, std::min(ort_coordinate(a, dst, align_corners), top));
    const int64_t i1 = std::min(int64_t(x), a.in - 1), i2 = std::min(i1 + 1, a.in - 1);
    const float w1 = i1 == i2 ? 0.5f : std::fabs(x - float(i2)), w2 = i1 == i2 ? 0.5f : std::fabs(x - float(i1));
    m[size_t(dst)] = {{i1, double(w1)}, {i2, double(w2)}};
  }
  return m;
}

std::optional<Case> bilinear_float_coordinates(const Case& c) {
  return float32_map_case(c, InterpMode::Bilinear, ort_linear_map);
}

// Resize given scales sizes its output by the float32 product float(sf) * float(in), truncated
// (UpsampleBase::ComputeOutputShape: a float scale times an int64 size is a float product).
// Rounding the product matters as much as rounding the scale: 5 * float(1.3999999999999) =
// 6.99999988 is 7.0 in float32, so ORT gives 7 where floor(in * sf) is 6 (measured; over 298
// scales a hair from k / W this rule matched ORT's size every time, floor(in * float(sf)) in
// double 228 times). Where it is not the case's floor(in * sf), ORT cannot produce the case's
// shape (the bridge reports it, as ORT would produce another shape).
int64_t ort_scaled_size(int64_t in, double sf) { return int64_t(std::floor(float(sf) * float(in))); }

bool float_scale_size(const Case& c) {
  if (c.op != "interpolate") return false;
  const InterpParams p = parse_interpolate(c);
  if (p.mode == InterpMode::Area || p.align_corners) return false;  // those are sent as sizes
  for (const InterpAxis& a : p.axes)
    if (a.scale_factor && ort_scaled_size(a.in, *a.scale_factor) != a.out) return true;
  return false;
}

// Resize copies its input when the output shape equals the input shape, whatever the scales
// said (PyTorch's CPU kernels take the same shortcut): the reference with scale factor 1.
std::optional<Case> same_shape_copy(const Case& c) {
  if (c.op != "interpolate") return std::nullopt;
  const InterpParams p = parse_interpolate(c);
  if (p.mode == InterpMode::Area || p.align_corners || p.antialias) return std::nullopt;  // antialias: per axis, below
  bool scaled = false;
  for (const InterpAxis& a : p.axes) {
    if (a.out != a.in) return std::nullopt;
    scaled |= a.scale_factor && *a.scale_factor != 1.0;
  }
  if (!scaled) return std::nullopt;
  Case e = c;
  e.params["scale_factor"] = json(std::vector<double>(p.axes.size(), 1.0));
  return e;
}

// Resize with antialias copies each axis whose output size equals its input size, whatever its
// scale (measured on 1.30: [1, 1, 1, 6] at scale factors [4, 1.03] reads the width 1:1), where
// the filter at scale 1/1.03 blurs. The equivalent gives those axes the scale factor 1.
std::optional<Case> antialias_same_size_axis_copy(const Case& c) {
  if (c.op != "interpolate") return std::nullopt;
  const InterpParams p = parse_interpolate(c);
  if (!p.antialias) return std::nullopt;
  json sf = json::array();
  bool changed = false;
  for (const InterpAxis& a : p.axes) {
    if (!a.scale_factor) return std::nullopt;  // the kernel's scale is in/out: 1 on such an axis
    const bool copied = a.out == a.in && *a.scale_factor != 1.0;
    sf.push_back(copied ? 1.0 : *a.scale_factor);
    changed |= copied;
  }
  if (!changed) return std::nullopt;
  Case e = c;
  e.params["scale_factor"] = sf;
  return e;
}

// RoiAlign sizes its sample table with SafeInt from gh * gw; an aligned (half_pixel) reversed
// box on the adaptive grid can make one of gh = ceil(rh / PH), gw = ceil(rw / PW) negative and
// the other positive, and ORT raises "Integer overflow" instead of returning 0 (torchvision
// raises on the same boxes, for its own reason).
bool roi_align_negative_grid(const Case& c) {
  if (c.op != "roi_align") return false;
  const RoiAlignParams p = parse_roi_align(c);
  if (!p.aligned || p.sampling_ratio > 0) return false;
  const Tensor& rois = c.in("rois");
  const double s = double(float(p.spatial_scale));  // the attribute ORT sees
  for (int64_t k = 0; k < p.K; ++k) {
    const double rw = rois.at(k, 3) * s - rois.at(k, 1) * s, rh = rois.at(k, 4) * s - rois.at(k, 2) * s;
    const int64_t gh = int64_t(std::ceil(rh / double(p.PH))), gw = int64_t(std::ceil(rw / double(p.PW)));
    if (gh * gw < 0) return true;
  }
  return false;
}

// GridSample nearest with reflection padding rounds the unnormalised coordinate to a pixel
// first and reflects that integer pixel into the image; SPEC (and torch) reflect the coordinate
// and round after. Just outside the map they part: align_corners 0, H = 4, y = 4.5 reflects to
// 2.5 and rounds to pixel 2 (SPEC), where ORT rounds 4.5 to 4 and reflects it to pixel 3.
// The equivalent case moves each such grid value to the centre of the pixel ORT reads, which
// the reference reads without reflecting; grad_grid is 0 either way.
std::optional<Case> nearest_round_then_reflect(const Case& c) {
  if (c.op != "grid_sample") return std::nullopt;
  const GridSampleParams p = parse_grid_sample(c);
  if (p.mode != GridMode::Nearest || p.padding != GridPadding::Reflection) return std::nullopt;
  Tensor g = c.in("grid");
  const int64_t sizes[3] = {p.W, p.H, p.D};
  bool changed = false;
  for (size_t i = 0; i < g.data.size(); ++i) {
    if (!std::isfinite(g.data[i])) continue;
    const int64_t S = sizes[i % size_t(p.nd)];
    const double u = ref::grid_unnormalise(g.data[i], S, p.align_corners);
    const double spec_pixel = std::nearbyint(ref::grid_pad(u, S, p.padding, p.align_corners).c);
    const double ort_pixel = std::nearbyint(ref::grid_pad(std::nearbyint(u), S, p.padding, p.align_corners).c);
    if (ort_pixel == spec_pixel) continue;
    g.data[i] = p.align_corners ? (S > 1 ? 2 * ort_pixel / double(S - 1) - 1 : 0.0) : (2 * ort_pixel + 1) / double(S) - 1;
    changed = true;
  }
  if (!changed) return std::nullopt;
  Case e = c;
  e.inputs.at("grid") = g;
  return e;
}

}  // namespace

namespace {

// Resize on uint8 images casts its float result to uint8, truncating (measured on 1.30: bilinear
// 1x11 -> 1x22 gives 123 where the exact value is 123.5, linear 19 for 19.875, trilinear 222
// for an exact 223 computed as 222.99998). Every Resize mode's weights sum to 1, so the
// reference on the pixels less 1/2 is the exact value less 1/2, which rounded half up is the
// truncation: the equivalent case.
std::optional<Case> uint8_truncates(const Case& c) {
  if (c.op != "interpolate") return std::nullopt;
  const InterpParams p = parse_interpolate(c);
  // Nearest copies; antialias rounds (its two passes in fixed point, Backend::uint8_error).
  if (p.mode == InterpMode::Nearest || p.mode == InterpMode::NearestExact || p.antialias) return std::nullopt;
  Case e = c;
  for (double& v : e.inputs.at("input").data) v -= 0.5;
  return e;
}

}  // namespace

const std::vector<Divergence>& onnxruntime_uint8_divergences() {
  static const std::vector<Divergence> list = [] {
    // First: the other equivalents carry the input's values (some into a deform_conv2d case),
    // so the pixels are lowered before they are.
    std::vector<Divergence> l = {{"ort-resize-uint8-truncates",
                                  "Resize on uint8 images truncates its float result instead of rounding it (bilinear "
                                  "1x11 -> 1x22: 123 where the exact value is 123.5, linear 19 for 19.875)",
                                  uint8_truncates, nullptr,
       R"({"op":"interpolate","params":{"mode":"linear","size":[4],"align_corners":false},
        "inputs":{"input":{"shape":[1,1,2],"data":[0,1]}}})"}};
    for (const Divergence& d : onnxruntime_divergences()) l.push_back(d);
    return l;
  }();
  return list;
}

const std::vector<Divergence>& onnxruntime_divergences() {
  static const std::vector<Divergence> list = {
      {"ort-float32-spatial-scale",
       "RoiAlign / MaxRoiPool take spatial_scale as an ONNX float attribute: the scale is rounded to float32 (0.3 -> "
       "0.30000001192), moving samples across the y = -1 / y = H cut-offs",
       float_spatial_scale, nullptr,
       R"({"op":"roi_align","params":{"output_size":[1,1],"spatial_scale":0.3,"sampling_ratio":1,"aligned":false},
        "inputs":{"input":{"shape":[1,1,1,1],"data":[1]},"rois":{"shape":[1,5],"data":[0,0,-5,0,-5]}}})"},
      {"ort-resize-same-shape-copy",
       "Resize copies the input when the output shape equals the input shape, ignoring scales != 1 (5 -> 5 at sf 1.1)",
       same_shape_copy, nullptr,
       R"({"op":"interpolate","params":{"mode":"linear","scale_factor":[1.1],"align_corners":false},
        "inputs":{"input":{"shape":[1,1,2],"data":[0,1]}}})"},
      {"ort-resize-antialias-same-size-axis-copy",
       "Resize with antialias copies an axis whose output size equals its input size, ignoring its scale != 1 "
       "([1, 1, 1, 6] at scale factors [4, 1.03] keeps the width as it is)",
       antialias_same_size_axis_copy, nullptr,
       R"({"op":"interpolate","params":{"mode":"bilinear","scale_factor":[1,1.1],"antialias":true},
        "inputs":{"input":{"shape":[1,1,1,2],"data":[0,1]}}})"},
      {"ort-roi_align-negative-grid-raises",
       "RoiAlign raises (SafeInt integer overflow) for an aligned reversed box whose adaptive grid has gh*gw < 0; the "
       "spec gives 0",
       nullptr, roi_align_negative_grid,
       R"({"op":"roi_align","params":{"output_size":[1,1],"spatial_scale":1,"sampling_ratio":-1,"aligned":true},
        "inputs":{"input":{"shape":[1,1,1,1],"data":[1]},"rois":{"shape":[1,5],"data":[0,0,1,1,0]}}})"},
      {"ort-resize-size1-origin",
       "Resize pytorch_half_pixel maps an axis of output size 1 to source 0 (2x2 -> 1x1 bilinear: 1.0; SPEC: 2.5, the "
       "centre)",
       size1_origin, nullptr,
       R"({"op":"interpolate","params":{"mode":"linear","size":[1],"align_corners":false},
        "inputs":{"input":{"shape":[1,1,2],"data":[0,1]}}})"},
      {"ort-resize-nearest-float-division",
       "Resize nearest divides by the float32 scale (x / scale, (x + 0.5) / scale - 0.5 rounded half up); SPEC "
       "multiplies by the float32 inverse: indices differ where the position is near an integer",
       nearest_float_division, nullptr,
       R"({"op":"interpolate","params":{"mode":"nearest","scale_factor":[0.2857142857142857]},
        "inputs":{"input":{"shape":[1,1,11],"data":[0,1,2,3,4,5,6,7,8,9,10]}}})"},
      {"ort-resize-cubic-float32-weights",
       "Resize cubic computes its coordinates and Keys weights in float32: the outer weight near t = 0 keeps an "
       "absolute error of ~12 u, beyond the float32 bound of Σ |w x| (the equivalent carries ORT's float32 weights)",
       cubic_float_weights, nullptr,
       R"({"op":"interpolate","params":{"mode":"bicubic","size":[1,2],"align_corners":false},
        "inputs":{"input":{"shape":[1,1,1,14],"data":[0,1,0,0,0,0,0,0,0,0,0,0,0,0]}}})"},
      {"ort-resize-bilinear-float32-coordinates",
       "Resize linear (2-D) computes its source coordinates in float32: a weight's absolute error of ~u C, times a "
       "tap whose weight is small, exceeds the float32 bound of Σ |w x| (the equivalent carries ORT's weights)",
       bilinear_float_coordinates, nullptr,
       R"({"op":"interpolate","params":{"mode":"bilinear","size":[1,2],"align_corners":false},
        "inputs":{"input":{"shape":[1,1,1,14],"data":[0,0,1,0,0,0,0,0,0,0,0,0,0,0]}}})"},
      {"ort-grid_sample-nearest-round-then-reflect",
       "GridSample nearest with reflection padding rounds the coordinate to a pixel and then reflects the pixel; SPEC "
       "reflects the coordinate and then rounds (align_corners 0, H = 4, y = 4.5: ORT reads pixel 3, SPEC pixel 2)",
       nearest_round_then_reflect, nullptr,
       R"({"op":"grid_sample","params":{"mode":"nearest","padding_mode":"reflection","align_corners":false},
        "inputs":{"input":{"shape":[1,1,1,2],"data":[0,1]},"grid":{"shape":[1,1,1,2],"data":[-2,0]}}})"},
      {"ort-resize-float-scale-size",
       "Resize given scales sizes its output as the float32 product float(sf) * float(in), truncated: where that "
       "differs from floor(in * sf) the case's shape cannot be produced (refused)",
       nullptr, float_scale_size,
       R"({"op":"interpolate","params":{"mode":"linear","scale_factor":[2.99999999],"align_corners":false},
        "inputs":{"input":{"shape":[1,1,1],"data":[1]}}})"},
  };
  return list;
}

}  // namespace oplab
