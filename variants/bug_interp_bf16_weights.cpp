// Seeded bug `bug-interp-bf16-weights`: a float32 bilinear interpolate whose linear weights
// are stored in bfloat16: on each axis, lambda and 1 - lambda are computed in float32 and then
// rounded to bfloat16 before use. Everything else is torch's CPU upsample_bilinear2d in
// float32 (UpSample.h, UpSampleKernel.cpp): the scale (in - 1)/(out - 1) with align_corners
// (0 for one output), otherwise float(1/sf) where the kernel gets a scale factor and in/out
// where it does not (SPEC §6, core/params.h's InterpAxis); the source index scale * dst
// (align_corners) or scale * (dst + 0.5) - 0.5 clamped at 0; i0 = min(floor(src), in - 1),
// i1 = i0 + (i0 < in - 1), lambda = clamp(src - i0, 0, 1); the output
// h0 * (w0 * x00 + w1 * x01) + h1 * (w0 * x10 + w1 * x11), all float32.
//
// The mistake it models: the weight table typed as the element type. torch's CPU upsampling
// builds its per-axis weights into tensors of the input's scalar type and reads them back as
// scalar_t (pytorch/pytorch#175490 names it as the cause for the antialiased path), and its
// bfloat16 upsampling needed precision fixes that moved the index and weight arithmetic to
// float (#83847 for the channels-last index; #91169 for #89212). A float32 kernel shows it when
// its weight table is a 16-bit buffer shared with, or copied from, such a bf16 path to halve
// its size.
//
// Why a correct float32 kernel cannot show it: bfloat16 keeps 8 significant bits, so each
// weight is off by up to 2^-9 of itself (float32: 2^-24), 2^15 times float32's unit roundoff,
// and the two rounded weights no longer sum to 1. The output is off by up to about 2^-9 of its
// terms (one pixel 1 -> 3, lambda = 1/3: the weights sum to 1.00195), against a float32 bound
// of 8 * 2^-24 * (4 + 2C + 4) of them (C the largest axis, 7 at most in the fuzz cases), about
// 2^-16. Measured on 300 random float32 cases (sizes up to 8): 204 fail, the first failing
// element 4.4 to 256 times the 8x bound (median 134); the same kernel with float32 weights
// passes every one (its error a few float32 roundings). Weights exact in bfloat16 (lambda 0,
// 1/2, 1/4, 3/4, as in an identity or an exact 2x upsampling with align_corners) pass. The campaign's
// catch, shrunk: one pixel of 0.25 resized 1 -> 3 gives 0.250488 at the last output, 292 times
// its bound.
//
// interpolate forward only: bilinear (2-D), both align_corners; other modes and ranks are
// declined.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/backend.h"
#include "core/geometry_rounding.h"
#include "core/params.h"

namespace oplab {
namespace {

// x rounded to the nearest bfloat16 value (ties to even), as a float (core/geometry_rounding.h).
float to_bf16_rounded(float x) { return static_cast<float>(round_to_type(x, DType::BFloat16)); }

// One output position of an axis: its two source indices and their weights.
struct Tap {
  int64_t i0 = 0, i1 = 0;
  float w0 = 1, w1 = 0;
};

// torch's area_pixel_compute_scale<float>.
float axis_scale(const InterpAxis& a, bool align_corners) {
  if (align_corners) return a.out > 1 ? static_cast<float>(a.in - 1) / static_cast<float>(a.out - 1) : 0.0f;
  if (a.scale_factor && *a.scale_factor > 0) return static_cast<float>(1.0 / *a.scale_factor);
  return static_cast<float>(a.in) / static_cast<float>(a.out);
}

// torch's compute_indices_weights_linear in float32, with the bug in the last two lines.
std::vector<Tap> axis_taps(const InterpAxis& a, bool align_corners) {
  const float scale = axis_scale(a, align_corners);
  std::vector<Tap> taps(size_t(std::max<int64_t>(a.out, 0)));
  for (int64_t dst = 0; dst < a.out; ++dst) {
    float src = align_corners ? scale * static_cast<float>(dst) : scale * (static_cast<float>(dst) + 0.5f) - 0.5f;
    if (src < 0) src = 0;  // linear modes clamp a negative source
    Tap& t = taps[size_t(dst)];
    t.i0 = std::min(int64_t(std::floor(src)), a.in - 1);
    t.i1 = t.i0 + (t.i0 < a.in - 1 ? 1 : 0);
    const float lambda = std::min(std::max(src - static_cast<float>(t.i0), 0.0f), 1.0f);
    t.w0 = to_bf16_rounded(1.0f - lambda);  // the bug: the weights kept in bfloat16
    t.w1 = to_bf16_rounded(lambda);
  }
  return taps;
}

Tensor forward(const InterpParams& p, const Tensor& input) {
  Tensor out(p.output_shape());
  const InterpAxis &ah = p.axes[0], &aw = p.axes[1];
  const std::vector<Tap> th = axis_taps(ah, p.align_corners), tw = axis_taps(aw, p.align_corners);
  for (int64_t plane = 0; plane < p.N * p.C; ++plane) {
    const double* x = input.data.data() + plane * ah.in * aw.in;
    double* y = out.data.data() + plane * ah.out * aw.out;
    auto at = [&](int64_t h, int64_t w) { return static_cast<float>(x[h * aw.in + w]); };
    for (int64_t oh = 0; oh < ah.out; ++oh) {
      const Tap& h = th[size_t(oh)];
      for (int64_t ow = 0; ow < aw.out; ++ow) {
        const Tap& w = tw[size_t(ow)];
        const float v = h.w0 * (w.w0 * at(h.i0, w.i0) + w.w1 * at(h.i0, w.i1)) +
                        h.w1 * (w.w0 * at(h.i1, w.i0) + w.w1 * at(h.i1, w.i1));
        y[oh * aw.out + ow] = double(v);
      }
    }
  }
  return out;
}

class BugInterpBf16Weights : public Backend {
 public:
  std::string name() const override { return "bug-interp-bf16-weights"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  // A kernel people ship: float32 throughout, its geometry formed in float32 (SPEC §15).
  DType dtype(const std::string&) const override { return DType::Float32; }
  bool computes_grads(const std::string&) const override { return false; }
  std::string description() const override {
    return "seeded bug: float32 bilinear interpolate (2-D, forward) whose linear weights lambda and 1 - lambda "
           "are rounded to bfloat16";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "interpolate") return std::string("a seeded interpolate bug only");
    const InterpParams p = parse_interpolate(c);
    if (p.mode != InterpMode::Bilinear || p.axes.size() != 2)
      return std::string("bilinear 2-D only, not ") + interp_mode_name(p.mode);
    if (p.antialias) return std::string("plain bilinear only, not antialias (SPEC §16)");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    Result r;
    r.outputs["output"] = forward(vp.as<InterpParams>(), c.in("input"));
    return r;
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugInterpBf16Weights>(); }

}  // namespace

static const oplab::BackendRegistrar r(119, make);

}  // namespace oplab
