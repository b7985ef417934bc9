#include "fuzz/features.h"

#include <algorithm>
#include <cmath>

#include "core/params.h"

namespace oplab::fuzz {

namespace {

// Where a sampling coordinate lies relative to the borders of an axis of length `len`.
void classify_coord(double v, int64_t len, const char* axis, std::set<std::string>& f) {
  const double L = double(len);
  const std::string a = axis;
  if (v == -1) f.insert(a + "=-1");
  if (v == 0) f.insert(a + "=0");
  if (v == L - 1) f.insert(a + "=len-1");
  if (v == L) f.insert(a + "=len");
  for (double e : {-1.0, 0.0, L - 1, L})
    if (v != e && std::fabs(v - e) < 1e-6) f.insert(a + " a hair from a border");
  if (v < -1 || v > L) f.insert(a + " outside");
  if (std::fabs(v) > 100 + L) f.insert(a + " far outside");
  if (v == std::floor(v) && v > 0 && v < L - 1) f.insert(a + " on an interior lattice point");
}

void deform_conv2d_features(const Case& c, std::set<std::string>& f) {
  const DeformConvParams p = parse_deform_conv2d(c);
  if (p.N == 0) f.insert("N=0");
  if (p.G > 1) f.insert("weight groups");
  if (p.D > 1) f.insert("offset groups");
  if (p.has_mask) f.insert("mask");
  if (p.has_bias) f.insert("bias");
  if (p.sh > 1 || p.sw > 1) f.insert("stride>1");
  if (p.dh > 1 || p.dw > 1) f.insert("dilation>1");
  if (p.ph == 0 && p.pw == 0) f.insert("padding 0");
  if (p.Ho == 1 && p.Wo == 1) f.insert("1x1 output");
  if (p.kh >= 4 || p.kw >= 4) f.insert("kernel 4 or 5");
  const Tensor& off = c.in("offset");
  const int64_t K = p.kh * p.kw;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t d = 0; d < p.D; ++d)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t oy = 0; oy < p.Ho; ++oy)
          for (int64_t ox = 0; ox < p.Wo; ++ox) {
            const double y = double(oy * p.sh - p.ph + (k / p.kw) * p.dh) + off.at(n, 2 * (d * K + k), oy, ox);
            const double x = double(ox * p.sw - p.pw + (k % p.kw) * p.dw) + off.at(n, 2 * (d * K + k) + 1, oy, ox);
            classify_coord(y, p.H, "sample y", f);
            classify_coord(x, p.W, "sample x", f);
          }
}

// The sample coordinates of roi_align / deform_roi_pool (without offset) along one axis.
void roi_axis_samples(double start, double len, int64_t bins, int64_t grid, int64_t size, const char* axis,
                      std::set<std::string>& f) {
  const double bin = len / double(bins);
  for (int64_t b = 0; b < bins; ++b)
    for (int64_t i = 0; i < grid; ++i) classify_coord(start + double(b) * bin + (double(i) + 0.5) * bin / double(grid), size, axis, f);
}

