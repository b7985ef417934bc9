// Study variant `dcn-onnx`: deform_conv2d as the ONNX-operator decomposition of the second seed
// article (the deform_conv2d_onnx_exporter module), evaluated in double, one graph stage at a
// time, so the lab can confirm that the decomposition is torchvision's op (SPEC §2, §8).
//
// The graph, stage by stage:
//  1. Pad: zeros around the input, P = p + [p == 0] per axis. The extra pixel when p = 0 makes
//     sure a zero row/column always surrounds the image: that is what lets Clip replace the
//     per-corner bounds masks (the article's speed-up).
//  2. Sampling point in the padded image: p = (p_0 + p_k) + offset with p_0 = oy*stride + [p == 0]
//     and p_k = i*dilation. The integer part is a constant of the graph, the offset is added once.
//  3. Floor, then t = floor, b = t + 1, each Clip-ped into [0, Hp-1]: a corner outside the padded
//     image lands on its zero border, so it reads 0 exactly as SPEC §2's per-corner rule does.
//  4. Weights from the unclipped fraction d = p - floor(p): tl = (1-dx)(1-dy), br = dx*dy,
//     bl = (1-dx)*dy, tr = dx*(1-dy); GatherND of the four corners; Sum(tl, br, bl, tr) in that
//     order; times the mask.
//  5. The values are laid out as [N, C, Ho*kh, Wo*kw] and one Conv with kernel = stride =
//     (kh, kw) and the weight groups computes the output; the bias is added after the Conv.
// In exact arithmetic every stage agrees with SPEC §2, so in double it matches torchvision to
// rounding. (In float32 it would differ: the padding is added to the coordinate before the
// floor, and the corners are summed in another order.)
//
// Scope: everything torchvision's op takes (stride, padding, dilation, weight and offset
// groups, mask, bias), forward only: an ONNX export graph is an inference graph, it has no
// backward. Non-finite offsets are refused: Floor then Cast of NaN/Inf to int64 is undefined.
#include <algorithm>
#include <cmath>

#include "core/backend.h"
#include "core/params.h"
#include "reference/deform_conv2d_points.h"
#include "variants/dcn_steps.h"

namespace oplab {
namespace {

// Stage 3 on one axis: the two clipped corner indices; stage 4's fraction.
struct AxisCorners {
  int64_t t = 0, b = 0;
  double d = 0;  // p - floor(p), from the unclipped floor
};

AxisCorners axis_corners(double p, int64_t padded_len) {
  AxisCorners a;
  const double f = std::floor(p);
  const double hi = double(padded_len - 1);
  // Clip before converting: the same indices as Cast-then-Clip for every representable value,
  // without the undefined conversion of a huge double.
  a.t = int64_t(std::clamp(f, 0.0, hi));
  a.b = int64_t(std::clamp(f + 1.0, 0.0, hi));
  a.d = p - f;
  return a;
}

class DcnOnnxBackend : public Backend {
 public:
  std::string name() const override { return "dcn-onnx"; }
  BackendRole role() const override { return BackendRole::StudyVariant; }
  std::string description() const override {
    return "study: the ONNX-operator decomposition of deform_conv2d (pad p+[p==0], Floor, Clip, GatherND, "
           "strided Conv), forward only, in double";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "deform_conv2d") return "dcn-onnx implements deform_conv2d only";
    if (c.grad_output) return std::string("dcn-onnx: an ONNX export graph is inference only, it has no backward");
    for (double v : c.in("offset").data)
      if (!std::isfinite(v)) return std::string("dcn-onnx: Floor then Cast of a non-finite offset to int64 is undefined");
    return std::nullopt;
  }

  Result run(const Case& c, const ValidParams& vp) override {
    const auto& p = vp.as<DeformConvParams>();
    const Tensor& X = c.in("input");
    const Tensor& off = c.in("offset");
    const Tensor& Wt = c.in("weight");
    const Tensor* mask = c.opt("mask");
    const Tensor* bias = c.opt("bias");
    const int64_t extra_h = p.ph == 0 ? 1 : 0, extra_w = p.pw == 0 ? 1 : 0;
    const int64_t Ph = p.ph + extra_h, Pw = p.pw + extra_w;
    const int64_t Hp = p.H + 2 * Ph, Wp = p.W + 2 * Pw;
    const int64_t Cd = p.C / p.D;  // input channels per offset group

    // Stage 1: Pad.
    const Tensor Xp = dcn_steps::zero_pad(X, Ph, Pw);

    // Stages 2-4, written straight into the Conv's input layout (stage 5's reshape).
    Tensor V({p.N, p.C, p.Ho * p.kh, p.Wo * p.kw});
    ref::for_each_dcn_point(p, [&](const ref::DcnPoint& q) {
      const int64_t n = q.n, oy = q.oy, ox = q.ox;
      const double base_y = double(oy * p.sh + extra_h + q.i * p.dh);
      const double base_x = double(ox * p.sw + extra_w + q.j * p.dw);
      const AxisCorners ry = axis_corners(base_y + off.at(n, q.dy_chan, oy, ox), Hp);
      const AxisCorners rx = axis_corners(base_x + off.at(n, q.dy_chan + 1, oy, ox), Wp);
      const double w_tl = (1.0 - rx.d) * (1.0 - ry.d);
      const double w_br = rx.d * ry.d;
      const double w_bl = (1.0 - rx.d) * ry.d;
      const double w_tr = rx.d * (1.0 - ry.d);
      const double m = mask ? mask->at(n, q.mask_chan, oy, ox) : 1.0;
      for (int64_t ch = q.d * Cd; ch < (q.d + 1) * Cd; ++ch) {
        const double v = w_tl * Xp.at(n, ch, ry.t, rx.t) + w_br * Xp.at(n, ch, ry.b, rx.b) +
                         w_bl * Xp.at(n, ch, ry.b, rx.t) + w_tr * Xp.at(n, ch, ry.t, rx.b);
        V.at(n, ch, oy * p.kh + q.i, ox * p.kw + q.j) = mask ? v * m : v;
      }
    });

    // Stage 5: grouped Conv with kernel = stride = (kh, kw), then the bias.
    Tensor out = dcn_steps::strided_conv(p, V, Wt, bias);
    Result r;
    r.outputs["output"] = std::move(out);
    return r;
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<DcnOnnxBackend>(); }

}  // namespace

static const BackendRegistrar r(320, make);

}  // namespace oplab
