// deform_conv2d in float32 (SPEC §2): the forward and the backward, as four pipelines.
//
// Halide dimension order is the reverse of row-major. The glue passes views that split the
// channel axes by group, so that no kernel divides a channel index by a group size:
//   input, grad_input   (x, y, c, n)                 [N, C, H, W]
//   offset, grad_offset (ox, oy, comp, j, i, d, n)   [N, D, kh, kw, 2, Ho, Wo]   comp 0 = Δy, 1 = Δx
//   mask, grad_mask     (ox, oy, j, i, d, n)         [N, D, kh, kw, Ho, Wo]
//   weight, grad_weight (j, i, cg, oo, g)            [G, Co/G, C/G, kh, kw]
//   bias, grad_bias     (oo, g)                      [G, Co/G]
//   output, grad_output (ox, oy, oo, g, n)           [N, G, Co/G, Ho, Wo]
// so weight group g reads input channels c = g*Cg + cg, and channel c has offset group c / Cd.
// The mask and the bias are always passed: the glue supplies ones and zeros when the case has
// none (both exact: 1*v = v, acc + 0 = acc).
//
// Every pipeline starts from the geometry of a sampling point (tap (j, i) of offset group d at
// output (ox, oy) of image n): its corners, weights and range flags depend neither on the channel
// nor on the output channel, so the CPU schedules compute them once per output row (or once
// per image) and every channel of the offset group reuses them.
#include <string>
#include <vector>

#include "Halide.h"
#include "deform_conv2d_sampling.h"

using namespace Halide;
using namespace oplab_halide;

namespace {

// Sizes read from the buffers and the convolution parameters.
struct Conv {
  Expr H, W, C, N, Ho, Wo, kh, kw, D, Cd, Cg, Cog, G;
  Expr sy, sx, py, px, dy, dx;
  Func offset, mask;

  // The sampling point of tap (j, i), offset group d, output (ox, oy), image n.
  DcnPoint point(Expr ox, Expr oy, Expr j, Expr i, Expr d, Expr n) const {
    Expr oxc = clamp_ox(ox);
    Expr by = oy * sy - py + i * dy, bx = ox * sx - px + j * dx;
    return dcn_point(by, bx, offset(oxc, oy, 0, j, i, d, n), offset(oxc, oy, 1, j, i, d, n), H, W);
  }
  Expr mask_at(Expr ox, Expr oy, Expr j, Expr i, Expr d, Expr n) const { return mask(clamp_ox(ox), oy, j, i, d, n); }
  // The CPU schedules round vectorised ox loops up to whole vectors, or shift them to start
  // before 0 on rows shorter than a vector; the extra lanes read a valid element and are
  // never stored.
  Expr clamp_ox(Expr ox) const { return clamp(ox, 0, Wo - 1); }
};

Conv make_conv(const Func& input, const Func& offset, const Func& mask, const Func& weight,
               const std::vector<Expr>& in_ext, const std::vector<Expr>& off_ext, const std::vector<Expr>& w_ext,
               Expr sy, Expr sx, Expr py, Expr px, Expr dy, Expr dx) {
  Conv cv;
  cv.W = in_ext[0], cv.H = in_ext[1], cv.C = in_ext[2], cv.N = in_ext[3];
  cv.Wo = off_ext[0], cv.Ho = off_ext[1], cv.D = off_ext[5];
  cv.kw = w_ext[0], cv.kh = w_ext[1], cv.Cg = w_ext[2], cv.Cog = w_ext[3], cv.G = w_ext[4];
  cv.Cd = cv.C / cv.D;
  cv.sy = sy, cv.sx = sx, cv.py = py, cv.px = px, cv.dy = dy, cv.dx = dx;
  cv.offset = offset;
  cv.mask = mask;
  return cv;
}

template <class B>
std::vector<Expr> extents(const B& buf, int dims) {
  std::vector<Expr> e;
  for (int d = 0; d < dims; ++d) e.push_back(buf.dim(d).extent());
  return e;
}

// Bilinear weights of the four corners, (1-ly)(1-lx), (1-ly)lx, ly(1-lx), ly lx.
struct CornerWeights {
  Expr w00, w01, w10, w11;
};
CornerWeights corner_weights(const DcnPoint& p) {
  return {(1.0f - p.ly) * (1.0f - p.lx), (1.0f - p.ly) * p.lx, p.ly * (1.0f - p.lx), p.ly * p.lx};
}

// The per-point table of the forward value (forward and grad_weight):
// (x0, x1, y0, y1, w00, w01, w10, w11, m, corner bits). m is the mask, or 0 for a non-finite
// offset (the column value is then exactly 0, whatever the mask and the image hold). A corner
// bit is set when the point is in rule B's range and that corner lies in the image; corners
// of weight 0 are still read, so NaN/Inf in the image spread as in the reference.
Tuple value_geometry(const Conv& cv, Var ox, Var oy, Var j, Var i, Var d, Var n) {
  DcnPoint p = cv.point(ox, oy, j, i, d, n);
  CornerWeights w = corner_weights(p);
  Expr m = select(p.finite, cv.mask_at(ox, oy, j, i, d, n), 0.0f);
  Expr bits = dcn_corner_bits(p.in_range && p.in_y0 && p.in_x0, p.in_range && p.in_y0 && p.in_x1,
                              p.in_range && p.in_y1 && p.in_x0, p.in_range && p.in_y1 && p.in_x1);
  return Tuple(std::vector<Expr>{p.x0, p.x1, p.y0, p.y1, w.w00, w.w01, w.w10, w.w11, m, bits});
}

// The column value m * B(X[n, c]; y, x) from a value_geometry entry s.
Expr column_value(const Func& input, const FuncRef& s, Expr c, Expr n) {
  auto X = [&](int a, int b) {
    Expr xx = s[b ? 1 : 0], yy = s[a ? 3 : 2];
    return select(dcn_corner_on(s[9], a, b), input(xx, yy, c, n), 0.0f);
  };
  return s[8] * (s[4] * X(0, 0) + s[5] * X(0, 1) + s[6] * X(1, 0) + s[7] * X(1, 1));
}

// The gradient of the column value of input channel c at tap (j, i): Gcol = Σ over the output
// channels oo of c's weight group of W[g, oo, cg, i, j] * grad_output[n, g, oo, oy, ox].
struct Gcol {
  Func gout{"gout_rows"}, wt{"weight_t"}, sum{"gcol_sum"}, gcol{"gcol"};
  RDom ro;
  Var ox, oy, j, i, c, n, oo{"oo"}, g{"g"}, cg{"cg"};

