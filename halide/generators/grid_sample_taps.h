#pragma once
// The per-axis taps of grid_sample (SPEC §12) as Halide expressions, shared by the 4-D kernels
// (grid_sample_generator.cpp) and the 5-D ones (grid_sample3d_generator.cpp), so both decide
// every coordinate the same way. Each grid value is unnormalised, padded and floored in double
// from the float32 grid, with the reference's operations (reference/grid_sample.cpp); the tap
// weights are formed in double and used in float32.
#include <utility>
#include <vector>

#include "Halide.h"
#include "float_bits.h"
#include "task_scratch.h"

namespace oplab_grid {

using namespace Halide;

inline Expr f64(double v) { return Internal::make_const(Float(64), v); }

// The padding of SPEC §12 on a double coordinate c: the padded coordinate and its derivative.
struct Padded {
  Expr c, dc;
};

inline Padded pad(Expr c, Expr S, Expr padding, Expr ac) {
  Expr hi_pix = cast<double>(S - 1);
  // border: clamp to [0, S - 1], derivative 0 at and beyond the ends.
  Expr inside = c > f64(0) && c < hi_pix;
  // reflection about [lo, hi], then the same clamp.
  Expr lo = select(ac != 0, f64(0), f64(-0.5)), hi = select(ac != 0, hi_pix, cast<double>(S) - f64(0.5));
  Expr span = hi - lo;
  Expr d = c - lo;
  Expr sign = select(d < f64(0), f64(-1), f64(1));
  Expr ad = abs(d);
  Expr safe_span = select(span > f64(0), span, f64(1));
  Expr extra = ad - floor(ad / safe_span) * safe_span;  // fmod for ad >= 0
  Expr odd = (floor(ad / safe_span) - floor(ad / safe_span / f64(2)) * f64(2)) != f64(0);
  Expr r = select(span > f64(0), select(odd, hi - extra, lo + extra), f64(0));
  Expr dr = select(span > f64(0), select(odd, -sign, sign), f64(0));
  Expr r_in = r > f64(0) && r < hi_pix;
  Expr border_c = clamp(c, f64(0), hi_pix), border_d = select(inside, f64(1), f64(0));
  Expr refl_c = clamp(r, f64(0), hi_pix), refl_d = select(r_in, dr, f64(0));
  return {select(padding == 0, c, padding == 1, border_c, refl_c),
          select(padding == 0, f64(1), padding == 1, border_d, refl_d)};
}

// Cubic convolution weight (A = -0.75) at signed distance d, and its slope.
inline Expr cubic(Expr d) {
  const double A = -0.75;
  Expr t = abs(d);
  Expr near = ((f64(A + 2) * t - f64(A + 3)) * t) * t + f64(1);
  Expr far = ((f64(A) * t - f64(5 * A)) * t + f64(8 * A)) * t - f64(4 * A);
  return select(t <= f64(1), near, t < f64(2), far, f64(0));
}

inline Expr cubic_slope(Expr d) {
  const double A = -0.75;
  Expr t = abs(d), s = select(d < f64(0), f64(-1), f64(1));
  Expr near = (f64(3 * (A + 2)) * t - f64(2 * (A + 3))) * t;
  Expr far = (f64(3 * A) * t - f64(10 * A)) * t + f64(8 * A);
  return s * select(t <= f64(1), near, t < f64(2), far, f64(0));
}

// Tap j (a constant, 0..3) of float32 grid value g along an axis of S pixels, in double:
// where it reads (before the image test), whether it is one of the mode's taps and reads the
// image, its weight and d weight / d g.
struct RawTap {
  Expr at, valid, w, dw;
};

inline RawTap raw_tap(Expr g, Expr S, int j, Expr mode, Expr padding, Expr ac) {
  Expr finite = is_finite(g);
  Expr gd = select(finite, cast<double>(g), f64(0));
  Expr Sd = cast<double>(S);
  Expr c = select(ac != 0, ((gd + f64(1)) / f64(2)) * (Sd - f64(1)), ((gd + f64(1)) * Sd - f64(1)) / f64(2));
  Expr f = select(ac != 0, (Sd - f64(1)) / f64(2), Sd / f64(2));
  // Far outside, zeros padding reads nothing either way: the clamp keeps floor within int32.
  Expr cz = clamp(c, f64(-8), Sd + f64(8));

  // bilinear: corners floor(q) and floor(q) + 1 of the padded coordinate.
  Padded q = pad(c, S, padding, ac);
  Expr qc = select(padding == 0, cz, q.c);
  Expr q0 = floor(qc), t = qc - q0;
  Expr bl_at = q0 + f64(j);
  Expr bl_w = j == 0 ? f64(1) - t : t;
  Expr bl_dw = (j == 0 ? -q.dc : q.dc) * f;
  // nearest: round half to even of the padded coordinate, spelled out: Halide's round() is
  // half to even on the CPU but becomes OpenCL C's round() (half away from zero) on OpenCL,
  // which the first OpenCL fuzz run caught (0.5 read pixel 1).
  Expr up = floor(qc + f64(0.5));
  Expr tie_to_odd = (up - qc) == f64(0.5) && (up - floor(up / f64(2)) * f64(2)) != f64(0);
  Expr nn_at = select(tie_to_odd, up - f64(1), up);
  // bicubic: taps floor(c) - 1 .. + 2 of the unpadded coordinate, each padded on its own. The
  // coordinate strict_float too, as the weights below: with a fused multiply-add it lay an ulp
  // from the reference's, and a far weight near |d| = 2 (all cancellation) took the other sign
  // (a fuzz case: an Inf pixel read -Inf where the reference, and torch in float64, read +Inf).
  Expr c_strict = strict_float(select(ac != 0, ((gd + f64(1)) / f64(2)) * (Sd - f64(1)), ((gd + f64(1)) * Sd - f64(1)) / f64(2)));
  Expr cc = select(padding == 0, clamp(c_strict, f64(-8), Sd + f64(8)), c_strict);
  Expr tap = floor(cc) + f64(j - 1), dist = cc - tap;
  Expr bc_at = select(padding == 0, tap, pad(tap, S, padding, ac).c);

  // bicubic's weights strict_float: the reference's operations in its order, no fused
  // multiply-adds, so each is the reference's double bit for bit. Fused, the far weight near
  // |d| = 2 (12 ulp of cancellation) took another sign than the reference's, which decides
  // whether a merged tap of an Inf pixel is NaN (a fuzz case: Inf here, NaN in the
  // reference). Strict everywhere, the taps cost the bilinear backward about 10% (bench).
  RawTap r;
  r.at = select(mode == 0, bl_at, mode == 1, nn_at, bc_at);
  r.w = select(mode == 0, bl_w, mode == 1, f64(1), strict_float(cubic(dist)));
  r.dw = select(mode == 0, bl_dw, mode == 1, f64(0), strict_float(cubic_slope(dist) * f));
  r.valid = finite && j < select(mode == 0, 2, mode == 1, 1, 4) && r.at >= f64(0) && r.at <= Sd - f64(1);
  return r;
}

// Tap k (0..3, a Var) of an axis: Tuple(index clamped into the image, 1 when the tap reads the
// image (0 outside or past the mode's taps), weight, d weight / d g), the last two float32.
// Taps that padding sends to the same pixel (bicubic near a border or a fold) are merged into
// the first of them, weights and slopes added in double: symmetric taps under reflection then
// cancel exactly, as in the reference, instead of leaving float32 noise that no bound sees.
// A merge must not hide what the reference's unmerged sum does with a pixel of +-Inf: it is
// NaN there when one of the merged weights is 0 (0 * Inf) or two have opposite signs
// (Inf - Inf), not (w1 + w2) * Inf. Where bicubic may run (raw = 4) two more fields say so,
// for the weights and for the slopes (1 or 0, float32): the kernels add a NaN for such a tap
// pair when its pixel is not finite (poison_term). A tap pair's products w_x * w_y hold a 0 or
// both signs exactly when one of its axes' merges does, so the flags of the two axes are ORed.
// `raw` taps are formed: 4 where bicubic may run, 2 where only bilinear and nearest do (5-D).
inline Tuple axis_tap(Expr g, Expr S, Expr k, Expr mode, Expr padding, Expr ac, int raw = 4) {
  std::vector<RawTap> t;
  for (int j = 0; j < raw; ++j) t.push_back(raw_tap(g, S, j, mode, padding, ac));
  Expr at = t[raw - 1].at, valid = t[raw - 1].valid;
  for (int j = raw - 2; j >= 0; --j) {
    at = select(k == j, t[j].at, at);
    valid = select(k == j, t[j].valid, valid);
  }
  Expr dup = Internal::const_false(), w = f64(0), dw = f64(0);
  // Of the merged weights (slopes): one is 0, one is positive, one is negative.
  Expr w0 = Internal::const_false(), wp = w0, wn = w0, d0 = w0, dp = w0, dn = w0;
  for (int j = 0; j < raw; ++j) {
    Expr same = t[j].valid && t[j].at == at;
    dup = dup || (k > j && same);
    Expr merged = k <= j && same;
    w += select(merged, t[j].w, f64(0));
    dw += select(merged, t[j].dw, f64(0));
    w0 = w0 || (merged && t[j].w == f64(0)), wp = wp || (merged && t[j].w > f64(0)), wn = wn || (merged && t[j].w < f64(0));
    d0 = d0 || (merged && t[j].dw == f64(0)), dp = dp || (merged && t[j].dw > f64(0)), dn = dn || (merged && t[j].dw < f64(0));
  }
  valid = valid && !dup;
  Expr Sd = cast<double>(S);
  Expr index = clamp(cast<int>(clamp(at, f64(-1), Sd)), 0, S - 1);
  std::vector<Expr> fields = {index, select(valid, 1.0f, 0.0f), select(valid, cast<float>(w), 0.0f),
                              select(valid, cast<float>(dw), 0.0f)};
  if (raw == 4) {
    fields.push_back(select(valid && (w0 || (wp && wn)), 1.0f, 0.0f));
    fields.push_back(select(valid && (d0 || (dp && dn)), 1.0f, 0.0f));
  }
  return Tuple(fields);
}

enum { kIndex, kValid, kW, kDw, kPoisonW, kPoisonDw };

// NaN where `poisoned` and the pixel term v is +-Inf or NaN, else +0: the term a merged tap
// pair adds so that its Inf pixel gives the reference's NaN (see axis_tap). Tested on the bits,
// which no fast-math folding assumes finite; poison_bits: the same as bits, to AND with a mask.
inline Expr poison_bits(Expr v) {
  using oplab_bits::u32;
  return select(oplab_bits::is_non_finite_bits(v), u32(0x7fc00000u), u32(0));  // a quiet NaN
}
inline Expr poison_term(Expr poisoned, Expr v) {
  return reinterpret<float>(select(poisoned, poison_bits(v), oplab_bits::u32(0)));
}

inline Expr taps_of(Expr mode) { return select(mode == 0, 2, mode == 1, 1, 4); }

template <class... B>
void promise_zero_mins(B&... bufs) {
  auto one = [](auto& b) {
    for (int i = 0; i < b.dimensions(); ++i) b.dim(i).set_min(0);
  };
  (one(bufs), ...);
}

// CPU: an axis' taps t(k, x, ...) of the positions the loop `at` reads, formed there with x
// innermost in memory and vectorised, so the kernel's vector loads of a tap field over x are
// dense rather than strided by the tap slots; a loop over the slots outside the positions.
inline void row_taps_at(Func& t, const LoopLevel& at, int vec) {
  std::vector<Var> a = t.args();
  std::swap(a[0], a[1]);
  std::vector<VarOrRVar> order(a.begin(), a.end());
  t.compute_at(at).store_in(oplab_scratch::kTaskScratch).reorder_storage(a).reorder(order).vectorize(a[0], vec, TailStrategy::GuardWithIf);
}

// As row_taps_at, for an axis of `taps` taps at most (bound: a mode with fewer forms the rest,
// unused), the slots of a vector of positions formed together, unrolled, so that the grid's
// strided load, the coordinate and its floor, which an axis' taps share, are computed once per
// position rather than once per tap. The 5-D kernels (2 slots): the forward's row took 1.5x
// longer with the loop (bench 5-D shape, 16.2 -> 11.1 ms; reduced, 4 channels, 8.6 -> 5.2).
// The 4-D channels-last kernels (4 slots, bicubic's merged taps, 9 specialisations): the
// forward and grad_grid 1.8-2.2x faster at 16 channels (docs/bench/2026-11-29d-cpu.md); their
// generators take about 2 minutes (forward) and 1 (grad_grid) instead of seconds. The plain
// (sparse-grid) kernels keep the loop.
// `store`: where the tables live; the task's scratch unless they outlive a task (grad_input's
// tables of a whole image, read by every block's task).
inline Func& row_taps_unrolled_at(Func& t, const LoopLevel& at, int vec, int taps,
                                  MemoryType store = oplab_scratch::kTaskScratch) {
  std::vector<Var> a = t.args();
  std::vector<Var> storage = a;
  std::swap(storage[0], storage[1]);
  Var xo{"xo"}, xi{"xi"};
  std::vector<VarOrRVar> order = {xi, a[0], xo};
  for (size_t i = 2; i < a.size(); ++i) order.push_back(a[i]);
  t.compute_at(at)
      .store_in(store)
      .reorder_storage(storage)
      .bound(a[0], 0, taps)
      .split(a[1], xo, xi, vec, TailStrategy::GuardWithIf)
      .reorder(order)
      .vectorize(xi)
      .unroll(a[0]);
  return t;
}

}  // namespace oplab_grid
