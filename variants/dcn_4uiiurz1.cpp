// Study variant `dcn-4uiiurz1`: the pure-PyTorch DCNv2 explained line by line in the first seed
// article (4uiiurz1/pytorch-deform-conv-v2), evaluated in double, step for step as that module
// does it, so the lab can measure where it parts from torchvision (SPEC §2, §8).
//
// The module's algorithm, and where it differs from SPEC §2's rule B:
//  1. The input is zero-padded by `padding` first (not at all when the padding is 0), and every
//     coordinate lives in that padded image of Hp = H + 2ph rows.
//  2. p = p_0 + p_n + offset, with p_0 = 1 + oy*stride (its arange starts at 1, which is right
//     only for the 3x3 kernel it was written for) and p_n = arange(-(k-1)//2, (k-1)//2 + 1)
//     with Python's floor division. Against torchvision the tap lands 1 + p_n(i) - i pixels
//     away: 0 for k = 2, 3; +1 for k = 1; -1 for k = 4, 5.
//  3. Corners: q_lt = floor(p), q_rb = q_lt + 1, both clamped into [0, Hp-1]; the point p itself
//     is clamped into [0, Hp-1] as well, and the weights are built from the clamped values:
//     g_lt = (1 + q_lt - p)(...), g_rb = (1 - (q_rb - p))(...). Outside the padded image (and
//     exactly on its last row) both corners collapse onto the border row with weight 1 each, so
//     the border is read twice: with padding 0, y = -0.5 gives 2 * X[0, x] where torchvision
//     gives 0.5 * X[0, x]. With padding >= 1 the border read is a zero row and nothing shows.
//  4. The blended values, times the mask, are written into a materialised tensor
//     T[N, C, Ho*kh, Wo*kw] (tap (i, j) of output (oy, ox) at row oy*kh + i, column ox*kw + j):
//     the memory blow-up the article warns of. It is materialised here on purpose.
//  5. out = conv2d(T, weight, stride = kernel) + bias.
// The backward is what autograd computes through these steps: the gather scatters to the
// clamped corners (of the padded image, then cropped), the clamp passes the coordinate's
// gradient only where 0 <= p <= Hp-1 (torch.clamp's backward is inclusive at both ends), and
// q_lt is detached (floor has no gradient). Wherever the clamp of p is active the two corners
// have already collapsed onto one row (or column), whose factors always sum to 2 and whose
// slope is 0, so clamping p changes neither value nor gradient: the border doubling comes from
// the corner clamp alone. The clamp of p is kept because it is the module's algorithm.
//
// Scope, as in the module: dilation 1, one weight group, one offset group. The module takes one
// int each for kernel size, stride and padding; each step above treats rows and columns alike
// and independently, so per-axis values are read the same way per axis. The mask is used raw:
// the module's sigmoid belongs to its mask branch (m_conv), outside the op.
#include <algorithm>
#include <cmath>

#include "core/backend.h"
#include "core/params.h"
#include "reference/deform_conv2d_points.h"
#include "variants/dcn_steps.h"

namespace oplab {
namespace {

// Python's a // b for b > 0 (floor division), which is what `-(k-1)//2` means in the module.
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Row (or column) of tap i in the padded image, before the offset: p_0 + p_n.
int64_t tap_base(int64_t o, int64_t stride, int64_t i, int64_t k) {
  const int64_t p0 = 1 + o * stride;          // arange(1, h*stride+1, stride)
  const int64_t pn = floor_div(-(k - 1), 2) + i;  // arange(-(k-1)//2, (k-1)//2+1)[i]
  return p0 + pn;
}

// One axis of step 3: the clamped corner indices and the clamped point.
struct AxisCorners {
  int64_t lt = 0, rb = 0;  // q_lt, q_rb after the clamp
  double p = 0;            // the point after the clamp
  bool p_inside = false;   // 0 <= p <= len-1 before the clamp: the clamp passes its gradient
};

AxisCorners axis_corners(double p, int64_t len) {
  AxisCorners a;
  const double hi = double(len - 1);
  // Clamp in double before converting, as the module clamps the float tensor before .long().
  const double f = std::floor(p);
  a.lt = int64_t(std::clamp(f, 0.0, hi));
  a.rb = int64_t(std::clamp(f + 1.0, 0.0, hi));
  a.p_inside = p >= 0.0 && p <= hi;
  a.p = std::clamp(p, 0.0, hi);
  return a;
}

// The four bilinear factors of step 3 along one axis: (1 + (q_lt - p)) and (1 - (q_rb - p)).
double lo_factor(const AxisCorners& a) { return 1.0 + (double(a.lt) - a.p); }
double hi_factor(const AxisCorners& a) { return 1.0 - (double(a.rb) - a.p); }

struct Sample {
  AxisCorners r, c;  // rows, columns
  double g_lt = 0, g_rb = 0, g_lb = 0, g_rt = 0;
  double m = 1;
};

class Dcn4uiiurz1Backend : public Backend {
 public:
  std::string name() const override { return "dcn-4uiiurz1"; }
  BackendRole role() const override { return BackendRole::StudyVariant; }
  std::string description() const override {
    return "study: the pure-PyTorch DCNv2 of 4uiiurz1 (padded coordinates, p_0 from 1, clamped corners, "
           "materialised [N,C,Ho*kh,Wo*kw] tensor + strided conv), in double";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "deform_conv2d") return "dcn-4uiiurz1 implements deform_conv2d only";
    const auto p = parse_deform_conv2d(c);
    if (p.dh != 1 || p.dw != 1) return std::string("dcn-4uiiurz1: the module has no dilation (needs 1, 1)");
    if (p.G != 1) return std::string("dcn-4uiiurz1: the module's conv has no weight groups (needs G = 1)");
    if (p.D != 1) return std::string("dcn-4uiiurz1: the module has one offset per tap for all channels (needs D = 1)");
    if (p.H + 2 * p.ph <= 0 || p.W + 2 * p.pw <= 0)
      return std::string("dcn-4uiiurz1: the padded image is empty, the module's gather has nothing to read");
    for (double v : c.in("offset").data)
      if (!std::isfinite(v))
        return std::string("dcn-4uiiurz1: a non-finite offset makes the module's floor().long() undefined");
    return std::nullopt;
  }

