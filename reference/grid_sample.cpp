// Naive double-precision reference of grid_sample (SPEC §12), forward and backward, after
// torch.nn.functional.grid_sample. Each grid position is turned into its taps
// (reference/grid_sample_taps.h) one axis at a time:
//   unnormalise the grid value -> pad the coordinate (bilinear, nearest) -> the axis' taps
//   (2 corners at floor, 1 nearest pixel, or 4 cubic taps each padded on its own),
// and the taps of the axes multiply. Backward at kinks (docs/semantics.md): bilinear takes the
// piece [floor(c), floor(c) + 1] (the derivative from the right at an integer coordinate);
// the padding's clamp has derivative 0 at its ends.
#include <algorithm>

#include "core/geometry_rounding.h"
#include <cmath>

#include "reference/grid_sample_taps.h"
#include "reference/ref_backend.h"

namespace oplab::ref {

double grid_unnormalise(double g, int64_t S, bool align_corners) {
  // geom(): each operation as a kernel in another type rounds it (core/geometry_rounding.h).
  return align_corners ? geom(geom(geom(g + 1) / 2) * double(S - 1)) : geom(geom(geom(geom(g + 1) * double(S)) - 1) / 2);
}

double grid_unnormalise_factor(int64_t S, bool align_corners) {
  return align_corners ? double(S - 1) / 2 : double(S) / 2;
}

namespace {

// Reflect c about [lo, hi]: the distance from lo folds back and forth over the span.
Padded reflect(double c, double lo, double hi) {
  if (hi == lo) return {lo, 0.0};  // a single pixel with align_corners: no span to fold over
  const double span = hi - lo;
  double d = c - lo, sign = 1.0;
  if (d < 0) d = -d, sign = -1.0;
  const double extra = std::fmod(d, span);
  const bool odd = std::fmod(std::floor(d / span), 2.0) != 0.0;
  return odd ? Padded{hi - extra, -sign} : Padded{lo + extra, sign};
}

// Clamp into [0, S - 1]; at either end (and beyond) the derivative is 0.
Padded clamp_to_image(Padded q, int64_t S) {
  const double hi = double(S - 1);
  if (q.c <= 0) return {0.0, 0.0};
  if (q.c >= hi) return {hi, 0.0};
  return q;
}

}  // namespace

Padded grid_pad(double c, int64_t S, GridPadding pad, bool align_corners) {
  switch (pad) {
    case GridPadding::Zeros: return {c, 1.0};
    case GridPadding::Border: return clamp_to_image({c, 1.0}, S);
    case GridPadding::Reflection: {
      // The clamp keeps the reflection's derivative inside and zeroes it at the ends.
      return clamp_to_image(align_corners ? reflect(c, 0.0, double(S - 1)) : reflect(c, -0.5, double(S) - 0.5), S);
    }
  }
  return {c, 1.0};
}

double grid_cubic(double d) {
  // Each operation through geom(): a kernel of another type rounds its weights too, and near
  // |d| = 2 the outer polynomial cancels to an absolute error of ~12 u (core/geometry_rounding.h).
  const double A = -0.75, t = std::fabs(d);
  if (t <= 1) return geom(geom(geom(geom(geom((A + 2) * t) - (A + 3)) * t) * t) + 1);
  if (t < 2) return geom(geom(geom(geom(geom(geom(A * t) - 5 * A) * t) + 8 * A) * t) - 4 * A);
  return 0;
}

double grid_cubic_slope(double d) {
  const double A = -0.75, t = std::fabs(d), s = d < 0 ? -1.0 : 1.0;
  if (t <= 1) return s * (3 * (A + 2) * t - 2 * (A + 3)) * t;
  if (t < 2) return s * ((3 * A * t - 10 * A) * t + 8 * A);
  return 0;
}

namespace {

// One pixel along one axis: its index, weight and d weight / d grid value.
struct AxisTap {
  int64_t i;
  double w, dw;
  double dist;  // bicubic: the coordinate's signed distance from the tap (0 otherwise)
};

// The taps of grid value g along an axis of size S.
std::vector<AxisTap> axis_taps(const GridSampleParams& p, double g, int64_t S, const GridSampleRules& rules) {
  std::vector<AxisTap> taps;
  // A tap outside the image reads 0 (only zeros padding leaves any there).
  auto add = [&](double i, double w, double dw, double dist) {
    if (i >= 0 && i <= double(S - 1)) taps.push_back({int64_t(i), w, dw, dist});
  };
  const double f = grid_unnormalise_factor(S, p.align_corners);
  const double c = grid_unnormalise(g, S, p.align_corners);
  switch (p.mode) {
    case GridMode::Bilinear: {
      const Padded q = grid_pad(c, S, p.padding, p.align_corners);
      const double i0 = std::floor(q.c), t = geom(q.c - i0);
      add(i0, geom(1 - t), -q.dc * f, 0.0);
      add(i0 + 1, t, q.dc * f, 0.0);
      break;
    }
    case GridMode::Nearest:
      add(rules.round_nearest(grid_pad(c, S, p.padding, p.align_corners).c), 1.0, 0.0, 1.0);
      break;
    case GridMode::Bicubic: {
      const double cc = rules.bicubic_pad_coordinate ? grid_pad(c, S, p.padding, p.align_corners).c : c;
      const double i0 = std::floor(cc);
      for (int k = -1; k <= 2; ++k) {
        const double tap = i0 + k, d = geom(cc - tap);  // signed distance from the tap
        // Each tap is padded on its own: an integer stays an integer under border and reflection.
        const double at = rules.bicubic_pad_coordinate ? tap : grid_pad(tap, S, p.padding, p.align_corners).c;
        add(at, grid_cubic(d), grid_cubic_slope(d) * f, d);
      }
      break;
    }
  }
  return taps;
}

}  // namespace

void grid_position_taps(const GridSampleParams& p, const double* g, const GridSampleRules& rules,
                        std::vector<GridTap>& taps) {
  taps.clear();
  for (int a = 0; a < p.nd; ++a)
    if (!std::isfinite(g[a])) return;  // samples nothing, no gradient (SPEC §12)
  const std::vector<AxisTap> xs = axis_taps(p, g[0], p.W, rules);
  const std::vector<AxisTap> ys = axis_taps(p, g[1], p.H, rules);
  const std::vector<AxisTap> zs = p.nd == 3 ? axis_taps(p, g[2], p.D, rules) : std::vector<AxisTap>{{0, 1.0, 0.0, 0.0}};
  for (const AxisTap& z : zs)
    for (const AxisTap& y : ys)
      for (const AxisTap& x : xs)
        taps.push_back({(z.i * p.H + y.i) * p.W + x.i, x.w * y.w * z.w,
                        {x.dw * y.w * z.w, x.w * y.dw * z.w, x.w * y.w * z.dw}, {x.dist, y.dist, z.dist}});
}

namespace {

// Calls f(n, pos, taps) for every grid position, pos flat over (Do, Ho, Wo).
template <class F>
void for_each_position(const GridSampleParams& p, const Tensor& grid, const GridSampleRules& rules, F f) {
  const int64_t P = p.Do * p.Ho * p.Wo;
  std::vector<GridTap> taps;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t pos = 0; pos < P; ++pos) {
      grid_position_taps(p, grid.data.data() + (n * P + pos) * p.nd, rules, taps);
      f(n, pos, taps);
    }
}

}  // namespace