template <class P>
void roi_box_features(const Case& c, const P& p, bool aligned, int64_t sampling_ratio, bool clamp, std::set<std::string>& f) {
  if (p.K == 0) f.insert("K=0");
  if (p.N == 0) f.insert("N=0");
  if (p.H == 0 || p.W == 0) f.insert("H=0 or W=0");
  if (p.PH == 1 && p.PW == 1) f.insert("1x1 output");
  f.insert(sampling_ratio > 0 ? "fixed grid" : "adaptive grid");
  const Tensor& rois = c.in("rois");
  const double off = aligned ? 0.5 : 0.0;
  for (int64_t k = 0; k < p.K; ++k) {
    const double x1 = rois.at(k, 1) * p.spatial_scale, y1 = rois.at(k, 2) * p.spatial_scale;
    const double x2 = rois.at(k, 3) * p.spatial_scale, y2 = rois.at(k, 4) * p.spatial_scale;
    if (x2 < x1 || y2 < y1) f.insert("reversed box");
    if (x2 == x1 && y2 == y1) f.insert("zero-size box");
    if (x2 < 0 || y2 < 0 || x1 > double(p.W) || y1 > double(p.H)) f.insert("box outside the image");
    double rw = x2 - x1, rh = y2 - y1;
    if (clamp) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    const int64_t gh = sampling_ratio > 0 ? sampling_ratio : int64_t(std::ceil(rh / double(p.PH)));
    const int64_t gw = sampling_ratio > 0 ? sampling_ratio : int64_t(std::ceil(rw / double(p.PW)));
    if (gh <= 0 || gw <= 0) f.insert("bins with no samples");
    if (sampling_ratio <= 0 && gh > 0 && std::ceil(rh / double(p.PH)) == rh / double(p.PH)) f.insert("adaptive grid on an exact integer");
    for (double q : {rh / double(p.PH), rw / double(p.PW)})
      if (sampling_ratio <= 0 && q > 0 && q != std::round(q) && std::fabs(q - std::round(q)) < 1e-6)
        f.insert("adaptive grid a hair from an integer (ceil jumps)");
    roi_axis_samples(y1 - off, rh, p.PH, std::max<int64_t>(gh, 0), p.H, "sample y", f);
    roi_axis_samples(x1 - off, rw, p.PW, std::max<int64_t>(gw, 0), p.W, "sample x", f);
  }
}

void roi_pool_features(const Case& c, std::set<std::string>& f) {
  const RoiPoolParams p = parse_roi_pool(c);
  if (p.K == 0) f.insert("K=0");
  if (p.N == 0) f.insert("N=0");
  if (p.H == 0 || p.W == 0) f.insert("H=0 or W=0");
  const Tensor& rois = c.in("rois");
  for (int64_t k = 0; k < p.K; ++k) {
    for (int j = 1; j < 5; ++j) {
      const double v = rois.at(k, j) * p.spatial_scale;
      if (v - std::floor(v) == 0.5) f.insert("round tie (x*s = n + 0.5)");
    }
    const double xs = std::round(rois.at(k, 1) * p.spatial_scale), xe = std::round(rois.at(k, 3) * p.spatial_scale);
    const double ys = std::round(rois.at(k, 2) * p.spatial_scale), ye = std::round(rois.at(k, 4) * p.spatial_scale);
    if (xe < xs || ye < ys) f.insert("reversed box");
    if (xe < 0 || ye < 0 || xs >= double(p.W) || ys >= double(p.H)) f.insert("box outside the image (empty bins)");
    if (std::max(xe - xs + 1, 1.0) < double(p.PW) || std::max(ye - ys + 1, 1.0) < double(p.PH)) f.insert("more bins than pixels (overlapping bins)");
  }
}