  Result run(const Case& c, const ValidParams& vp) override {
    const auto& p = vp.as<DeformConvParams>();
    const Tensor& X = c.in("input");
    const Tensor& off = c.in("offset");
    const Tensor& Wt = c.in("weight");
    const Tensor* mask = c.opt("mask");
    const Tensor* bias = c.opt("bias");
    const int64_t Hp = p.H + 2 * p.ph, Wp = p.W + 2 * p.pw, K = p.kh * p.kw;

    // Step 1: the zero-padded input.
    const Tensor Xp = dcn_steps::zero_pad(X, p.ph, p.pw);

    // Steps 2-3: corners and weights, shared by all channels: [N, K, Ho, Wo].
    std::vector<Sample> samples(size_t(p.N * K * p.Ho * p.Wo));
    auto sample = [&](int64_t n, int64_t k, int64_t oy, int64_t ox) -> Sample& {
      return samples[size_t(((n * K + k) * p.Ho + oy) * p.Wo + ox)];
    };
    // One offset group (D = 1, unsupported_reason), so the points' group d is always 0.
    ref::for_each_dcn_point(p, [&](const ref::DcnPoint& q) {
      const int64_t n = q.n, oy = q.oy, ox = q.ox;
      // The case's offsets follow SPEC §2's layout (Δy, Δx interleaved per tap); the
      // module stores all Δy first, then all Δx. Only the storage differs.
      const double py = double(tap_base(oy, p.sh, q.i, p.kh)) + off.at(n, q.dy_chan, oy, ox);
      const double px = double(tap_base(ox, p.sw, q.j, p.kw)) + off.at(n, q.dy_chan + 1, oy, ox);
      Sample& s = sample(n, q.k, oy, ox);
      s.r = axis_corners(py, Hp);
      s.c = axis_corners(px, Wp);
      s.g_lt = lo_factor(s.r) * lo_factor(s.c);
      s.g_rb = hi_factor(s.r) * hi_factor(s.c);
      s.g_lb = lo_factor(s.r) * hi_factor(s.c);  // q_lb = (q_lt row, q_rb column)
      s.g_rt = hi_factor(s.r) * lo_factor(s.c);  // q_rt = (q_rb row, q_lt column)
      s.m = mask ? mask->at(n, q.mask_chan, oy, ox) : 1.0;
    });

    // The blended value of one sample, before the mask, summed in the module's order.
    auto blend = [&](const Sample& s, int64_t n, int64_t ch) {
      return s.g_lt * Xp.at(n, ch, s.r.lt, s.c.lt) + s.g_rb * Xp.at(n, ch, s.r.rb, s.c.rb) +
             s.g_lb * Xp.at(n, ch, s.r.lt, s.c.rb) + s.g_rt * Xp.at(n, ch, s.r.rb, s.c.lt);
    };

    // Step 4: the materialised tensor T[N, C, Ho*kh, Wo*kw].
    Tensor T({p.N, p.C, p.Ho * p.kh, p.Wo * p.kw});
    for (int64_t n = 0; n < p.N; ++n)
      for (int64_t ch = 0; ch < p.C; ++ch)
        for (int64_t i = 0; i < p.kh; ++i)
          for (int64_t j = 0; j < p.kw; ++j)
            for (int64_t oy = 0; oy < p.Ho; ++oy)
              for (int64_t ox = 0; ox < p.Wo; ++ox) {
                const Sample& s = sample(n, i * p.kw + j, oy, ox);
                T.at(n, ch, oy * p.kh + i, ox * p.kw + j) = blend(s, n, ch) * s.m;
              }

    // Step 5: conv2d with kernel = stride = (kh, kw), no padding, then the bias.
    Result r;
    Tensor out = dcn_steps::strided_conv(p, T, Wt, bias);
    r.outputs["output"] = std::move(out);
    if (!c.grad_output) return r;
    const Tensor& gout = *c.grad_output;

    // Backward of step 5: gT = conv_transpose(gout, weight), materialised like T;
    // grad_weight = Σ gout * T, grad_bias = Σ gout.
    Tensor gT(T.shape), gW(Wt.shape), gB(bias ? bias->shape : Shape{});
    for (int64_t n = 0; n < p.N; ++n)
      for (int64_t o = 0; o < p.Co; ++o)
        for (int64_t oy = 0; oy < p.Ho; ++oy)
          for (int64_t ox = 0; ox < p.Wo; ++ox) {
            const double go = gout.at(n, o, oy, ox);
            if (bias) gB.data[size_t(o)] += go;
            for (int64_t ch = 0; ch < p.C; ++ch)
              for (int64_t i = 0; i < p.kh; ++i)
                for (int64_t j = 0; j < p.kw; ++j) {
                  const int64_t ty = oy * p.kh + i, tx = ox * p.kw + j;
                  gT.at(n, ch, ty, tx) += Wt.at(o, ch, i, j) * go;
                  gW.at(o, ch, i, j) += go * T.at(n, ch, ty, tx);
                }
          }

    // Backward of steps 1-4, per sample: the mask sees the blended value, the padded input the
    // four weights at the clamped corners, the offset the derivative of the weights through the
    // clamp of p (zero where the clamp is active).
    Tensor gXp(Xp.shape), gOff(off.shape), gM(mask ? mask->shape : Shape{});
    ref::for_each_dcn_point(p, [&](const ref::DcnPoint& q) {
      const int64_t n = q.n, oy = q.oy, ox = q.ox;
      const Sample& s = sample(n, q.k, oy, ox);
      double g_py = 0.0, g_px = 0.0, g_m = 0.0;
      for (int64_t ch = 0; ch < p.C; ++ch) {
        const double gt = gT.at(n, ch, oy * p.kh + q.i, ox * p.kw + q.j);
        const double gv = gt * s.m;  // gradient of the blended value
        if (mask) g_m += gt * blend(s, n, ch);
        gXp.at(n, ch, s.r.lt, s.c.lt) += s.g_lt * gv;
        gXp.at(n, ch, s.r.rb, s.c.rb) += s.g_rb * gv;
        gXp.at(n, ch, s.r.lt, s.c.rb) += s.g_lb * gv;
        gXp.at(n, ch, s.r.rb, s.c.lt) += s.g_rt * gv;
        const double v_lt = Xp.at(n, ch, s.r.lt, s.c.lt), v_rb = Xp.at(n, ch, s.r.rb, s.c.rb);
        const double v_lb = Xp.at(n, ch, s.r.lt, s.c.rb), v_rt = Xp.at(n, ch, s.r.rb, s.c.lt);
        // d(lo_factor)/dp = -1, d(hi_factor)/dp = +1 on each axis.
        const double dv_dpy =
            -lo_factor(s.c) * v_lt + hi_factor(s.c) * v_rb - hi_factor(s.c) * v_lb + lo_factor(s.c) * v_rt;
        const double dv_dpx =
            -lo_factor(s.r) * v_lt + hi_factor(s.r) * v_rb + lo_factor(s.r) * v_lb - hi_factor(s.r) * v_rt;
        g_py += gv * dv_dpy;
        g_px += gv * dv_dpx;
      }
      gOff.at(n, q.dy_chan, oy, ox) = s.r.p_inside ? g_py : 0.0;
      gOff.at(n, q.dy_chan + 1, oy, ox) = s.c.p_inside ? g_px : 0.0;
      if (mask) gM.at(n, q.mask_chan, oy, ox) = g_m;
    });

    // The padding's backward: crop.
    Tensor gX(X.shape);
    for (int64_t n = 0; n < p.N; ++n)
      for (int64_t ch = 0; ch < p.C; ++ch)
        for (int64_t y = 0; y < p.H; ++y)
          for (int64_t x = 0; x < p.W; ++x) gX.at(n, ch, y, x) = gXp.at(n, ch, y + p.ph, x + p.pw);

    r.grads["input"] = std::move(gX);
    r.grads["offset"] = std::move(gOff);
    r.grads["weight"] = std::move(gW);
    if (mask) r.grads["mask"] = std::move(gM);
    if (bias) r.grads["bias"] = std::move(gB);
    return r;
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<Dcn4uiiurz1Backend>(); }

}  // namespace

static const BackendRegistrar r(310, make);

}  // namespace oplab