  void define(const Conv& cv, const Func& weight, const Func& grad_output, Var ox_, Var oy_, Var j_, Var i_, Var c_,
              Var n_) {
    ox = ox_, oy = oy_, j = j_, i = i_, c = c_, n = n_;
    // The sum runs over the output channels oo, so both operands are laid out with oo next to
    // the innermost dimension: consecutive oo are adjacent in memory (a plain grad_output
    // walks whole planes per oo, and the tiles' rows of all oo collide in a few cache sets).
    // grad_output rows are zero past the row's end: the CPU schedule works on whole tiles.
    gout(ox, oo, oy, g, n) = select(ox < cv.Wo, grad_output(clamp(ox, 0, cv.Wo - 1), oy, oo, g, n), 0.0f);
    // min(j, kw - 1): the CPU schedule rounds the taps of a row up to a multiple of 3.
    wt(j, oo, i, cg, g) = weight(min(j, cv.kw - 1), i, cg, oo, g);
    // (The clamp changes no value; it keeps the bounds Halide infers for a range of channels
    // inside the weight buffer.)
    Expr gg = c / cv.Cg, cgc = clamp(c - gg * cv.Cg, 0, cv.Cg - 1);
    ro = RDom(0, cv.Cog, "ro");
    sum(ox, oy, j, i, c, n) = 0.0f;
    sum(ox, oy, j, i, c, n) += wt(j, ro, i, cgc, gg) * gout(ox, ro, oy, gg, n);
    gcol(ox, oy, j, i, c, n) = sum(ox, oy, j, i, c, n);
  }

  // CPU: gcol of one channel is computed a row (all taps) at a time, at `at`, in tiles of
  // 4 vectors along ox times 3 taps along j whose sums over the output channels stay in
  // registers (a small fixed-size buffer); each grad_output vector is loaded once per 3 taps
  // and each weight once per 4 vectors. The two operands are copied once, up front.
  void schedule_cpu(LoopLevel at, int vec) {
    Var oxo{"oxo"}, oxi{"oxi"}, oxv{"oxv"}, jo{"jo"}, ji{"ji"}, gn{"gn"};
    gcol.compute_at(at)
        .split(ox, oxo, oxi, 4 * vec, TailStrategy::RoundUp)
        .split(j, jo, ji, 3, TailStrategy::RoundUp)
        .reorder(oxi, ji, jo, i, oxo)
        .vectorize(oxi, vec);
    sum.compute_at(gcol, jo).vectorize(ox, vec);
    sum.update().split(ox, oxv, oxi, vec).reorder(oxi, oxv, j, ro.x).vectorize(oxi).unroll(oxv).unroll(j);
    gout.compute_root().fuse(g, n, gn).parallel(gn).vectorize(ox, vec);
    wt.compute_root();
  }