Tensor grid_sample_forward(const GridSampleParams& p, const Tensor& input, const Tensor& grid,
                           const GridSampleRules& rules) {
  Tensor out(p.output_shape());
  const int64_t P = p.Do * p.Ho * p.Wo, plane = p.D * p.H * p.W;
  for_each_position(p, grid, rules, [&](int64_t n, int64_t pos, const std::vector<GridTap>& taps) {
    for (int64_t c = 0; c < p.C; ++c) {
      const double* x = input.data.data() + (n * p.C + c) * plane;
      double sum = 0;
      for (const GridTap& t : taps) sum += t.w * x[t.index];
      out.data[size_t((n * p.C + c) * P + pos)] = sum;
    }
  });
  return out;
}

GridSampleGrads grid_sample_backward(const GridSampleParams& p, const Tensor& input, const Tensor& grid,
                                     const Tensor& grad_output, const GridSampleRules& rules) {
  GridSampleGrads g{Tensor(input.shape), Tensor(grid.shape)};
  const int64_t P = p.Do * p.Ho * p.Wo, plane = p.D * p.H * p.W;
  for_each_position(p, grid, rules, [&](int64_t n, int64_t pos, const std::vector<GridTap>& taps) {
    double* gg = g.grid.data.data() + (n * P + pos) * p.nd;
    for (int64_t c = 0; c < p.C; ++c) {
      const double go = grad_output.data[size_t((n * p.C + c) * P + pos)];
      const double* x = input.data.data() + (n * p.C + c) * plane;
      double* gx = g.input.data.data() + (n * p.C + c) * plane;
      // grad_input: the transpose of the forward's gather.
      for (const GridTap& t : taps) gx[t.index] += t.w * go;
      // grad_grid: the derivative of the forward value. nearest is piecewise constant: 0, and
      // left at an exact 0 rather than 0 * x (which a NaN or Inf pixel would turn into NaN).
      if (p.mode == GridMode::Nearest) continue;
      for (int a = 0; a < p.nd; ++a) {
        double d = 0;
        for (const GridTap& t : taps) d += t.dw[size_t(a)] * x[t.index];
        gg[a] += go * d;
      }
    }
  });
  return g;
}

Result grid_sample_run(const Case& c, const GridSampleParams& p, const GridSampleRules& rules) {
  Result r;
  r.outputs["output"] = grid_sample_forward(p, c.in("input"), c.in("grid"), rules);
  if (c.grad_output) {
    GridSampleGrads g = grid_sample_backward(p, c.in("input"), c.in("grid"), *c.grad_output, rules);
    r.grads["input"] = std::move(g.input);
    r.grads["grid"] = std::move(g.grid);
  }
  return r;
}

// ---- the `ref` backend's entry for this op ----
namespace {

Result run(const Case& c, const ValidParams& vp) { return grid_sample_run(c, vp.as<GridSampleParams>()); }

const RefOpRegistrar kRegistrar{"grid_sample", {run}};

}  // namespace

}  // namespace oplab::ref
