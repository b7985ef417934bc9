#pragma once
// A naive double-precision antialias resample (SPEC §16) with knobs that break it the ways
// kernels have been seen to: the seeded antialias bugs (bug_aa_*.cpp) are this with one knob
// turned. Written apart from the reference so that a bug variant never shares its code.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/backend.h"
#include "core/case.h"
#include "core/params.h"

namespace oplab::antialias_steps {

struct Knobs {
  bool scale_support = true;  // support and argument scaled by max(s, 1) on a downscale
  bool renormalise = true;    // weights divided by the sum of the taps kept (else the uncut sum)
  double cubic_a = -0.5;      // Keys' coefficient of bicubic
};

using AxisTaps = std::vector<std::vector<std::pair<int64_t, double>>>;

inline double filter(InterpMode mode, double x, double a) {
  const double t = std::fabs(x);
  if (mode == InterpMode::Bilinear) return t < 1 ? 1 - t : 0;
  if (t < 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

inline AxisTaps axis_taps(InterpMode mode, const InterpAxis& ax, const Knobs& k) {
  const double s = interp_area_scale(ax, false);
  const double stretch = k.scale_support ? std::max(s, 1.0) : 1.0;
  const double support = (mode == InterpMode::Bicubic ? 2.0 : 1.0) * stretch;
  AxisTaps taps(size_t(ax.out));
  for (int64_t o = 0; o < ax.out; ++o) {
    const double centre = s * (double(o) + 0.5);
    const int64_t lo = int64_t(centre - support + 0.5), hi = int64_t(centre + support + 0.5);
    double kept = 0, uncut = 0;
    for (int64_t i = lo; i < hi; ++i) {  // the uncut range; the image keeps [0, in) of it
      const double w = filter(mode, (double(i) - centre + 0.5) / stretch, k.cubic_a);
      uncut += w;
      if (i >= 0 && i < ax.in) taps[size_t(o)].push_back({i, w}), kept += w;
    }
    const double total = k.renormalise ? kept : uncut;
    if (total != 0)
      for (auto& t : taps[size_t(o)]) t.second /= total;
  }
  return taps;
}

// out = Wy x Wx^T per plane (forward), or grad_input = Wy^T g Wx (backward) when `g` is given.
inline Tensor resample(const InterpParams& p, const Tensor& x, const Tensor* g, const Knobs& k) {
  const AxisTaps ty = axis_taps(p.mode, p.axes[0], k), tx = axis_taps(p.mode, p.axes[1], k);
  const int64_t H = p.axes[0].in, W = p.axes[1].in, Ho = p.axes[0].out, Wo = p.axes[1].out;
  Tensor r(g ? x.shape : p.output_shape());
  for (int64_t n = 0; n < p.N * p.C; ++n)
    for (int64_t oy = 0; oy < Ho; ++oy)
      for (int64_t ox = 0; ox < Wo; ++ox)
        for (const auto& [iy, wy] : ty[size_t(oy)])
          for (const auto& [ix, wx] : tx[size_t(ox)]) {
            const size_t o = size_t((n * Ho + oy) * Wo + ox), i = size_t((n * H + iy) * W + ix);
            if (g) r.data[i] += wy * wx * g->data[o];
            else r.data[o] += wy * wx * x.data[i];
          }
  return r;
}

// A seeded antialias bug: the resample with its knobs on antialias cases (bicubic ones only
// when `bicubic_only`); it declines every other case. Each bug_aa_*.cpp registers one.
class SeededBug : public Backend {
 public:
  SeededBug(std::string name, std::string description, Knobs knobs, bool bicubic_only)
      : name_(std::move(name)), description_(std::move(description)), knobs_(knobs), bicubic_only_(bicubic_only) {}
  std::string name() const override { return name_; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  std::string description() const override { return "seeded bug: " + description_; }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "interpolate") return std::string("a seeded interpolate antialias bug only");
    const InterpParams p = parse_interpolate(c);
    if (!p.antialias || (bicubic_only_ && p.mode != InterpMode::Bicubic))
      return std::string("a seeded antialias bug: antialias ") + (bicubic_only_ ? "bicubic" : "bilinear and bicubic") +
             " cases only";
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    const InterpParams& p = vp.as<InterpParams>();
    Result r;
    r.outputs["output"] = resample(p, c.in("input"), nullptr, knobs_);
    if (c.grad_output) r.grads["input"] = resample(p, c.in("input"), &*c.grad_output, knobs_);
    return r;
  }

 private:
  std::string name_, description_;
  Knobs knobs_;
  bool bicubic_only_;
};

}  // namespace oplab::antialias_steps