  // GPU: one scalar sum per thread and tap, at `at`; both operands read in place.
  void schedule_gpu(LoopLevel at) { sum.compute_at(at); }
};

// Estimates of the standard benchmark shape (N8 C64 56x56, 3x3, Co 64), for autoschedulers.
template <class B>
void estimate(B& b, std::vector<int> ext) {
  Region r;
  for (int e : ext) r.push_back({0, e});
  b.set_estimates(r);
}

// GPU: one thread per output point (ox, oy) of stage `s`, in tiles of 16 x 8 points, running
// the loops `inner` (innermost first) itself. The other dimensions `outer` (innermost first)
// are fused into block x, since grid y and z stop at 65535, which the fused dimension may
// pass; the tiles' columns and rows are blocks y and z.
void gpu_point_tiles(Stage s, Var ox, Var oy, const std::vector<VarOrRVar>& inner, const std::vector<Var>& outer) {
  Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
  std::vector<VarOrRVar> order = inner, tiled = inner;
  for (Var v : {xi, yi, xo, yo}) order.push_back(v);
  for (Var v : outer) order.push_back(v);
  s.split(ox, xo, xi, 16, TailStrategy::GuardWithIf).split(oy, yo, yi, 8, TailStrategy::GuardWithIf).reorder(order);
  // Named b1, b2, ... as the dimensions join (a GPU kernel is named after its loops).
  Var fused = outer[0];
  for (size_t d = 1; d < outer.size(); ++d) {
    Var b{"b" + std::to_string(d)};
    s.fuse(fused, outer[d], b);
    fused = b;
  }
  for (VarOrRVar v : {VarOrRVar(xi), VarOrRVar(yi), VarOrRVar(fused), VarOrRVar(xo), VarOrRVar(yo)}) tiled.push_back(v);
  s.reorder(tiled).gpu_blocks(fused, xo, yo).gpu_threads(xi, yi);
}

#define OPLAB_DCN_INPUTS                                                                 \
  Input<Buffer<float>> input{"input", 4};                                                \
  Input<Buffer<float>> offset{"offset", 7};                                              \
  Input<Buffer<float>> mask{"mask", 6};                                                  \
  Input<Buffer<float>> weight{"weight", 5};                                              \
  Input<int> stride_y{"stride_y"}, stride_x{"stride_x"};                                 \
  Input<int> pad_y{"pad_y"}, pad_x{"pad_x"};                                             \
  Input<int> dil_y{"dil_y"}, dil_x{"dil_x"};                                             \
  Conv conv() {                                                                          \
    return make_conv(input, offset, mask, weight, extents(input, 4), extents(offset, 7), \
                     extents(weight, 5), stride_y, stride_x, pad_y, pad_x, dil_y, dil_x); \
  }                                                                                      \
  void estimate_inputs() {                                                               \
    estimate(input, {56, 56, 64, 8});                                              \
    estimate(offset, {56, 56, 2, 3, 3, 1, 8});                                     \
    estimate(mask, {56, 56, 3, 3, 1, 8});                                          \
    estimate(weight, {3, 3, 64, 64, 1});                                           \
    stride_y.set_estimate(1), stride_x.set_estimate(1), pad_y.set_estimate(1);           \
    pad_x.set_estimate(1), dil_y.set_estimate(1), dil_x.set_estimate(1);                 \
  }

// out[n, g, oo, oy, ox] = bias[g, oo] + Σ_{cg, i, j} W[g, oo, cg, i, j] * col(n, g*Cg + cg, i, j, oy, ox).
class DeformConv2dForward : public Generator<DeformConv2dForward> {
 public:
  OPLAB_DCN_INPUTS
  Input<Buffer<float>> bias{"bias", 2};
  Output<Buffer<float>> output{"output", 5};

  Var ox{"ox"}, oy{"oy"}, j{"j"}, i{"i"}, d{"d"}, c{"c"}, n{"n"}, oo{"oo"}, g{"g"}, cg{"cg"};
  Func geo{"geo"}, col{"col"}, taps{"taps"}, acc{"acc"};
  RDom rk, rc;