void interpolate_features(const Case& c, std::set<std::string>& f) {
  const InterpParams p = parse_interpolate(c);
  f.insert(std::string(interp_mode_name(p.mode)) + " " + std::to_string(p.axes.size()) + "-D");
  if (p.N == 0) f.insert("N=0");
  const json& ac = c.params.value("align_corners", json());
  if (!ac.is_null()) f.insert(ac.get<bool>() ? "align_corners=true" : "align_corners=false");
  const bool has_sf = c.params.contains("scale_factor") && !c.params.at("scale_factor").is_null();
  f.insert(has_sf ? "scale_factor" : "size");
  if (has_sf) {
    const json& rc = c.params.value("recompute_scale_factor", json());
    f.insert(rc.is_null() ? "recompute=null" : rc.get<bool>() ? "recompute=true" : "recompute=false");
  }
  if (p.mode == InterpMode::Nearest || p.mode == InterpMode::NearestExact) {
    // Where the source position (float32, as the kernel computes it) is an exact integer:
    // nearest-exact rounds a .5 tie there, nearest floors a lattice point.
    for (const InterpAxis& a : p.axes) {
      const float scale = interp_nearest_scale(a);
      for (int64_t dst = 1; dst < a.out; ++dst) {
        const float pos = p.mode == InterpMode::NearestExact ? float(double(dst) + 0.5) * scale : float(dst) * scale;
        if (pos == std::floor(pos) && pos < float(a.in)) f.insert("nearest source index on a tie");
      }
    }
  }
  const json& sfj = c.params.value("scale_factor", json());
  for (size_t i = 0; i < p.axes.size(); ++i) {
    const InterpAxis& a = p.axes[i];
    if (a.out == 1) f.insert("output size 1");
    if (a.out < a.in) f.insert("downsampling");
    if (a.out == a.in) f.insert("same size");
    if (has_sf) {
      const double sf = sfj.is_array() ? sfj[i].get<double>() : sfj.get<double>();
      if (sf != std::floor(sf)) f.insert("non-integer scale factor");
      if (sf < 1) f.insert("scale factor < 1");
      const double prod = double(a.in) * sf;
      if (prod != std::round(prod) && std::fabs(prod - std::round(prod)) < 1e-12) f.insert("in*sf within 1e-12 of an integer");
    }
  }
}

}  // namespace

DrivingParameter driving_parameter(const Case& c) {
  DrivingParameter d;
  if (c.op == "deform_conv2d") {
    d.name = "max |offset| (px)";
    for (double v : c.in("offset").data)
      if (std::isfinite(v)) d.value = std::max(d.value, std::fabs(v));
  } else if (c.op == "interpolate") {
    d.name = "scale (out/in)";
    for (const auto& a : parse_interpolate(c).axes) d.value = std::max(d.value, double(a.out) / double(a.in));
  } else {
    d.name = "longest box side (feature px)";
    const Tensor& rois = c.in("rois");
    const double s = c.params.value("spatial_scale", 1.0);
    for (int64_t k = 0; k < rois.dim(0); ++k)
      d.value = std::max({d.value, std::fabs(rois.at(k, 3) - rois.at(k, 1)) * s, std::fabs(rois.at(k, 4) - rois.at(k, 2)) * s});
  }
  return d;
}

// Edges every op has: the feature map one value everywhere (every max a tie), and spatial
// sizes of 1 or an odd prime >= 5.
static void common_features(const Case& c, std::set<std::string>& f) {
  const Tensor* x = c.opt("input");
  if (!x) return;
  if (x->numel() > 1 && std::all_of(x->data.begin(), x->data.end(), [&](double v) { return v == x->data[0]; }))
    f.insert("constant input (ties for max)");
  for (int d = 2; d < x->rank(); ++d) {
    const int64_t n = x->dim(d);
    if (n == 1) f.insert("spatial size 1");
    if (n == 5 || n == 7 || n == 11 || n == 13) f.insert("odd prime spatial size");
  }
}

std::set<std::string> case_features(const Case& c) {
  std::set<std::string> f;
  common_features(c, f);
  if (c.op == "deform_conv2d") deform_conv2d_features(c, f);
  else if (c.op == "roi_pool") roi_pool_features(c, f);
  else if (c.op == "roi_align") {
    const RoiAlignParams p = parse_roi_align(c);
    f.insert(p.mode == PoolMode::Max ? "max mode" : "avg mode");
    f.insert(p.aligned ? "aligned" : "not aligned");
    roi_box_features(c, p, p.aligned, p.sampling_ratio, !p.aligned, f);
  } else if (c.op == "deform_roi_pool") {
    const DeformRoiPoolParams p = parse_deform_roi_pool(c);
    f.insert(p.has_offset ? "offset" : "no offset");
    roi_box_features(c, p, true, p.sampling_ratio, false, f);
  } else if (c.op == "interpolate") interpolate_features(c, f);
  return f;
}

}  // namespace oplab::fuzz
