// grid_sample in float32 (SPEC §12), 4-D input: the forward, grad_input (a scatter) and
// grad_grid (a gather over the channels). Buffers, dims reversed from the tensors:
//   input (w, h, c, n)   grid (k, x, y, n), k = 0 x, 1 y   output, grad_output (x, y, c, n)
// Parameters: mode (0 bilinear, 1 nearest, 2 bicubic), padding (0 zeros, 1 border,
// 2 reflection), align_corners (0, 1): one kernel serves every combination.
// Each grid value is unnormalised, padded and floored in double from the float32 grid, with
// the reference's operations (reference/grid_sample.cpp), so every decision is the
// reference's on the float32-rounded case; the tap weights are formed in double and used in
// float32, and every sum is float32. Each axis gives up to four taps (its index, whether it
// lies in the image, its weight and the weight's derivative in the grid value); a position
// reads the product of its two axes' taps.
#include <vector>

#include "Halide.h"

using namespace Halide;

namespace {

Expr f64(double v) { return Internal::make_const(Float(64), v); }

// The padding of SPEC §12 on a double coordinate c: the padded coordinate and its derivative.
struct Padded {
  Expr c, dc;
};

Padded pad(Expr c, Expr S, Expr padding, Expr ac) {
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
Expr cubic(Expr d) {
  const double A = -0.75;
  Expr t = abs(d);
  Expr near = ((f64(A + 2) * t - f64(A + 3)) * t) * t + f64(1);
  Expr far = ((f64(A) * t - f64(5 * A)) * t + f64(8 * A)) * t - f64(4 * A);
  return select(t <= f64(1), near, t < f64(2), far, f64(0));
}

Expr cubic_slope(Expr d) {
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

RawTap raw_tap(Expr g, Expr S, int j, Expr mode, Expr padding, Expr ac) {
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
  // bicubic: taps floor(c) - 1 .. + 2 of the unpadded coordinate, each padded on its own.
  Expr cc = select(padding == 0, cz, c);
  Expr tap = floor(cc) + f64(j - 1), dist = cc - tap;
  Expr bc_at = select(padding == 0, tap, pad(tap, S, padding, ac).c);

  RawTap r;
  r.at = select(mode == 0, bl_at, mode == 1, nn_at, bc_at);
  r.w = select(mode == 0, bl_w, mode == 1, f64(1), cubic(dist));
  r.dw = select(mode == 0, bl_dw, mode == 1, f64(0), cubic_slope(dist) * f);
  r.valid = finite && j < select(mode == 0, 2, mode == 1, 1, 4) && r.at >= f64(0) && r.at <= Sd - f64(1);
  return r;
}

// Tap k (0..3, a Var) of an axis: Tuple(index clamped into the image, 1 when the tap reads the
// image (0 outside or past the mode's taps), weight, d weight / d g), the last two float32.
// Taps that padding sends to the same pixel (bicubic near a border or a fold) are merged into
// the first of them, weights and slopes added in double: symmetric taps under reflection then
// cancel exactly, as in the reference, instead of leaving float32 noise that no bound sees.
Tuple axis_tap(Expr g, Expr S, Expr k, Expr mode, Expr padding, Expr ac) {
  std::vector<RawTap> t;
  for (int j = 0; j < 4; ++j) t.push_back(raw_tap(g, S, j, mode, padding, ac));
  Expr at = select(k == 0, t[0].at, k == 1, t[1].at, k == 2, t[2].at, t[3].at);
  Expr valid = select(k == 0, t[0].valid, k == 1, t[1].valid, k == 2, t[2].valid, t[3].valid);
  Expr dup = Internal::const_false(), w = f64(0), dw = f64(0);
  for (int j = 0; j < 4; ++j) {
    Expr same = t[j].valid && t[j].at == at;
    dup = dup || (k > j && same);
    w += select(k <= j && same, t[j].w, f64(0));
    dw += select(k <= j && same, t[j].dw, f64(0));
  }
  valid = valid && !dup;
  Expr Sd = cast<double>(S);
  Expr index = clamp(cast<int>(clamp(at, f64(-1), Sd)), 0, S - 1);
  return Tuple(index, select(valid, 1.0f, 0.0f), select(valid, cast<float>(w), 0.0f), select(valid, cast<float>(dw), 0.0f));
}

enum { kIndex, kValid, kW, kDw };

Expr taps_of(Expr mode) { return select(mode == 0, 2, mode == 1, 1, 4); }

#define OPLAB_GRID_INPUTS                          \
  Input<Buffer<float>> input{"input", 4};          \
  Input<Buffer<float>> grid{"grid", 4};            \
  Input<int> mode{"mode", 0, 0, 2};                \
  Input<int> padding{"padding", 0, 0, 2};          \
  Input<int> align_corners{"align_corners", 0, 0, 1};

template <class... B>
void promise_zero_mins(B&... bufs) {
  auto one = [](auto& b) {
    for (int i = 0; i < b.dimensions(); ++i) b.dim(i).set_min(0);
  };
  (one(bufs), ...);
}

// The two axes' taps of every grid position: tx(k, x, y, n) along W, ty(k, x, y, n) along H.
void define_taps(Func& tx, Func& ty, const Func& grid, Expr W, Expr H, Expr mode, Expr padding, Expr ac) {
  Var k{"k"}, x{"x"}, y{"y"}, n{"n"};
  tx(k, x, y, n) = axis_tap(grid(0, x, y, n), W, k, mode, padding, ac);
  ty(k, x, y, n) = axis_tap(grid(1, x, y, n), H, k, mode, padding, ac);
}

// out(x, y, c, n) = sum over the taps (rows outer) of wy * wx * input, a tap outside reading 0.
//  * CPU: a task per (row, image); taps once per row; channels in turn, positions vectorised.
//  * GPU: a thread per (position, channel), 16 x 16 positions per block.
class GridSampleForward : public Generator<GridSampleForward> {
 public:
  OPLAB_GRID_INPUTS
  Output<Buffer<float>> output{"output", 4};

  Var x{"x"}, y{"y"}, c{"c"}, n{"n"};
  Func tx{"tx"}, ty{"ty"}, acc{"acc"};
  RDom r;

  void generate() {
    define_taps(tx, ty, grid, input.dim(0).extent(), input.dim(1).extent(), mode, padding, align_corners);
    Expr T = taps_of(mode);
    r = RDom({{0, T}, {0, T}}, "r");  // (kx, ky)
    FuncRef a = tx(r.x, x, y, n), b = ty(r.y, x, y, n);
    Expr v = input(a[kIndex], b[kIndex], c, n);
    acc(x, y, c, n) = 0.0f;
    acc(x, y, c, n) += select(Expr(a[kValid]) * Expr(b[kValid]) != 0.0f, Expr(b[kW]) * Expr(a[kW]) * v, 0.0f);
    output(x, y, c, n) = acc(x, y, c, n);
  }

  void schedule() {
    promise_zero_mins(input, grid, output);
    if (get_target().has_gpu_feature()) {
      Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, cn{"cn"};
      output.split(x, xo, xi, 16, TailStrategy::GuardWithIf)
          .split(y, yo, yi, 16, TailStrategy::GuardWithIf)
          .fuse(c, n, cn)
          .reorder(xi, yi, xo, yo, cn)
          .gpu_blocks(xo, yo, cn)
          .gpu_threads(xi, yi);
      acc.compute_at(output, xi);
    } else {
      const int vec = natural_vector_size<float>();
      Var yn{"yn"};
      output.reorder(x, c, y, n).fuse(y, n, yn).parallel(yn).vectorize(x, vec, TailStrategy::GuardWithIf);
      acc.compute_at(output, c).vectorize(x, vec, TailStrategy::GuardWithIf);
      acc.update().reorder(x, r.x, r.y).vectorize(x, vec, TailStrategy::GuardWithIf);
      tx.compute_at(output, yn);
      ty.compute_at(output, yn);
    }
  }
};

// grad_input: every tap of every position scatters wy * wx * gout to its pixel (the forward's
// transpose, taps outside the image skipped).
//  * CPU: a task per (channel, image) plane of grad_input: only that plane's positions write
//    it, so no two tasks touch the same element.
//  * GPU: a thread per (column of positions, channel) adds atomically (positions share pixels).
class GridSampleGradInput : public Generator<GridSampleGradInput> {
 public:
  OPLAB_GRID_INPUTS
  Input<Buffer<float>> grad_output{"grad_output", 4};  // (x, y, c, n)
  Output<Buffer<float>> grad_input{"grad_input", 4};   // (w, h, c, n)

  Var w{"w"}, h{"h"}, c{"c"}, n{"n"}, q{"q"}, x{"x"}, y{"y"};
  Func tx{"tx"}, ty{"ty"}, target{"target"};
  RDom r;

  void generate() {
    define_taps(tx, ty, grid, input.dim(0).extent(), input.dim(1).extent(), mode, padding, align_corners);
    // target(q, x, y, n): tap q = kx + 4 ky of position (x, y): its pixel and weight (0 for a
    // tap outside the image or past the mode's taps). Realised where it is scattered, so that
    // on the GPU the atomic add's store index and its implicit load index are the same loads,
    // which Halide 14 needs to emit a native float atomic add rather than a compare-and-swap
    // loop.
    FuncRef a = tx(q % 4, x, y, n), b = ty(q / 4, x, y, n);
    target(q, x, y, n) = Tuple(a[kIndex], b[kIndex], Expr(b[kW]) * Expr(a[kW]), Expr(a[kValid]) * Expr(b[kValid]));
    // r = (q, x, y): taps innermost, positions row by row.
    r = RDom({{0, 16}, {0, grid.dim(1).extent()}, {0, grid.dim(2).extent()}}, "r");
    FuncRef t = target(r[0], r[1], r[2], n);
    grad_input(w, h, c, n) = 0.0f;
    grad_input(t[0], t[1], c, n) += select(Expr(t[3]) != 0.0f, Expr(t[2]) * grad_output(r[1], r[2], c, n), 0.0f);
  }

  void schedule() {
    promise_zero_mins(input, grid, grad_output, grad_input);
    RVar rq = r[0], rx = r[1], ry = r[2];
    if (get_target().has_gpu_feature()) {
      Var wo{"wo"}, ho{"ho"}, wi{"wi"}, hi{"hi"}, cn{"cn"};
      grad_input.split(w, wo, wi, 16, TailStrategy::GuardWithIf)
          .split(h, ho, hi, 16, TailStrategy::GuardWithIf)
          .fuse(c, n, cn)
          .reorder(wi, hi, wo, ho, cn)
          .gpu_blocks(wo, ho, cn)
          .gpu_threads(wi, hi);
      RVar rxo{"rxo"}, rxi{"rxi"};
      grad_input.update()
          .atomic()
          .split(rx, rxo, rxi, 64, TailStrategy::GuardWithIf)
          .reorder(rq, ry, rxi, rxo, c, n)
          .gpu_blocks(rxo, c, n)
          .gpu_threads(rxi)
          .unroll(rq);
      // Each thread walks one column of positions (its rows in turn).
      target.compute_at(grad_input, ry).bound(q, 0, 16).unroll(q);
    } else {
      Var cn{"cn"};
      grad_input.fuse(c, n, cn).parallel(cn);
      grad_input.update().reorder(rq, rx, ry, c, n).fuse(c, n, cn).parallel(cn);
      target.compute_at(grad_input, cn).bound(q, 0, 16);
    }
  }
};

// grad_grid(k, x, y, n) = factor-carrying derivative: sum over channels and taps of
// gout * input * (dwx * wy for x, wx * dwy for y); nearest's is 0 (left exact, as the
// reference). A gather over the channels: a thread (GPU) or a vector lane (CPU) per position.
class GridSampleGradGrid : public Generator<GridSampleGradGrid> {
 public:
  OPLAB_GRID_INPUTS
  Input<Buffer<float>> grad_output{"grad_output", 4};  // (x, y, c, n)
  Output<Buffer<float>> grad_grid{"grad_grid", 4};     // (k, x, y, n)

  Var k{"k"}, x{"x"}, y{"y"}, n{"n"};
  Func tx{"tx"}, ty{"ty"}, sums{"sums"};
  RDom r;

  void generate() {
    define_taps(tx, ty, grid, input.dim(0).extent(), input.dim(1).extent(), mode, padding, align_corners);
    Expr T = taps_of(mode);
    r = RDom({{0, T}, {0, T}, {0, input.dim(2).extent()}}, "r");  // (kx, ky, c)
    FuncRef a = tx(r[0], x, y, n), b = ty(r[1], x, y, n);
    Expr on = Expr(a[kValid]) * Expr(b[kValid]) != 0.0f;
    Expr v = select(on, input(a[kIndex], b[kIndex], r[2], n) * grad_output(x, y, r[2], n), 0.0f);
    sums(x, y, n) = Tuple(0.0f, 0.0f);
    sums(x, y, n) = Tuple(sums(x, y, n)[0] + select(on, Expr(a[kDw]) * Expr(b[kW]) * v, 0.0f),
                          sums(x, y, n)[1] + select(on, Expr(a[kW]) * Expr(b[kDw]) * v, 0.0f));
    grad_grid(k, x, y, n) = select(mode == 1, 0.0f, select(k == 0, sums(x, y, n)[0], sums(x, y, n)[1]));
  }

  void schedule() {
    promise_zero_mins(input, grid, grad_output, grad_grid);
    grad_grid.bound(k, 0, 2).unroll(k);
    if (get_target().has_gpu_feature()) {
      Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
      grad_grid.split(x, xo, xi, 16, TailStrategy::GuardWithIf)
          .split(y, yo, yi, 16, TailStrategy::GuardWithIf)
          .reorder(k, xi, yi, xo, yo, n)
          .gpu_blocks(xo, yo, n)
          .gpu_threads(xi, yi);
      sums.compute_at(grad_grid, xi);
    } else {
      const int vec = natural_vector_size<float>();
      Var yn{"yn"};
      grad_grid.reorder(k, x, y, n).fuse(y, n, yn).parallel(yn);
      sums.compute_at(grad_grid, yn).vectorize(x, vec, TailStrategy::GuardWithIf);
      sums.update().reorder(x, r[0], r[1], r[2]).vectorize(x, vec, TailStrategy::GuardWithIf);
      tx.compute_at(grad_grid, yn);
      ty.compute_at(grad_grid, yn);
    }
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(GridSampleForward, grid_sample_forward)
HALIDE_REGISTER_GENERATOR(GridSampleGradInput, grid_sample_grad_input)
HALIDE_REGISTER_GENERATOR(GridSampleGradGrid, grid_sample_grad_grid)