  void generate() {
    const Conv cv = conv();
    geo(ox, oy, j, i, d, n) = value_geometry(cv, ox, oy, j, i, d, n);
    col(ox, oy, j, i, c, n) = column_value(input, geo(ox, oy, j, i, c / cv.Cd, n), c, n);
    // The taps of one input channel, then the channels: the reference's order (cg outer, then
    // i, then j), with each channel's taps summed apart before they join the total.
    rk = RDom(0, cv.kw, 0, cv.kh, "rk");
    taps(ox, oy, oo, g, cg, n) = 0.0f;
    taps(ox, oy, oo, g, cg, n) += weight(rk.x, rk.y, cg, min(oo, cv.Cog - 1), g) * col(ox, oy, rk.x, rk.y, g * cv.Cg + cg, n);
    rc = RDom(0, cv.Cg, "rc");
    acc(ox, oy, oo, g, n) = 0.0f;
    acc(ox, oy, oo, g, n) += taps(ox, oy, oo, g, rc, n);
    // The bias is added after the sum, as in the reference.
    output(ox, oy, oo, g, n) = bias(oo, g) + acc(ox, oy, oo, g, n);

    estimate_inputs();
    estimate(bias, {64, 1});
    estimate(output, {56, 56, 64, 1, 8});
  }

  void schedule() {
    if (get_target().has_gpu_feature()) {
      // One thread per output pixel and 16 output channels (kept in registers); each
      // sample is computed once per thread and used for all 16. In every GPU schedule here
      // the fused channel/image dimension is block x: grid y and z stop at 65535.
      Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, ooo{"ooo"}, ooi{"ooi"}, b1{"b1"}, b2{"b2"};
      output.split(oo, ooo, ooi, 16, TailStrategy::GuardWithIf)
          .split(ox, xo, xi, 16, TailStrategy::GuardWithIf)
          .split(oy, yo, yi, 8, TailStrategy::GuardWithIf)
          .reorder(ooi, xi, yi, xo, yo, ooo, g, n)
          .fuse(ooo, g, b1)
          .fuse(b1, n, b2)
          .reorder(ooi, xi, yi, b2, xo, yo)
          .gpu_blocks(b2, xo, yo)
          .gpu_threads(xi, yi)
          .unroll(ooi);
      acc.compute_at(output, xi)
          .bound_extent(ox, 1)
          .bound_extent(oy, 1)
          .bound_extent(oo, 16)
          .bound_extent(g, 1)
          .bound_extent(n, 1)
          .store_in(MemoryType::Register)
          .unroll(oo);
      acc.update().reorder(oo, rc.x).unroll(oo);
      taps.compute_at(acc, rc.x).store_in(MemoryType::Register).unroll(oo);
      taps.update().reorder(oo, rk.x, rk.y).unroll(oo);
      col.compute_at(taps, rk.x);
    } else {
      // One task per output row: its sampling table, then the row of every output channel,
      // accumulated over (cg, i, j); the columns of one input channel are sampled once and
      // used by every output channel of its group (no im2col buffer beyond that).
      const int vec = natural_vector_size<float>();
      Var row{"row"};
      output.reorder(ox, oo, g, oy, n).fuse(oy, n, row).parallel(row).vectorize(ox, vec, TailStrategy::GuardWithIf);
      geo.compute_at(output, row).vectorize(ox, vec);
      acc.compute_at(output, row).vectorize(ox, vec);
      // A tile of 4 vectors along ox times 2 output channels sums the taps of one channel in
      // registers (a small fixed-size buffer, the 3x3 taps unrolled), reading each column
      // vector once per tile and each weight once per vector row; the tile then joins the
      // row's total. The channel's columns are sampled once, before its tiles.
      Var oxo{"oxo"}, oxi{"oxi"}, ooo{"ooo"}, ooi{"ooi"};
      acc.update()
          .split(ox, oxo, oxi, 4 * vec)
          .split(oo, ooo, ooi, 2)
          .reorder(oxi, ooi, oxo, ooo, rc.x, g)
          .vectorize(oxi, vec)
          .unroll(ooi);
      col.compute_at(acc, rc.x).vectorize(ox, vec);
      taps.compute_at(acc, oxo).vectorize(ox, vec).unroll(oo);
      Var txv{"txv"}, txi{"txi"};
      Stage tu = taps.update();
      tu.split(ox, txv, txi, vec).reorder(txi, txv, oo, rk.x, rk.y).vectorize(txi).unroll(txv).unroll(oo);
      tu.specialize(weight.dim(0).extent() == 3 && weight.dim(1).extent() == 3).unroll(rk.x).unroll(rk.y);
    }
  }
};

// grad_input: the transpose of B, scattered. Each input plane (n, c) is written only by the
// samples of its own channel, so the CPU runs planes in parallel with no atomics; the GPU
// runs output positions in parallel and adds atomically.
class DeformConv2dGradInput : public Generator<DeformConv2dGradInput> {
 public:
  OPLAB_DCN_INPUTS
  Input<Buffer<float>> grad_output{"grad_output", 5};
  Output<Buffer<float>> grad_input{"grad_input", 4};

