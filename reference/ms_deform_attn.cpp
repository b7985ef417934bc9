// ms_deform_attn reference, forward and backward (SPEC §13): multi-scale deformable attention
// of Deformable DETR. Each query, head and level samples P points of that level's map with
// deform_conv2d's zero-padded bilinear rule (reference/zero_pad_bilinear.h, its conventions
// included) and sums them weighted by the attention weights:
//   out[n, q, m*Dh + d] = sum_l sum_p a[n,q,m,l,p] * B_l(value[n, start_l + ., m, d]; y, x)
// with y = loc_y * H_l - 0.5, x = loc_x * W_l - 0.5 (reference/ms_deform_attn_points.h).
//
// A non-finite location (NaN or +-Inf in either coordinate) samples nothing: the point adds 0
// to the output whatever its weight (no 0 * Inf), and gets and gives no gradient at all
// (docs/semantics.md). NaN/Inf in value, attention_weights or grad_output flow through IEEE
// arithmetic.
#include <cstdint>

#include "reference/ms_deform_attn_points.h"
#include "reference/ref_backend.h"
#include "reference/reference.h"
#include "reference/zero_pad_bilinear.h"

namespace oplab::ref {
namespace {

// Flat index of value[n, start_l + h*W_l + w, m, d].
struct ValueIndex {
  const MsDeformAttnParams& p;
  int64_t at(const MsdaPoint& s, int64_t h, int64_t w, int64_t d) const {
    const int64_t row = p.start[size_t(s.l)] + h * p.W[size_t(s.l)] + w;
    return ((s.n * p.S + row) * p.M + s.m) * p.Dh + d;
  }
};

}  // namespace

Tensor ms_deform_attn_forward(const MsDeformAttnParams& p, const Tensor& value, const Tensor& loc, const Tensor& aw) {
  Tensor out(p.output_shape());
  const ValueIndex vi{p};
  for_each_msda_point(p, loc, [&](const MsdaPoint& s) {
    if (!s.finite) return;
    const double a = aw.data[size_t(s.aw)];
    const int64_t H = p.H[size_t(s.l)], W = p.W[size_t(s.l)];
    for (int64_t d = 0; d < p.Dh; ++d) {
      const double b = zero_pad_bilinear(s.y, s.x, H, W, [&](int64_t h, int64_t w) { return value.data[size_t(vi.at(s, h, w, d))]; });
      out.at(s.n, s.q, s.m * p.Dh + d) += a * b;
    }
  });
  return out;
}

MsDeformAttnGrads ms_deform_attn_backward(const MsDeformAttnParams& p, const Tensor& value, const Tensor& loc,
                                          const Tensor& aw, const Tensor& gout) {
  MsDeformAttnGrads g{Tensor(value.shape), Tensor(loc.shape), Tensor(aw.shape)};
  const ValueIndex vi{p};
  for_each_msda_point(p, loc, [&](const MsdaPoint& s) {
    if (!s.finite) return;
    const double a = aw.data[size_t(s.aw)];
    const int64_t H = p.H[size_t(s.l)], W = p.W[size_t(s.l)];
    double ga = 0, gy = 0, gx = 0;  // summed over the channels d
    for (int64_t d = 0; d < p.Dh; ++d) {
      const double go = gout.at(s.n, s.q, s.m * p.Dh + d);
      auto px = [&](int64_t h, int64_t w) { return value.data[size_t(vi.at(s, h, w, d))]; };
      // grad_value: the transpose of the sample, a * corner weight * gout to each corner.
      zero_pad_scatter(s.y, s.x, H, W, a * go,
                       [&](int64_t h, int64_t w, double v) { g.value.data[size_t(vi.at(s, h, w, d))] += v; });
      ga += go * zero_pad_bilinear(s.y, s.x, H, W, px);
      const ZeroPadGrad dB = zero_pad_coord_grad(s.y, s.x, H, W, px);
      gy += go * dB.dy;
      gx += go * dB.dx;
    }
    g.attention_weights.data[size_t(s.aw)] = ga;
    // d(pixel)/d(location) is the level's size: x = loc_x * W_l - 0.5.
    g.sampling_locations.data[size_t(s.loc)] = a * double(W) * gx;
    g.sampling_locations.data[size_t(s.loc + 1)] = a * double(H) * gy;
  });
  return g;
}

// ---- the `ref` backend's entry for this op ----
namespace {

Result run(const Case& c, const ValidParams& vp) {
  const auto& p = vp.as<MsDeformAttnParams>();
  const Tensor &value = c.in("value"), &loc = c.in("sampling_locations"), &aw = c.in("attention_weights");
  Result r;
  r.outputs["output"] = ms_deform_attn_forward(p, value, loc, aw);
  if (c.grad_output) {
    MsDeformAttnGrads g = ms_deform_attn_backward(p, value, loc, aw, *c.grad_output);
    r.grads["value"] = std::move(g.value);
    r.grads["sampling_locations"] = std::move(g.sampling_locations);
    r.grads["attention_weights"] = std::move(g.attention_weights);
  }
  return r;
}

const RefOpRegistrar kRegistrar{"ms_deform_attn", {run}};

}  // namespace

}  // namespace oplab::ref
