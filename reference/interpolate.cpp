// Naive double-precision reference of interpolate (SPEC §6), forward and backward.
//
// Every mode is separable: along each spatial axis, output position `dst` reads a short list
// of (source index, weight) taps, and the output is the sum over the product of the axes' taps.
// Forward gathers through these taps and backward scatters through the very same taps, so the
// backward is the exact transpose of the forward by construction.
//
// The reference follows the formulas of SPEC §6 in double, except the nearest index, which is
// computed from a float32 scale as PyTorch does. PyTorch's CPU shortcuts (identity when
// out == in, dst >> 1 when out == 2*in) are NOT taken here: they are recorded divergences.
#include <algorithm>
#include <array>
#include <cmath>

#include "core/geometry_rounding.h"
#include "reference/interp_coordinates.h"
#include "reference/ref_backend.h"
#include "reference/reference.h"

namespace oplab::ref {
namespace {

struct Tap {
  int64_t src = 0;    // index along the input axis
  double weight = 0;  // its weight in the output value
};
using AxisTaps = std::vector<std::vector<Tap>>;  // [dst] -> taps of that output position

}  // namespace

int64_t interp_nearest_index(const InterpAxis& a, int64_t dst, bool exact) {
  // geom_param(): torch's bfloat16 kernel rounds this scale to bfloat16 and still multiplies
  // in float32 (core/geometry_rounding.h); the identity for the reference itself. dst + 0.5 is
  // exact in float for every size a case can have (below 2^23).
  const float scale = float(geom_param(interp_nearest_scale(a)));
  const float pos = exact ? float(double(dst) + 0.5) * scale : float(dst) * scale;
  return std::min(int64_t(std::floor(pos)), a.in - 1);
}

double interp_source_coord(const InterpAxis& a, int64_t dst, bool align_corners) {
  // geom(): each operation as a kernel in another type rounds it (core/geometry_rounding.h).
  const double scale = geom_param(interp_area_scale(a, align_corners));
  return align_corners ? geom(scale * double(dst)) : geom(geom(scale * (double(dst) + 0.5)) - 0.5);
}

namespace {

// antialias (SPEC §16): the filters of Pillow's Resample.c and torch's antialias kernels. The
// triangle for bilinear; Keys' cubic with a = -0.5 for bicubic (not the -0.75 of plain bicubic).
double aa_filter(InterpMode mode, double x) {
  const double t = std::abs(x);
  if (mode == InterpMode::Bilinear) return t < 1.0 ? geom(1.0 - t) : 0.0;
  const double A = -0.5;
  if (t < 1.0) return geom(geom(geom(geom(geom((A + 2.0) * t) - (A + 3.0)) * t) * t) + 1.0);
  if (t < 2.0) return geom(geom(geom(geom(geom(geom(A * t) - 5.0 * A) * t) + 8.0 * A) * t) - 4.0 * A);
  return 0.0;
}

}  // namespace

// antialias along one axis: scale s = in/out (or 1/sf), support = filter support x max(s, 1),
// centre = (dst + 0.5) s; taps i from max(int(centre - support + 0.5), 0) to
// min(int(centre + support + 0.5), in), exclusive (int truncates toward zero), weight
// f((i - centre + 0.5) / max(s, 1)), normalised to sum 1 over the taps kept: near an edge the
// filter is cut, not the edge pixel replicated. Each operation through geom() as a float
// kernel forms it (torch forms the centre, support and weights in the input's type).
std::vector<std::vector<AntialiasTap>> interp_antialias_taps(InterpMode mode, const InterpAxis& a) {
  std::vector<std::vector<AntialiasTap>> taps(size_t(std::max<int64_t>(a.out, 0)));
  if (a.in <= 0) return taps;
  const double scale = geom_param(interp_area_scale(a, false));
  const double support = geom(interp_antialias_support(mode, scale));
  const double invscale = scale >= 1.0 ? geom(1.0 / scale) : 1.0;
  for (int64_t dst = 0; dst < a.out; ++dst) {
    const double centre = geom(scale * (double(dst) + 0.5));
    const int64_t lo = std::max(int64_t(geom(centre - support) + 0.5), int64_t(0));
    const int64_t hi = std::min(int64_t(geom(centre + support) + 0.5), a.in);
    double total = 0;
    auto& t = taps[size_t(dst)];
    for (int64_t i = lo; i < hi; ++i) {
      const double arg = geom(geom(geom(double(i) - centre) + 0.5) * invscale);
      const double w = aa_filter(mode, arg);
      t.push_back({i, w, arg, 1.0});
      total = geom(total + w);
    }
    // A total of zero leaves the weights as they are (torch and Pillow both skip the division).
    if (total != 0.0)
      for (AntialiasTap& tap : t) tap.weight = geom(tap.weight / total), tap.total = total;
  }
  return taps;
}

namespace {

AxisTaps nearest_taps(const InterpAxis& a, bool exact) {
  AxisTaps taps(size_t(a.out));
  for (int64_t dst = 0; dst < a.out; ++dst) taps[size_t(dst)] = {{interp_nearest_index(a, dst, exact), 1.0}};
  return taps;
}

// linear / bilinear / trilinear along one axis: i0 = min(floor(src), in-1),
// i1 = i0 + (i0 < in-1), lambda = clamp(src - i0, 0, 1). At the last index i1 == i0 and the
// two taps land on the same element (weights still sum to 1).
AxisTaps linear_taps(const InterpAxis& a, bool align_corners) {
  AxisTaps taps(size_t(a.out));
  for (int64_t dst = 0; dst < a.out; ++dst) {
    double src = interp_source_coord(a, dst, align_corners);
    if (src < 0.0) src = 0.0;  // linear modes clamp a negative source to 0 (SPEC §6)
    const int64_t i0 = std::min(int64_t(std::floor(src)), a.in - 1);
    const int64_t i1 = i0 + (i0 < a.in - 1 ? 1 : 0);
    const double lambda = std::clamp(geom(src - double(i0)), 0.0, 1.0);
    taps[size_t(dst)] = {{i0, geom(1.0 - lambda)}, {i1, lambda}};
  }
  return taps;
}

// Cubic convolution kernel with A = -0.75 (SPEC §6, PyTorch's choice).
double cubic_kernel(double d) {
  // Each operation through geom(): a kernel of another type rounds its weights too
  // (core/geometry_rounding.h); the identity for the reference itself.
  const double A = -0.75;
  const double t = std::abs(d);
  if (t <= 1.0) return geom(geom(geom(geom(geom((A + 2.0) * t) - (A + 3.0)) * t) * t) + 1.0);
  if (t < 2.0) return geom(geom(geom(geom(geom(geom(A * t) - 5.0 * A) * t) + 8.0 * A) * t) - 4.0 * A);
  return 0.0;
}

// bicubic along one axis: i = floor(src) with src NOT clamped, t = src - i; taps i-1..i+2
// clamped into [0, in-1] (edge replication, so several taps may share an index) with
// weights W(t+1), W(t), W(1-t), W(2-t).
AxisTaps cubic_taps(const InterpAxis& a, bool align_corners) {
  AxisTaps taps(size_t(a.out));
  for (int64_t dst = 0; dst < a.out; ++dst) {
    const double src = interp_source_coord(a, dst, align_corners);
    const double fi = std::floor(src);
    const double t = geom(src - fi);
    const int64_t i = int64_t(fi);
    const std::array<double, 4> w = {cubic_kernel(geom(t + 1.0)), cubic_kernel(t), cubic_kernel(geom(1.0 - t)),
                                      cubic_kernel(geom(2.0 - t))};
    for (int64_t m = 0; m < 4; ++m) {
      const int64_t idx = std::clamp(i - 1 + m, int64_t(0), a.in - 1);
      taps[size_t(dst)].push_back({idx, w[size_t(m)]});
    }
  }
  return taps;
}

// area = adaptive average pooling along one axis: output a averages input
// [floor(a*in/out), ceil((a+1)*in/out)), in exact integer arithmetic. Neighbouring bins may
// overlap (5 -> 3 gives [0,2), [1,4), [3,5)).
AxisTaps area_taps(const InterpAxis& a) {
  AxisTaps taps(size_t(a.out));
  for (int64_t dst = 0; dst < a.out; ++dst) {
    const int64_t start = (dst * a.in) / a.out;
    const int64_t end = ((dst + 1) * a.in + a.out - 1) / a.out;
    const double w = 1.0 / double(end - start);
    for (int64_t s = start; s < end; ++s) taps[size_t(dst)].push_back({s, w});
  }
  return taps;
}

// antialias taps without the judge's extras (interp_antialias_taps above).
AxisTaps antialias_taps(InterpMode mode, const InterpAxis& a) {
  AxisTaps taps(size_t(a.out));
  const auto aa = interp_antialias_taps(mode, a);
  for (size_t dst = 0; dst < aa.size(); ++dst)
    for (const AntialiasTap& t : aa[dst]) taps[dst].push_back({t.src, t.weight});
  return taps;
}

AxisTaps axis_taps(InterpMode mode, const InterpAxis& a, bool align_corners, bool antialias) {
  // An empty input axis has nothing to read (parse rejects it); no taps keeps the loops in bounds.
  if (a.in <= 0) return AxisTaps(size_t(std::max<int64_t>(a.out, 0)));
  if (antialias) return antialias_taps(mode, a);
  switch (mode) {
    case InterpMode::Nearest: return nearest_taps(a, false);
    case InterpMode::NearestExact: return nearest_taps(a, true);
    case InterpMode::Linear:
    case InterpMode::Bilinear:
    case InterpMode::Trilinear: return linear_taps(a, align_corners);
    case InterpMode::Bicubic: return cubic_taps(a, align_corners);
    case InterpMode::Area: return area_taps(a);
  }
  return {};
}

// The problem seen as 3-D (D, H, W): a 1-D or 2-D case gets leading axes of size 1 whose one
// output position reads index 0 with weight 1, so one set of loops serves every rank.
struct Plan {
  int64_t NC = 0;  // N*C planes, each interpolated alike
  std::array<int64_t, 3> in{}, out{};
  std::array<AxisTaps, 3> taps;
};

Plan make_plan(const InterpParams& p) {
  Plan plan;
  plan.NC = p.N * p.C;
  const size_t lead = 3 - p.axes.size();
  for (size_t ax = 0; ax < 3; ++ax) {
    if (ax < lead) {
      plan.in[ax] = plan.out[ax] = 1;
      plan.taps[ax] = {{{0, 1.0}}};
    } else {
      const InterpAxis& a = p.axes[ax - lead];
      plan.in[ax] = a.in;
      plan.out[ax] = a.out;
      plan.taps[ax] = axis_taps(p.mode, a, p.align_corners, p.antialias);
    }
  }
  return plan;
}

// Calls visit(out_flat, in_flat, weight) once for every (output element, tap product).
// Forward and backward both walk this, which is what makes them exact transposes.
template <class Visit>
void for_each_tap(const Plan& plan, Visit visit) {
  const auto& [inD, inH, inW] = plan.in;
  const auto& [outD, outH, outW] = plan.out;
  for (int64_t nc = 0; nc < plan.NC; ++nc)
    for (int64_t od = 0; od < outD; ++od)
      for (int64_t oh = 0; oh < outH; ++oh)
        for (int64_t ow = 0; ow < outW; ++ow) {
          const int64_t o = ((nc * outD + od) * outH + oh) * outW + ow;
          for (const Tap& td : plan.taps[0][size_t(od)])
            for (const Tap& th : plan.taps[1][size_t(oh)])
              for (const Tap& tw : plan.taps[2][size_t(ow)]) {
                const int64_t i = ((nc * inD + td.src) * inH + th.src) * inW + tw.src;
                visit(o, i, td.weight * th.weight * tw.weight);
              }
        }
}

}  // namespace

Tensor interpolate_forward(const InterpParams& p, const Tensor& input) {
  const Plan plan = make_plan(p);
  Tensor out(p.output_shape());
  // Gather: out[o] = Σ weight * input[i]. Zero-weight taps still multiply, so NaN/Inf spread.
  for_each_tap(plan, [&](int64_t o, int64_t i, double w) { out.data[size_t(o)] += w * input.data[size_t(i)]; });
  return out;
}

Tensor interpolate_backward(const InterpParams& p, const Tensor& input, const Tensor& grad_output) {
  const Plan plan = make_plan(p);
  Tensor grad_input(input.shape);
  // Scatter through the same taps: grad_input[i] += weight * grad_output[o].
  for_each_tap(plan, [&](int64_t o, int64_t i, double w) {
    grad_input.data[size_t(i)] += w * grad_output.data[size_t(o)];
  });
  return grad_input;
}

// ---- the `ref` backend's entry for this op ----
namespace {

Result run(const Case& c, const ValidParams& vp) {
  const auto& p = vp.as<InterpParams>();
  Result r;
  r.outputs["output"] = interpolate_forward(p, c.in("input"));
  if (c.grad_output) r.grads["input"] = interpolate_backward(p, c.in("input"), *c.grad_output);
  return r;
}

const RefOpRegistrar kRegistrar{"interpolate", {run}};

}  // namespace

}  // namespace oplab::ref