  Var ox{"ox"}, oy{"oy"}, j{"j"}, i{"i"}, d{"d"}, c{"c"}, n{"n"}, x{"x"}, y{"y"};
  Func geo{"geo"}, geo_c{"geo_c"}, shares{"shares"};
  Gcol gc;
  RDom rs;

  void generate() {
    const Conv cv = conv();
    // Per point: corners, weights (times the mask) and which corners take a share. As in the
    // reference, a share goes only to in-image corners of nonzero weight of an in-range point.
    DcnPoint p = cv.point(ox, oy, j, i, d, n);
    CornerWeights w = corner_weights(p);
    Expr m = select(p.finite, cv.mask_at(ox, oy, j, i, d, n), 0.0f);
    Expr bits = dcn_corner_bits(p.in_range && p.in_y0 && p.in_x0 && w.w00 != 0.0f,
                                p.in_range && p.in_y0 && p.in_x1 && w.w01 != 0.0f,
                                p.in_range && p.in_y1 && p.in_x0 && w.w10 != 0.0f,
                                p.in_range && p.in_y1 && p.in_x1 && w.w11 != 0.0f);
    geo(ox, oy, j, i, d, n) = Tuple(std::vector<Expr>{p.x0, p.x1, p.y0, p.y1, w.w00, w.w01, w.w10, w.w11, m, bits});

    gc.define(cv, weight, grad_output, ox, oy, j, i, c, n);

    // rs = (b, a, ox, j, i, oy): corner (a, b) innermost, output row outermost.
    rs = RDom({{0, 2}, {0, 2}, {0, cv.Wo}, {0, cv.kw}, {0, cv.kh}, {0, cv.Ho}}, "rs");
    RVar rb = rs[0], ra = rs[1], rox = rs[2], rj = rs[3], ri = rs[4], roy = rs[5];
    // The point table seen from channel c (its offset group's entry).
    geo_c(ox, oy, j, i, c, n) = geo(ox, oy, j, i, c / cv.Cd, n);
    // The four shares of a point: corner weight * (m * Gcol), or 0 for a corner that takes none.
    {
      FuncRef s = geo_c(ox, oy, j, i, c, n);
      Expr mg = s[8] * gc.gcol(ox, oy, j, i, c, n);
      std::vector<Expr> v;
      for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b) v.push_back(select(dcn_corner_on(s[9], a, b), s[4 + 2 * a + b] * mg, 0.0f));
      shares(ox, oy, j, i, c, n) = Tuple(v);
    }
    FuncRef s = geo_c(rox, roy, rj, ri, c, n);
    FuncRef sh = shares(rox, roy, rj, ri, c, n);
    Expr xx = select(rb == 0, s[0], s[1]), yy = select(ra == 0, s[2], s[3]);
    grad_input(x, y, c, n) = 0.0f;
    grad_input(xx, yy, c, n) += select(ra == 0, select(rb == 0, sh[0], sh[1]), select(rb == 0, sh[2], sh[3]));

    estimate_inputs();
    estimate(grad_output, {56, 56, 64, 1, 8});
    estimate(grad_input, {56, 56, 64, 8});
  }

