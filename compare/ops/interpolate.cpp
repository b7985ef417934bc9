// interpolate in the comparison layer (compare/op_compare.h): 2 (linear), 4 (cubic) or the
// area window's taps per axis; its decisions hang on the scale factor, which the flip check
// nudges for a backend of undeclared precision. The kernels take the reference's scale and
// source coordinates in double and the nearest index from a float32 scale and product, as the
// reference (and PyTorch) does (halide/generators/interpolate_axis.h): no kernel rounding.
// bicubic's weights take either sign, so its bound's magnitude is stated here (magnitude()).
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "compare/op_compare.h"
#include "compare/ops/cubic_partials.h"
#include "core/params.h"
#include "reference/interp_coordinates.h"

namespace oplab::compare {

namespace {

double terms(const Case& c) {
  const auto p = parse_interpolate(c);
  double n = 1;
  for (const auto& a : p.axes)
    n *= p.antialias ? double(interp_antialias_max_taps(p.mode, a))
         : p.mode == InterpMode::Bicubic ? 4.0 : p.mode == InterpMode::Area ? std::ceil(double(a.in) / double(a.out)) + 1 : 2.0;
  return n + 4;
}

void nudge(Case& c, double ra, double, double) {
  if (!c.params.contains("scale_factor") || c.params.at("scale_factor").is_null()) return;
  json& sf = c.params["scale_factor"];
  if (sf.is_array())
    for (auto& v : sf) v = nudged(v.get<double>(), ra);
  else
    sf = nudged(sf.get<double>(), ra);
}

DrivingParameter driving(const Case& c) {
  DrivingParameter d{"scale (out/in)", 0};
  for (const auto& a : parse_interpolate(c).axes) d.value = std::max(d.value, double(a.out) / double(a.in));
  return d;
}

// Per axis and output position: the nearest index, or the floor of the linear or cubic source
// coordinate (reference/interpolate.cpp); area's bins are exact integers and decide nothing.
// Nor does antialias: its taps' range ends where the filter is 0 (|arg| = 1 or 2), so a tap
// that a rounding of the centre adds or drops weighs next to nothing -- a continuous change
// the bound holds, not a discrete one.
void decisions(const Case& c, Decisions& d) {
  const auto p = parse_interpolate(c);
  if (p.antialias) return;
  for (const auto& a : p.axes) {
    if (a.in <= 0) continue;
    for (int64_t dst = 0; dst < a.out; ++dst) switch (p.mode) {
        case InterpMode::Nearest:
        case InterpMode::NearestExact:
          d.add(FlipKind::NearestIndex, ref::interp_nearest_index(a, dst, p.mode == InterpMode::NearestExact));
          break;
        case InterpMode::Linear:
        case InterpMode::Bilinear:
        case InterpMode::Trilinear:
        case InterpMode::Bicubic: {
          // As the reference's run forms it (in T under a judge's geometry-in-T scope).
          const double src = ref::interp_source_coord(a, dst, p.align_corners);
          // Linear modes clamp a negative source to 0 and the index to in - 1; cubic does neither.
          if (p.mode == InterpMode::Bicubic) d.add(FlipKind::Floor, int64_t(std::floor(src)));
          else d.add(FlipKind::Floor, std::min(int64_t(std::floor(std::max(src, 0.0))), a.in - 1));
          break;
        }
        case InterpMode::Area: break;
      }
  }
}

// ---- bicubic's magnitude: A = Σ |w_k x_k| of SPEC §9's bound, exactly
//
// The magnitude case gives Σ w_k |x_k| with the signed weights. Bicubic's outer taps weigh
// W(t+1), W(2-t) in [-3/32, 0] (the least at t = 1/2): where |x| is larger at the outer taps
// than at the inner ones that sum cancels, while float32 still rounds every term. The kernels
// compute t and each weight in double and round the weight once (a relative error of at most
// u, no absolute one), then sum the 4 taps of each axis in float32, one axis after the other.
// Each term w_y w_x x carries the input's rounding (u), its two weights' (2u) and the two
// 4-term sums' (gamma_4 each), so the element's error is at most
// (3u + 2 gamma_4) Σ |w_k x_k| ~ 11 u Σ |w_k x_k|: inside the bound's gamma_n with its
// n = 4 * 4 + 4 terms, but only if A is Σ |w_k x_k|. Measured on a fuzz case (input
// [2, 2, 4, 3], size 12, output [0, 0, 9, 0]): Σ w_k |x_k| = 1.05e-3, Σ |w_k x_k| = 0.639, the
// kernel's error 5.7e-8 = 1.5 u Σ |w_k x_k|, which was 1.3 times the old bound.
//
// |W| of the four taps of every output position along one axis, unmerged: the kernels
// multiply every tap, so two taps clamped onto one index are two terms.
struct AbsTap {
  int64_t src = 0;
  double w = 0;
};
using AbsTaps = std::vector<std::vector<AbsTap>>;

// W(d) of SPEC §6, A = -0.75.
double cubic_weight(double d) {
  const double A = -0.75, t = std::fabs(d);
  if (t <= 1) return ((A + 2) * t - (A + 3)) * t * t + 1;
  if (t < 2) return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
  return 0;
}

AbsTaps abs_cubic_taps(const InterpAxis& a, bool align_corners, bool partials) {
  AbsTaps taps(size_t(a.out));
  for (int64_t dst = 0; dst < a.out; ++dst) {
    const double src = ref::interp_source_coord(a, dst, align_corners), fi = std::floor(src), t = src - fi;
    const std::array<double, 4> dist = {t + 1, t, 1 - t, 2 - t};
    for (int64_t k = 0; k < 4; ++k)
      taps[size_t(dst)].push_back({std::clamp(int64_t(fi) - 1 + k, int64_t(0), a.in - 1),
                                   cubic_tap_magnitude(cubic_weight(dist[size_t(k)]), dist[size_t(k)], partials)});
  }
  return taps;
}

// antialias bicubic (SPEC §16, a = -0.5): |w| of each normalised weight and, where the kernel
// evaluates the polynomial in the bound's type, its partials over the normalising sum.
AbsTaps abs_antialias_taps(const InterpAxis& a, bool partials) {
  AbsTaps taps(size_t(a.out));
  const auto aa = ref::interp_antialias_taps(InterpMode::Bicubic, a);
  for (size_t dst = 0; dst < aa.size(); ++dst)
    for (const ref::AntialiasTap& t : aa[dst])
      taps[dst].push_back({t.src, std::fabs(t.weight) + (partials ? cubic_partials(t.arg, -0.5) / 4 / std::fabs(t.total) : 0.0)});
  return taps;
}

AbsTaps abs_taps(const InterpParams& p, const InterpAxis& a, bool partials) {
  return p.antialias ? abs_antialias_taps(a, partials) : abs_cubic_taps(a, p.align_corners, partials);
}

// Σ |w| |x| per output element and, with grad_output, Σ |w| |g| per input element (the
// backward's terms, the same taps transposed). Other modes' weights are >= 0: left as they are.
// These are the taps of the case as given: a peer's divergence equivalent (compare/
// float_divergence.cpp) that moves them (OpenCV's in/out scale, ONNX Runtime's size-1 origin)
// is bounded by the magnitude of the spec's taps, a neighbourhood of the same pixels; a tensor
// whose shape the equivalent changed keeps the reference's magnitude.
void magnitude(const Case& c, Result& mag, bool partials) {
  const auto p = parse_interpolate(c);
  if (p.mode != InterpMode::Bicubic || p.axes.size() != 2) return;
  const AbsTaps ty = abs_taps(p, p.axes[0], partials), tx = abs_taps(p, p.axes[1], partials);
  const Tensor& x = c.in("input");
  const int64_t H = p.axes[0].in, W = p.axes[1].in, Ho = p.axes[0].out, Wo = p.axes[1].out;
  const bool backward = c.grad_output && mag.grads.count("input");
  Tensor out(p.output_shape()), gin(x.shape);
  for (int64_t nc = 0; nc < p.N * p.C; ++nc)
    for (int64_t oh = 0; oh < Ho; ++oh)
      for (int64_t ow = 0; ow < Wo; ++ow) {
        const size_t o = size_t((nc * Ho + oh) * Wo + ow);
        for (const AbsTap& a : ty[size_t(oh)])
          for (const AbsTap& b : tx[size_t(ow)]) {
            const size_t i = size_t((nc * H + a.src) * W + b.src);
            out.data[o] += a.w * b.w * std::fabs(x.data[i]);
            if (backward) gin.data[i] += a.w * b.w * std::fabs(c.grad_output->data[o]);
          }
      }
  auto put = [](std::map<std::string, Tensor>& m, const char* name, Tensor&& t) {
    if (m.count(name) && m.at(name).shape == t.shape) m[name] = std::move(t);
  };
  put(mag.outputs, "output", std::move(out));
  if (backward) put(mag.grads, "input", std::move(gin));
}

// Flip budget (a fraction of cases, README "Accuracy of the float32 kernels"): the kernels take
// every decision from the parameters exactly as the reference does, and rounding the input
// values moves none of them, so a flip here is a finding: none allowed.
constexpr double kFlipBudget = 0.0;

const OpCompareRegistrar kRegistrar{"interpolate", {terms, nudge, nullptr, nullptr, driving, decisions,
                                                    FlipKind::InputRounding, kFlipBudget, nullptr, magnitude}};

}  // namespace

}  // namespace oplab::compare
