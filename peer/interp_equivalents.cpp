#include "peer/interp_equivalents.h"

#include <algorithm>
#include <cmath>

namespace oplab {

int64_t spec_nearest_index(const InterpAxis& a, int64_t dst, bool exact) {
  const float scale = interp_nearest_scale(a);
  const float pos = exact ? float(double(dst) + 0.5) * scale : float(dst) * scale;
  return std::min(int64_t(std::floor(pos)), a.in - 1);
}

Case gathered_case(const Case& c, const InterpParams& p, const std::vector<std::vector<int64_t>>& src) {
  // Padded to three axes (D, H, W) with single-pixel leading axes.
  const size_t pad = 3 - p.axes.size();
  std::vector<InterpAxis> axes(pad, InterpAxis{1, 1, std::nullopt});
  std::vector<std::vector<int64_t>> idx(pad, std::vector<int64_t>{0});
  for (size_t i = 0; i < p.axes.size(); ++i) axes.push_back(p.axes[i]), idx.push_back(src[i]);
  const Tensor& x = c.in("input");
  const int64_t in_plane = axes[0].in * axes[1].in * axes[2].in;
  Tensor g(p.output_shape());
  size_t k = 0;
  for (int64_t n = 0; n < p.N * p.C; ++n)
    for (int64_t d = 0; d < axes[0].out; ++d)
      for (int64_t h = 0; h < axes[1].out; ++h)
        for (int64_t w = 0; w < axes[2].out; ++w)
          g.data[k++] = x.data[size_t(n * in_plane + (idx[0][size_t(d)] * axes[1].in + idx[1][size_t(h)]) * axes[2].in +
                                      idx[2][size_t(w)])];
  json size = json::array();
  for (const InterpAxis& a : p.axes) size.push_back(a.out);
  Case e;
  e.op = "interpolate";
  e.params = json{{"mode", "nearest"}, {"size", size}};
  e.inputs["input"] = g;
  return e;
}

std::optional<InterpParams> resize_params(const Case& c) {
  if (c.op != "interpolate") return std::nullopt;
  InterpParams p = parse_interpolate(c);
  if (p.axes.size() != 2 || p.align_corners) return std::nullopt;
  return p;
}

std::optional<Case> sized_case(const Case& c, const InterpParams& p) {
  bool differs = false;
  json size = json::array();
  for (const InterpAxis& a : p.axes) {
    differs |= a.scale_factor && 1.0 / *a.scale_factor != double(a.in) / double(a.out);
    size.push_back(a.out);
  }
  if (!differs) return std::nullopt;
  Case e = c;
  e.params.erase("scale_factor");
  e.params.erase("recompute_scale_factor");
  e.params["size"] = size;
  return e;
}

namespace {

// One axis of the equivalent convolution: `taps` kernel taps, a stride and a zero-padded input
// extent such that a stride-`stride`, unpadded convolution over `extent` pixels has exactly
// `out` outputs and the extent holds the whole image. The kernel is only as wide as the peer's
// widest tap list: a large downscale takes a stride instead of a kernel as wide as in - out + 1
// (512 -> 128 would need 385 x 385 taps per output, a 38 GB offset tensor).
struct EquivalentAxis {
  int64_t taps, stride, extent;
};

EquivalentAxis equivalent_axis(int64_t in, int64_t out, int64_t taps) {
  if (out == 1) {  // one output: any stride past the leftover width keeps it one
    const int64_t stride = std::max<int64_t>(1, in - taps + 1);
    return {taps, stride, std::max(in, taps)};
  }
  const int64_t stride = in > taps ? (in - taps + out - 2) / (out - 1) : 1;  // (out-1)*stride >= in-taps
  return {taps, stride, (out - 1) * stride + taps};
}

size_t widest(const AxisMap& m) {
  size_t t = 1;
  for (const auto& r : m) t = std::max(t, r.size());
  return t;
}

}  // namespace

Case separable_map_case(const Case& c, const InterpParams& p, const AxisMap& rows, const AxisMap& cols) {
  const int64_t H = p.axes[0].in, W = p.axes[1].in, Ho = p.axes[0].out, Wo = p.axes[1].out;
  const EquivalentAxis ay = equivalent_axis(H, Ho, int64_t(widest(rows)));
  const EquivalentAxis ax = equivalent_axis(W, Wo, int64_t(widest(cols)));
  const int64_t kh = ay.taps, kw = ax.taps, Hp = ay.extent, Wp = ax.extent;  // Hp >= H, Wp >= W
  const int64_t planes = p.N * p.C, K = kh * kw;
  const Tensor& x = c.in("input");
  Tensor xin(Shape{p.N, p.C, Hp, Wp});
  for (int64_t n = 0; n < planes; ++n)
    for (int64_t y = 0; y < H; ++y)
      for (int64_t q = 0; q < W; ++q) xin.data[size_t((n * Hp + y) * Wp + q)] = x.data[size_t((n * H + y) * W + q)];
  Tensor weight(Shape{p.C, 1, kh, kw});
  std::fill(weight.data.begin(), weight.data.end(), 1.0);
  Tensor offset(Shape{p.N, 2 * K, Ho, Wo}), mask(Shape{p.N, K, Ho, Wo});
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t oy = 0; oy < Ho; ++oy)
      for (int64_t ox = 0; ox < Wo; ++ox)
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j) {
            const int64_t tap = i * kw + j;
            const auto& ry = rows[size_t(oy)];
            const auto& cx = cols[size_t(ox)];
            double ty = -10.0 - double(Hp), tx = -10.0 - double(Wp), m = 0.0;  // unused: far outside, reads 0
            if (size_t(i) < ry.size() && size_t(j) < cx.size()) {
              ty = double(ry[size_t(i)].first);
              tx = double(cx[size_t(j)].first);
              m = ry[size_t(i)].second * cx[size_t(j)].second;
            }
            // The tap samples at oy * stride + i + offset: the whole pixel ty.
            offset.at(n, 2 * tap, oy, ox) = ty - double(oy * ay.stride + i);
            offset.at(n, 2 * tap + 1, oy, ox) = tx - double(ox * ax.stride + j);
            mask.at(n, tap, oy, ox) = m;
          }
  Case e;
  e.op = "deform_conv2d";
  e.params = json{{"stride", {ay.stride, ax.stride}}, {"padding", {0, 0}}, {"dilation", {1, 1}}};
  e.inputs["input"] = xin;
  e.inputs["weight"] = weight;
  e.inputs["offset"] = offset;
  e.inputs["mask"] = mask;
  return e;
}

}  // namespace oplab