  void schedule() {
    RVar rb = rs[0], ra = rs[1], rox = rs[2], rj = rs[3], ri = rs[4], roy = rs[5];
    if (get_target().has_gpu_feature()) {
      Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, cn{"cn"};
      RVar rxo{"rxo"}, rxi{"rxi"}, ryo{"ryo"}, ryi{"ryi"};
      grad_input.split(x, xo, xi, 32, TailStrategy::GuardWithIf)
          .split(y, yo, yi, 8, TailStrategy::GuardWithIf)
          .reorder(xi, yi, xo, yo, c, n)
          .fuse(c, n, cn)
          .reorder(xi, yi, cn, xo, yo)
          .gpu_blocks(cn, xo, yo)
          .gpu_threads(xi, yi);
      // One thread per output position and channel; its taps and corners in turn. Threads of
      // other positions may hit the same pixel, hence the atomic adds.
      grad_input.update()
          .atomic()
          .split(rox, rxo, rxi, 32, TailStrategy::GuardWithIf)
          .split(roy, ryo, ryi, 8, TailStrategy::GuardWithIf)
          .reorder(rb, ra, rj, ri, rxi, ryi, rxo, ryo, c, n)
          .fuse(c, n, cn)
          .reorder(rb, ra, rj, ri, rxi, ryi, cn, rxo, ryo)
          .gpu_blocks(cn, rxo, ryo)
          .gpu_threads(rxi, ryi)
          .unroll(rb)
          .unroll(ra);
      gc.schedule_gpu(LoopLevel(grad_input, rj));
      // The point is computed once per thread and tap, so the pixel a corner's atomic add
      // writes and the one its value reads are the same expression, which Halide needs in
      // order to emit a native float atomic add (atom.global.add.f32) instead of a CAS loop.
      geo_c.compute_at(grad_input, rj);
    } else {
      const int vec = natural_vector_size<float>();
      Var row{"row"}, cn{"cn"};
      grad_input.fuse(c, n, cn).parallel(cn).vectorize(x, vec, TailStrategy::GuardWithIf);
      // One task per input plane (n, c): only samples of channel c write it, so no two tasks
      // touch the same pixel. Gcol of a plane is computed one output row (all taps) at a time.
      grad_input.update().reorder(rb, ra, rox, rj, ri, roy, c, n).unroll(rb).unroll(ra).fuse(c, n, cn).parallel(cn);
      gc.schedule_cpu(LoopLevel(grad_input, roy), vec);
      // The shares of a row are computed as vectors; the scatter then only adds them.
      shares.compute_at(grad_input, roy).vectorize(ox, vec);
      // The point table is shared by every channel of an offset group: computed once, up front.
      geo.compute_root().reorder(ox, j, i, d, oy, n).fuse(oy, n, row).parallel(row).vectorize(ox, vec, TailStrategy::GuardWithIf);
    }
  }
};

// grad_offset and grad_mask: gathers over the channels of each offset group.
//   grad_offset[.., 2(dK+k) + comp, oy, ox] = m * Σ_c Gcol * dB/d(y or x)   (no outer cut-off)
//   grad_mask[.., dK+k, oy, ox]             =     Σ_c Gcol * B
// and both are 0 for a point with a non-finite offset.
class DeformConv2dGradOffsetMask : public Generator<DeformConv2dGradOffsetMask> {
 public:
  OPLAB_DCN_INPUTS
  Input<Buffer<float>> grad_output{"grad_output", 5};
  Output<Buffer<float>> grad_offset{"grad_offset", 7};
  Output<Buffer<float>> grad_mask{"grad_mask", 6};

  Var ox{"ox"}, oy{"oy"}, j{"j"}, i{"i"}, d{"d"}, c{"c"}, n{"n"}, comp{"comp"};
  Func geo{"geo"}, terms{"terms"};
  Gcol gcol;
  RDom rc;

  void generate() {
    const Conv cv = conv();
    // Per point: corners, fractions, which corners lie in the image (the derivative's rule)
    // and whether the point is in rule B's range (the value's rule, for grad_mask).
    DcnPoint p = cv.point(ox, oy, j, i, d, n);
    Expr bits = dcn_corner_bits(p.in_y0 && p.in_x0, p.in_y0 && p.in_x1, p.in_y1 && p.in_x0, p.in_y1 && p.in_x1);
    geo(ox, oy, j, i, d, n) = Tuple(std::vector<Expr>{p.x0, p.x1, p.y0, p.y1, p.lx, p.ly, bits, cast<uint8_t>(p.in_range)});

    gcol.define(cv, weight, grad_output, ox, oy, j, i, c, n);

    rc = RDom(0, cv.Cd, "rc");
    Expr ch = d * cv.Cd + rc;
    FuncRef s = geo(ox, oy, j, i, d, n);
    auto v = [&](int a, int b) {
      return select(dcn_corner_on(s[6], a, b), input(s[b ? 1 : 0], s[a ? 3 : 2], ch, n), 0.0f);
    };
    Expr v00 = v(0, 0), v01 = v(0, 1), v10 = v(1, 0), v11 = v(1, 1);
    Expr lx = s[4], ly = s[5];
    // Evaluated as written (strict_float): fast-math may rewrite a blend as a + t*(b - a),
    // which turns an Inf in the image into NaN where IEEE order gives Inf.
    Expr dBy = strict_float((1.0f - lx) * (v10 - v00) + lx * (v11 - v01));
    Expr dBx = strict_float((1.0f - ly) * (v01 - v00) + ly * (v11 - v10));
    Expr B = select(s[7] != cast<uint8_t>(0),
                    strict_float((1.0f - ly) * (1.0f - lx) * v00 + (1.0f - ly) * lx * v01 + ly * (1.0f - lx) * v10 +
                                 ly * lx * v11),
                    0.0f);
    Expr gc = gcol.gcol(ox, oy, j, i, ch, n);
    terms(ox, oy, j, i, d, n) = Tuple(0.0f, 0.0f, 0.0f);
    FuncRef t = terms(ox, oy, j, i, d, n);
    terms(ox, oy, j, i, d, n) = Tuple(t[0] + gc * dBy, t[1] + gc * dBx, t[2] + gc * B);

    // The mask factors out of the sum over channels; a non-finite offset gets no gradient.
    Expr finite = p.finite;
    Expr m = cv.mask_at(ox, oy, j, i, d, n);
    FuncRef tt = terms(ox, oy, j, i, d, n);
    grad_offset(ox, oy, comp, j, i, d, n) = select(finite, m * select(comp == 0, tt[0], tt[1]), 0.0f);
    grad_mask(ox, oy, j, i, d, n) = select(finite, tt[2], 0.0f);

    estimate_inputs();
    estimate(grad_output, {56, 56, 64, 1, 8});
    estimate(grad_offset, {56, 56, 2, 3, 3, 1, 8});
    estimate(grad_mask, {56, 56, 3, 3, 1, 8});
  }

  void schedule() {
    if (get_target().has_gpu_feature()) {
      // One thread per point; the channels of its group and, per channel, the Gcol dot product
      // in turn.
      terms.compute_root();
      gpu_point_tiles(terms, ox, oy, {}, {j, i, d, n});
      gpu_point_tiles(terms.update(), ox, oy, {rc.x}, {j, i, d, n});
      gcol.schedule_gpu(LoopLevel(terms, rc.x));
      gpu_point_tiles(grad_offset, ox, oy, {}, {comp, j, i, d, n});
      gpu_point_tiles(grad_mask, ox, oy, {}, {j, i, d, n});
    } else {
      const int vec = natural_vector_size<float>();
      Var row{"row"}, dn{"dn"};
      // One task per output row: its point table, then per channel of the group its Gcol row
      // (all taps) and the gathers.
      terms.compute_root().reorder(ox, j, i, d, oy, n).fuse(oy, n, row).parallel(row).vectorize(ox, vec);
      terms.update().reorder(ox, j, i, rc.x, d, oy, n).fuse(oy, n, row).parallel(row).vectorize(ox, vec);
      geo.compute_at(terms, row).vectorize(ox, vec);
      gcol.schedule_cpu(LoopLevel(terms, rc.x), vec);
      grad_offset.reorder(ox, comp, j, i, oy, d, n).fuse(d, n, dn).parallel(dn).vectorize(ox, vec, TailStrategy::GuardWithIf);
      grad_mask.reorder(ox, j, i, oy, d, n).fuse(d, n, dn).parallel(dn).vectorize(ox, vec, TailStrategy::GuardWithIf);
    }
  }
};

// grad_weight[g, oo, cg, i, j] = Σ_{n, oy, ox} grad_output[n, g, oo, oy, ox] * col(n, g*Cg + cg, i, j, oy, ox)
// and grad_bias[g, oo] = Σ grad_output. The (n, oy) rows are split into `chunks` equal
// chunks (the glue picks a divisor of N*Ho), each summed into its own partial result, so the
// chunks run in parallel with no shared writes; the partials are added at the end.
class DeformConv2dGradWeight : public Generator<DeformConv2dGradWeight> {
 public:
  OPLAB_DCN_INPUTS
  Input<Buffer<float>> grad_output{"grad_output", 5};
  Input<int> chunks{"chunks"};
  Output<Buffer<float>> grad_weight{"grad_weight", 5};
  Output<Buffer<float>> grad_bias{"grad_bias", 2};

  Var ox{"ox"}, oy{"oy"}, j{"j"}, i{"i"}, d{"d"}, c{"c"}, n{"n"}, oo{"oo"}, g{"g"}, cg{"cg"}, t{"t"};
  Func geo{"geo"}, col{"col"}, gout{"gout"}, partial{"partial"}, partial_bias{"partial_bias"};
  RDom r, rt;

  void generate() {
    const Conv cv = conv();
    geo(ox, oy, j, i, d, n) = value_geometry(cv, ox, oy, j, i, d, n);
    col(ox, oy, j, i, c, n) = column_value(input, geo(ox, oy, j, i, c / cv.Cd, n), c, n);
    // The CPU schedule rounds Co/G up to whole vectors; those lanes read the last channel.
    gout(ox, oy, oo, g, n) = grad_output(ox, oy, clamp(oo, 0, cv.Cog - 1), g, n);

    Expr rows_per_chunk = cv.N * cv.Ho / chunks;
    r = RDom(0, cv.Wo, 0, rows_per_chunk, "r");
    Expr row = t * rows_per_chunk + r.y;
    // (Not row % Ho: Halide bounds a modulus by its divisor, which would make every row's
    // tables cover the whole image. The clamp changes no value; it keeps the bounds of a
    // range of rows inside the image.)
    Expr rn = row / cv.Ho, roy = clamp(row - rn * cv.Ho, 0, cv.Ho - 1);
    partial(j, i, cg, oo, g, t) = 0.0f;
    partial(j, i, cg, oo, g, t) += gout(r.x, roy, oo, g, rn) * col(r.x, roy, j, i, g * cv.Cg + cg, rn);
    partial_bias(oo, g, t) = 0.0f;
    partial_bias(oo, g, t) += grad_output(r.x, roy, oo, g, rn);

    rt = RDom(0, chunks, "rt");
    grad_weight(j, i, cg, oo, g) = sum(partial(j, i, cg, oo, g, rt));
    grad_bias(oo, g) = sum(partial_bias(oo, g, rt));

    estimate_inputs();
    estimate(grad_output, {56, 56, 64, 1, 8});
    chunks.set_estimate(16);
    estimate(grad_weight, {3, 3, 64, 64, 1});
    estimate(grad_bias, {64, 1});
  }

  void schedule() {
    if (get_target().has_gpu_feature()) {
      // One thread per weight element and chunk; threads next to each other differ in oo only,
      // so a warp samples the same input points (broadcast reads).
      Var a1{"a1"}, a2{"a2"}, a3{"a3"}, a4{"a4"}, ab{"ab"}, at{"at"};
      partial.compute_root()
          .reorder(oo, j, i, cg, g, t)
          .fuse(oo, j, a1).fuse(a1, i, a2).fuse(a2, cg, a3).fuse(a3, g, a4)
          .gpu_tile(a4, ab, at, 128, TailStrategy::GuardWithIf)
          .gpu_blocks(t);
      partial.update()
          .reorder(r.x, r.y, oo, j, i, cg, g, t)
          .fuse(oo, j, a1).fuse(a1, i, a2).fuse(a2, cg, a3).fuse(a3, g, a4)
          .gpu_tile(a4, ab, at, 128, TailStrategy::GuardWithIf)
          .gpu_blocks(t);
      partial_bias.compute_root().fuse(oo, g, a1).gpu_tile(a1, ab, at, 64, TailStrategy::GuardWithIf).gpu_blocks(t);
      partial_bias.update().reorder(r.x, r.y, oo, g, t).fuse(oo, g, a1).gpu_tile(a1, ab, at, 64, TailStrategy::GuardWithIf).gpu_blocks(t);
      grad_weight.reorder(oo, j, i, cg, g)
          .fuse(oo, j, a1).fuse(a1, i, a2).fuse(a2, cg, a3).fuse(a3, g, a4)
          .gpu_tile(a4, ab, at, 128, TailStrategy::GuardWithIf);
      grad_bias.fuse(oo, g, a1).gpu_tile(a1, ab, at, 64, TailStrategy::GuardWithIf);
    } else {
      const int vec = natural_vector_size<float>();
      RVar rx = r.x, ry = r.y;
      Var ooo{"ooo"}, ooi{"ooi"};
      // Partials keep oo innermost in memory so that a vector of output channels accumulates
      // one weight element each; per row: the point table and a transposed grad_output row,
      // then per input channel its columns (all taps), used by every output channel.
      partial.compute_root().reorder_storage(oo, j, i, cg, g, t);
      partial.reorder(oo, j, i, cg, g, t).parallel(t).vectorize(oo, vec);
      partial.update()
          .split(oo, ooo, ooi, vec)
          .reorder(ooi, rx, j, i, ooo, cg, ry, g, t)
          .vectorize(ooi)
          .parallel(t);
      geo.compute_at(partial, ry).vectorize(ox, vec);
      gout.compute_at(partial, ry).reorder_storage(oo, ox, oy, g, n).vectorize(oo, vec);
      col.compute_at(partial, cg).vectorize(ox, vec);
      partial_bias.compute_root().parallel(t);
      partial_bias.update().reorder(rx, ry, oo, g, t).parallel(t);
      grad_weight.reorder(j, i, cg, oo, g).parallel(oo);
      grad_bias.compute_root();
    }
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(DeformConv2dForward, deform_conv2d_forward)
HALIDE_REGISTER_GENERATOR(DeformConv2dGradInput, deform_conv2d_grad_input)
HALIDE_REGISTER_GENERATOR(DeformConv2dGradOffsetMask, deform_conv2d_grad_offset_mask)
HALIDE_REGISTER_GENERATOR(DeformConv2dGradWeight, deform_conv2d_grad_weight)
