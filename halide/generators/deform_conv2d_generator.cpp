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
//
// CPU schedules (the GPU ones are unchanged):
//  * forward: per output row (parallel over (n, oy)), the point table, then the row's column
//    colc(c, tap, ox) sampled from a channels-innermost copy of the image (the four corners of
//    a sample are dense vectors over the channels: no gathers), then a GEMM
//    out(oo, ox) = Σ_(c, tap) W(oo, c, tap) col(c, tap, ox) in register tiles of 4 vectors of
//    output channels x 6 columns: 24 zmm accumulators, per k 4 weight loads and 6 broadcasts,
//    no spills (the D == 1 stage; D > 1 divides per k and is kept for correctness only).
//  * grad_weight: the same column, then per row a GEMM over ox in tiles of 4 vectors of input
//    channels x 6 output channels; the chunks' partials are added in double, a vector of
//    channels at a time.
//  * Gcol = W^T gout (ChannelGcol), the column gradient, its own pipeline (DeformConv2dGcol):
//    per output row a GEMM with the input channels along the vectors (tiles of 4 vectors of
//    channels x 6 columns, as the forward's), stored channels-innermost for one image into a
//    scratch buffer the glue holds for the call's life. The CPU backward runs image by image:
//    Gcol, then grad_input and grad_offset/grad_mask both reading it, so it is computed once
//    (each computed its own before: two GEMMs of the forward's size where one now runs). One
//    image at a time keeps the scratch at C * kh * kw * Ho * Wo floats (19 MB for C128 64²).
//  * grad_input: per task (2 vectors of channels of one image) and output row, each sample
//    adds a vector of that block's Gcol, times its corner weights, to its corners in the
//    task's own channels-innermost gradient block (no atomics). The block is allocated per
//    task (a few hundred KB the heap hands back call after call) instead of one multi-MB
//    buffer per call whose first touches faulted page by page; the point table is made per
//    row, for the same reason.
//  * grad_offset/grad_mask: per output row, per point the channels of its offset group a
//    vector at a time: the four corners read from a channels-innermost copy of the image and
//    Gcol are dense vectors (no gathers), three vector accumulators per point (Gcol * dB/dy,
//    Gcol * dB/dx, Gcol * B), their lanes added by halves at the end.
// Sharing Gcol changes no result: the same tiles sum in the same order (the A/B below
// compared every output bit for bit).
// Measured, forward (`oplab bench --shape deform_conv2d --repeats 7`, 2 threads, a shared and
// heavily loaded machine: that run's FMA probe read 95 GFLOP/s against 445 when quiet): 3.05 /
// 35.4 / 40.2 ms for N1 C64 56², N8 C64 56², N4 C128 64², 11.9x / 4.9x / 4.0x faster than ONNX
// Runtime's DeformConv in the same run; 81 / 56 / 124 GFLOP/s, i.e. 18% / 12% / 28% of the
// quiet peak. perf on N4 C128: of the row tasks' samples the GEMM loop takes ~75%, the
// sampling ~10%, the output's stores ~14%.
// Backward, sharing Gcol (before: grad_input and grad_offset/grad_mask each with its own; the
// earlier history is in docs/bench/2026-11-25b-cpu.md), both versions alternating in one
// process with the forward and grad_weight (2 threads, a machine at load 5-7; median of 9,
// ms): N8 C64 grad_input + grad_offset/mask 94 -> 77 (Gcol 24, grad_input 27, grad_offset/mask
// 26), backward 134 -> 117, 3.6x -> 3.2x the forward's 37; N4 C128 168 -> 120 (70, 21, 30),
// 249 -> 202, 3.7x -> 3.0x the forward's 67. N1 C64 is too short to time at that load (the
// new backward's median 9.0 and 15.5 ms in two rounds, the old one's 15.0 and 19.8). Every
// output equal bit for bit. perf, share of the kernels' samples (forward included) before ->
// after: N8 C64 forward 23 -> 26%, grad_weight 23 -> 25%, grad_input 28 -> 19%,
// grad_offset/mask 26 -> 19%, Gcol 12%; N4 C128 24 -> 28%, 23 -> 26%, 27 -> 14%, 26 -> 11%,
// 21%. The target (backward <= 2.5x the forward) is still missed: the backward runs two GEMMs
// of the forward's size, Gcol and grad_weight's (which also samples again the column the
// forward sampled), each taking about the forward's time (N4 C128: 70 and 81 ms against 67),
// so 2x goes before the scatter and the per-point sums (~0.3-0.5x each).
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

// The column value m * B(X; y, x) from a value_geometry entry s; read(x, y) is the image.
template <class Read>
Expr column_value_of(const FuncRef& s, Read read) {
  auto X = [&](int a, int b) {
    Expr xx = s[b ? 1 : 0], yy = s[a ? 3 : 2];
    return select(dcn_corner_on(s[9], a, b), read(xx, yy), 0.0f);
  };
  return s[8] * (s[4] * X(0, 0) + s[5] * X(0, 1) + s[6] * X(1, 0) + s[7] * X(1, 1));
}

// The column value m * B(X[n, c]; y, x) of channel c.
Expr column_value(const Func& input, const FuncRef& s, Expr c, Expr n) {
  return column_value_of(s, [&](Expr x, Expr y) { return input(x, y, c, n); });
}

// CPU: the column of an output row with the channels innermost, colc(c, j, i, ox, oy, d, n),
// channel c of offset group d. The image is first copied channels-innermost (in_t), so the four
// corners of a sample are dense vectors over the channels of its offset group (no gathers).
// The rounded-up vectors read the last channel. at() reads channel ch; with one offset group
// the channel is the index as it is (no division in the GEMMs' inner loops: their stages are
// specialized on D == 1).
struct ChannelColumn {
  Func in_t{"in_t"}, colc{"colc"};
  Expr one_group, Cd, D;

  void define(const Conv& cv, const Func& input, const Func& geo, Var c, Var x, Var y, Var j, Var i, Var ox, Var oy,
              Var d, Var n) {
    // (The clamps change no value; they keep the bounds Halide infers inside the buffers.)
    in_t(c, x, y, n) = input(x, y, clamp(c, 0, cv.C - 1), n);
    colc(c, j, i, ox, oy, d, n) =
        column_value_of(geo(ox, oy, j, i, d, n), [&](Expr xx, Expr yy) { return in_t(d * cv.Cd + c, xx, yy, n); });
    one_group = cv.D == 1, Cd = cv.Cd, D = cv.D;
  }
  Expr at(Expr ch, Expr j, Expr i, Expr ox, Expr oy, Expr n) const {
    Expr dd = select(one_group, 0, clamp(ch / Cd, 0, D - 1));
    Expr cd = select(one_group, ch, clamp(ch - dd * Cd, 0, Cd - 1));
    return colc(cd, j, i, ox, oy, dd, n);
  }
  void schedule(LoopLevel at_row, int vec) {
    // in_t: a transpose, vectorized along x: dense loads from the image and a scatter of
    // scalar stores into the channels-innermost copy (vectors along c would be gathers across
    // as many planes, i.e. pages, as lanes; measured several times slower).
    std::vector<Var> a = in_t.args();
    Var yn{"yn"};
    in_t.compute_root().reorder(a[1], a[0], a[2], a[3]).fuse(a[2], a[3], yn).parallel(yn).vectorize(a[1], vec, TailStrategy::GuardWithIf);
    colc.compute_at(at_row).vectorize(colc.args()[0], vec);
  }
};

// The gradient of the column value of input channel c at tap (j, i): Gcol = Σ over the output
// channels oo of c's weight group of W[g, oo, cg, i, j] * grad_output[n, g, oo, oy, ox].
struct Gcol {
  Func sum{"gcol_sum"}, gcol{"gcol"};
  RDom ro;

  // GPU: per thread and tap, the weights and grad_output read in place.
  void define(const Conv& cv, const Func& weight, const Func& grad_output, Var ox, Var oy, Var j, Var i, Var c,
              Var n) {
    // (The clamp changes no value; it keeps the bounds Halide infers for a range of channels
    // inside the weight buffer.)
    Expr gg = c / cv.Cg, cgc = clamp(c - gg * cv.Cg, 0, cv.Cg - 1);
    ro = RDom(0, cv.Cog, "ro");
    sum(ox, oy, j, i, c, n) = 0.0f;
    sum(ox, oy, j, i, c, n) += weight(j, i, cgc, ro, gg) * grad_output(ox, oy, ro, gg, n);
    gcol(ox, oy, j, i, c, n) = sum(ox, oy, j, i, c, n);
  }

  // One scalar sum per thread and tap, at `at`.
  void schedule_gpu(LoopLevel at) { sum.compute_at(at); }
};

// CPU: the same Gcol with the channels innermost, gcol_t(c, j, i, ox, oy, n), as a GEMM per
// output row: the weight copied channels-innermost (wt_t), grad_output broadcast. The Gcol
// pipeline stores it per image (its output is gcol_t's value); grad_input and
// grad_offset/grad_mask read that a vector of channels at a time. Channels past C (the
// schedule rounds up to whole tiles) read clamped weights.
struct ChannelGcol {
  Func wt_t{"wt_t"}, sum{"gsum"}, gcol_t{"gcol_t"};
  RDom ro;
  Expr G;
  Var c, j, i, ox;

  void define(const Conv& cv, const Func& weight, const Func& grad_output, Var c_, Var j_, Var i_, Var ox_, Var oy,
              Var n) {
    c = c_, j = j_, i = i_, ox = ox_, G = cv.G;
    Expr gg = group_of(cv, c);
    Var oo{"oo"};
    wt_t(c, oo, j, i) = weight(j, i, clamp(c - gg * cv.Cg, 0, cv.Cg - 1), oo, gg);
    ro = RDom(0, cv.Cog, "ro");
    sum(c, j, i, ox, oy, n) = 0.0f;
    sum(c, j, i, ox, oy, n) += wt_t(c, ro, j, i) * grad_output(clamp(ox, 0, cv.Wo - 1), oy, ro, group_of(cv, c), n);
    gcol_t(c, j, i, ox, oy, n) = sum(c, j, i, ox, oy, n);
  }
  // Weight group of channel ch (0 without groups: no division in the inner loops).
  static Expr group_of(const Conv& cv, Expr ch) { return select(cv.G == 1, 0, clamp(ch / cv.Cg, 0, cv.G - 1)); }

  // `out` (gcol_t's value, with gcol_t's arguments), one task per output row, in register
  // tiles of kC channels (kC / vec vectors) times kOx outputs along ox: per output channel,
  // kC / vec weight vectors loaded and kOx grad_output elements broadcast. The output buffer
  // is rounded up to whole tiles by the caller.
  void schedule(Func out, int vec, int kC, int kOx) {
    Var co{"co"}, ci{"ci"}, cv_{"cv"}, oxo{"oxo"}, oxi{"oxi"}, row{"row"};
    std::vector<Var> a = out.args();  // (c, j, i, ox, oy, n)
    out.split(a[0], co, ci, kC, TailStrategy::RoundUp)
        .split(a[3], oxo, oxi, kOx, TailStrategy::RoundUp)
        .reorder(ci, oxi, oxo, a[1], a[2], co, a[4], a[5])
        .fuse(a[4], a[5], row)
        .parallel(row)
        .vectorize(ci, vec);
    sum.compute_at(out, oxo).vectorize(c, vec).unroll(ox);
    Stage su = sum.update();
    su.split(c, cv_, ci, vec).reorder(ci, cv_, ox, ro.x).vectorize(ci).unroll(cv_).unroll(ox);
    su.specialize(G == 1);
    wt_t.compute_root().vectorize(c, vec);
  }
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

  Var ox{"ox"}, oy{"oy"}, j{"j"}, i{"i"}, d{"d"}, c{"c"}, n{"n"}, oo{"oo"}, g{"g"}, cg{"cg"}, x{"x"}, y{"y"};
  Func geo{"geo"}, col{"col"}, taps{"taps"}, acc{"acc"};
  Func wp{"wp"}, blk{"blk"}, out_t{"out_t"};
  ChannelColumn cc;
  RDom rk, rc;

  void generate() {
    const Conv cv = conv();
    geo(ox, oy, j, i, d, n) = value_geometry(cv, ox, oy, j, i, d, n);
    if (get_target().has_gpu_feature()) {
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
    } else {
      // CPU: a GEMM per output row, out_t(oo, ox) = Σ_k W(oo, k) col(k, ox), with the output
      // channels along the vectors and the column (ChannelColumn) read one element at a time,
      // broadcast. The rounded-up output channels read a zero weight (wp): never stored.
      cc.define(cv, input, geo, c, x, y, j, i, ox, oy, d, n);
      wp(oo, cg, j, i, g) = select(oo < cv.Cog, weight(j, i, cg, clamp(oo, 0, cv.Cog - 1), g), 0.0f);
      // k = (cg, j, i), cg innermost: the weights and the column are both read in memory order.
      rk = RDom(0, cv.Cg, 0, cv.kw, 0, cv.kh, "rk");
      blk(oo, ox, oy, g, n) = 0.0f;
      blk(oo, ox, oy, g, n) += wp(oo, rk.x, rk.y, rk.z, g) * cc.at(g * cv.Cg + rk.x, rk.y, rk.z, ox, oy, n);
      out_t(oo, ox, oy, g, n) = blk(oo, ox, oy, g, n);
      // The bias is added after the sum, as in the reference.
      output(ox, oy, oo, g, n) = bias(oo, g) + out_t(oo, ox, oy, g, n);
    }

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
      // One task per output row: its sampling table, its column (every channel and tap), then
      // the row's GEMM in register tiles of kOoVecs vectors of output channels times kOx
      // outputs along ox (kOoVecs * kOx accumulators; per k, kOoVecs weight vectors loaded
      // and kOx column elements broadcast), k innermost. The tile's out_t is stored channel-
      // innermost and transposed by the output's vector stores.
      const int vec = natural_vector_size<float>();
      const int kOoVecs = 4, kOx = 6;
      Var row{"row"}, oxo{"oxo"}, oxi{"oxi"}, ooo{"ooo"}, ooi{"ooi"}, oov{"oov"};
      output.reorder(ox, oo, g, oy, n).fuse(oy, n, row).parallel(row).vectorize(ox, vec, TailStrategy::GuardWithIf);
      cc.schedule(LoopLevel(output, row), vec);
      wp.compute_root().vectorize(oo, vec);
      geo.compute_at(output, row).vectorize(ox, vec);
      out_t.compute_at(output, row)
          .split(ox, oxo, oxi, kOx, TailStrategy::RoundUp)
          .split(oo, ooo, ooi, kOoVecs * vec, TailStrategy::RoundUp)
          .reorder(ooi, oxi, oxo, ooo, oy, g, n)
          .vectorize(ooi, vec);
      blk.compute_at(out_t, oxo).vectorize(oo, vec).unroll(oo).unroll(ox);
      blk.update()
          .split(oo, oov, ooi, vec)
          .reorder(ooi, oov, ox, rk.x, rk.y, rk.z)
          .vectorize(ooi)
          .unroll(oov)
          .unroll(ox)
          .specialize(offset.dim(5).extent() == 1);
    }
  }
};

// The column gradient Gcol = W^T gout (ChannelGcol) of the images of grad_output, stored
// channels-innermost, gcol(c, j, i, ox, oy, n), for grad_input and grad_offset/grad_mask to
// share (CPU only: the GPU pipelines compute it where they use it). The output buffer must be
// rounded up to whole tiles: its channels to a multiple of 64 and its ox to a multiple of 6
// (the tiles of every CPU target); the extra elements hold values for clamped channels and
// columns.
class DeformConv2dGcol : public Generator<DeformConv2dGcol> {
 public:
  Input<Buffer<float>> weight{"weight", 5};
  Input<Buffer<float>> grad_output{"grad_output", 5};
  Output<Buffer<float>> gcol{"gcol", 6};

  Var c{"c"}, j{"j"}, i{"i"}, ox{"ox"}, oy{"oy"}, n{"n"};
  ChannelGcol cg;

  void generate() {
    Conv cv;
    cv.kw = weight.dim(0).extent(), cv.kh = weight.dim(1).extent(), cv.Cg = weight.dim(2).extent();
    cv.Cog = weight.dim(3).extent(), cv.G = weight.dim(4).extent(), cv.Wo = grad_output.dim(0).extent();
    cg.define(cv, weight, grad_output, c, j, i, ox, oy, n);
    gcol(c, j, i, ox, oy, n) = cg.sum(c, j, i, ox, oy, n);
    estimate(weight, {3, 3, 64, 64, 1});
    estimate(grad_output, {56, 56, 64, 1, 1});
    estimate(gcol, {64, 3, 3, 56, 56, 1});
  }

  void schedule() {
    const int vec = natural_vector_size<float>();
    // The forward's tile: 4 vectors of channels x 6 columns, 24 accumulators, per k 4 loads
    // and 6 broadcasts (2 x 8, 16 accumulators for 10 loads, was 7% slower at C128 64x64).
    cg.schedule(gcol, vec, 4 * vec, 6);
  }
};

// grad_input: the transpose of B, scattered. Each input plane (n, c) is written only by the
// samples of its own channel, so the CPU runs planes in parallel with no atomics; the GPU
// runs output positions in parallel and adds atomically.
class DeformConv2dGradInput : public Generator<DeformConv2dGradInput> {
 public:
  OPLAB_DCN_INPUTS
  Input<Buffer<float>> grad_output{"grad_output", 5};
  // CPU: Gcol of these images (DeformConv2dGcol); the GPU schedule computes its own.
  Input<Buffer<float>> gcol{"gcol", 6};
  Output<Buffer<float>> grad_input{"grad_input", 4};

  Var ox{"ox"}, oy{"oy"}, j{"j"}, i{"i"}, d{"d"}, c{"c"}, n{"n"}, x{"x"}, y{"y"};
  Func geo{"geo"}, geo_c{"geo_c"}, shares{"shares"};
  Gcol gc;
  RDom rs;
  // CPU: the gradient channels-innermost (gin_t).
  Func gin_t{"gin_t"};
  Expr D_;

  // CPU: Gcol = W^T gout read from the gcol input, then the scatter: each sample adds a
  // vector of channels to its corners in gin_t(c, x, y, n), whose channels are innermost, so a
  // corner's share is one dense vector add. A task owns a block of channels of one image and
  // its own block of gin_t (a few hundred KB, reused from the heap call after call instead of
  // a multi-MB fresh buffer whose first touches fault page by page), so no two tasks write the
  // same element. Without groups (G == 1, D == 1, the specialized stages) a vector's channels
  // share their weight group and sampling point.
  void define_cpu(const Conv& cv, RVar rb, RVar ra, RVar rox, RVar rj, RVar ri, RVar roy) {
    // (The clamps change no value; they keep the bounds Halide infers inside the buffers, and
    // let the rounded-up channels read valid elements; they are never stored to grad_input.)
    D_ = cv.D;
    auto offset_group_of = [&](Expr ch) { return select(cv.D == 1, 0, clamp(ch / cv.Cd, 0, cv.D - 1)); };
    FuncRef s = geo(rox, roy, rj, ri, offset_group_of(c), n);
    // (Every channel read is below the buffer's extent, the glue's rounding; the promise keeps
    // Halide's bound for the rounded-up, fused channel loops from running past it.)
    Expr mg = s[8] * gcol(unsafe_promise_clamped(c, 0, gcol.dim(0).extent() - 1), rj, ri, rox, roy, n);
    Expr share = select(ra == 0, select(rb == 0, s[4], s[5]), select(rb == 0, s[6], s[7])) * mg;
    Expr on = select(ra == 0, select(rb == 0, dcn_corner_on(s[9], 0, 0), dcn_corner_on(s[9], 0, 1)),
                     select(rb == 0, dcn_corner_on(s[9], 1, 0), dcn_corner_on(s[9], 1, 1)));
    Expr xx = select(rb == 0, s[0], s[1]), yy = select(ra == 0, s[2], s[3]);
    gin_t(c, x, y, n) = 0.0f;
    gin_t(c, xx, yy, n) += select(on, share, 0.0f);
    grad_input(x, y, c, n) = gin_t(c, x, y, n);
  }

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

    // rs = (b, a, ox, j, i, oy): corner (a, b) innermost, output row outermost.
    rs = RDom({{0, 2}, {0, 2}, {0, cv.Wo}, {0, cv.kw}, {0, cv.kh}, {0, cv.Ho}}, "rs");
    RVar rb = rs[0], ra = rs[1], rox = rs[2], rj = rs[3], ri = rs[4], roy = rs[5];
    if (!get_target().has_gpu_feature()) {
      define_cpu(cv, rb, ra, rox, rj, ri, roy);
      estimate_inputs();
      estimate(grad_output, {56, 56, 64, 1, 8});
      estimate(gcol, {64, 3, 3, 56, 56, 8});
      estimate(grad_input, {56, 56, 64, 8});
      return;
    }
    gc.define(cv, weight, grad_output, ox, oy, j, i, c, n);
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
      // Per task (a block of kC channels of one image) and output row: the row's scatter,
      // reading the block's Gcol a vector of channels at a time.
      const int vec = natural_vector_size<float>();
      const int kC = 2 * vec;
      Var cbn{"cbn"}, cb{"cb"}, ci{"ci"};
      grad_input.split(c, cb, ci, kC, TailStrategy::GuardWithIf)
          .reorder(x, y, ci, cb, n)
          .fuse(cb, n, cbn)
          .parallel(cbn)
          .vectorize(x, vec, TailStrategy::GuardWithIf);
      gin_t.compute_at(grad_input, cbn).align_bounds(c, kC).vectorize(c, vec);
      Stage gu = gin_t.update();
      gu.split(c, cb, ci, kC, TailStrategy::RoundUp)
          .reorder(ci, rb, ra, rox, rj, ri, roy, cb, n)
          .vectorize(ci, vec)
          .unroll(rb)
          .unroll(ra);
      gu.specialize(D_ == 1);
      geo.compute_at(gin_t, roy).vectorize(ox, vec, TailStrategy::GuardWithIf);
    }
  }
};

// grad_offset and grad_mask: sums over the channels of each offset group.
//   grad_offset[.., 2(dK+k) + comp, oy, ox] = m * Σ_c Gcol * dB/d(y or x)   (no outer cut-off)
//   grad_mask[.., dK+k, oy, ox]             =     Σ_c Gcol * B
// and both are 0 for a point with a non-finite offset.
class DeformConv2dGradOffsetMask : public Generator<DeformConv2dGradOffsetMask> {
 public:
  OPLAB_DCN_INPUTS
  Input<Buffer<float>> grad_output{"grad_output", 5};
  // CPU: Gcol of these images (DeformConv2dGcol); the GPU schedule computes its own.
  Input<Buffer<float>> gcol_in{"gcol", 6};
  Output<Buffer<float>> grad_offset{"grad_offset", 7};
  Output<Buffer<float>> grad_mask{"grad_mask", 6};

  Var ox{"ox"}, oy{"oy"}, j{"j"}, i{"i"}, d{"d"}, c{"c"}, n{"n"}, comp{"comp"}, k{"k"}, l{"l"}, x{"x"}, y{"y"};
  Func geo{"geo"}, terms{"terms"};
  Gcol gcol;
  RDom rc;
  // CPU: the image channels-innermost (in_t), the per-lane sums of a point (lanes) and the
  // three sums of every point (sums).
  Func in_t{"in_t"}, lanes{"lanes"}, sums{"sums"};
  std::vector<std::pair<Func, int>> folds;  // (fold, its width)
  RDom rco;

  // The three terms of one channel at point s, given its Gcol gc and its four corner values
  // v(a, b): Gcol * dB/dy, Gcol * dB/dx, Gcol * B.
  template <class Corner>
  static std::vector<Expr> channel_terms(const FuncRef& s, Expr gc, Corner v) {
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
    return {gc * dBy, gc * dBx, gc * B};
  }

  void generate() {
    const Conv cv = conv();
    // Per point: corners, fractions, which corners lie in the image (the derivative's rule)
    // and whether the point is in rule B's range (the value's rule, for grad_mask).
    DcnPoint p = cv.point(ox, oy, j, i, d, n);
    Expr bits = dcn_corner_bits(p.in_y0 && p.in_x0, p.in_y0 && p.in_x1, p.in_y1 && p.in_x0, p.in_y1 && p.in_x1);
    geo(ox, oy, j, i, d, n) = Tuple(std::vector<Expr>{p.x0, p.x1, p.y0, p.y1, p.lx, p.ly, bits, cast<uint8_t>(p.in_range)});
    // The mask factors out of the sum over channels; a non-finite offset gets no gradient.
    Expr finite = p.finite;
    Expr m = cv.mask_at(ox, oy, j, i, d, n);

    if (get_target().has_gpu_feature()) {
      gcol.define(cv, weight, grad_output, ox, oy, j, i, c, n);
      rc = RDom(0, cv.Cd, "rc");
      Expr ch = d * cv.Cd + rc;
      FuncRef s = geo(ox, oy, j, i, d, n);
      std::vector<Expr> t = channel_terms(s, gcol.gcol(ox, oy, j, i, ch, n), [&](int a, int b) {
        return select(dcn_corner_on(s[6], a, b), input(s[b ? 1 : 0], s[a ? 3 : 2], ch, n), 0.0f);
      });
      terms(ox, oy, j, i, d, n) = Tuple(0.0f, 0.0f, 0.0f);
      FuncRef tr = terms(ox, oy, j, i, d, n);
      terms(ox, oy, j, i, d, n) = Tuple(tr[0] + t[0], tr[1] + t[1], tr[2] + t[2]);
      FuncRef tt = terms(ox, oy, j, i, d, n);
      grad_offset(ox, oy, comp, j, i, d, n) = select(finite, m * select(comp == 0, tt[0], tt[1]), 0.0f);
      grad_mask(ox, oy, j, i, d, n) = select(finite, tt[2], 0.0f);
    } else {
      // CPU: per point, the channels of its offset group a vector at a time, lane l summing
      // channels l, l + vec, ... (lanes), then the lanes added together (sums). Gcol and the
      // image are both channels-innermost, so a point's corners and Gcol are dense vectors:
      // no gathers. Lanes past the group's last channel read valid elements (in_t clamps the
      // channel; the glue's view of Gcol reaches 64 channels past its last) and add nothing.
      const int vec = natural_vector_size<float>();
      in_t(c, x, y, n) = input(x, y, clamp(c, 0, cv.C - 1), n);
      rco = RDom(0, (cv.Cd + vec - 1) / vec, "rco");
      Expr cl = rco * vec + l, ch = d * cv.Cd + cl;
      FuncRef s = geo(ox, oy, j, i, d, n);
      Expr chg = unsafe_promise_clamped(ch, 0, gcol_in.dim(0).extent() - 1);  // as grad_input's read
      std::vector<Expr> t = channel_terms(s, gcol_in(chg, j, i, ox, oy, n), [&](int a, int b) {
        return select(dcn_corner_on(s[6], a, b), in_t(ch, s[b ? 1 : 0], s[a ? 3 : 2], n), 0.0f);
      });
      Expr valid = cl < cv.Cd;
      lanes(l, ox, j, i, d, oy, n) = Tuple(0.0f, 0.0f, 0.0f);
      FuncRef la = lanes(l, ox, j, i, d, oy, n);
      lanes(l, ox, j, i, d, oy, n) = Tuple(la[0] + select(valid, t[0], 0.0f), la[1] + select(valid, t[1], 0.0f),
                                           la[2] + select(valid, t[2], 0.0f));
      // The lanes added together by halves (a vector of vec lanes, then vec / 2, ..., 1), so
      // each step is one vector add; sums(ox, k, ...), k = 0, 1, 2: the y and x derivatives
      // and the value.
      Func prev = lanes;
      for (int half = vec / 2; half >= 1; half /= 2) {
        Func f{"fold" + std::to_string(half)};
        FuncRef lo = prev(l, ox, j, i, d, oy, n), hi = prev(l + half, ox, j, i, d, oy, n);
        f(l, ox, j, i, d, oy, n) = Tuple(lo[0] + hi[0], lo[1] + hi[1], lo[2] + hi[2]);
        folds.push_back({f, half});
        prev = f;
      }
      FuncRef total = prev(0, ox, j, i, d, oy, n);
      sums(ox, k, j, i, d, oy, n) = select(k == 0, total[0], select(k == 1, total[1], total[2]));
      grad_offset(ox, oy, comp, j, i, d, n) = select(finite, m * sums(ox, comp, j, i, d, oy, n), 0.0f);
      grad_mask(ox, oy, j, i, d, n) = select(finite, sums(ox, 2, j, i, d, oy, n), 0.0f);
    }

    estimate_inputs();
    estimate(grad_output, {56, 56, 64, 1, 8});
    estimate(gcol_in, {64, 3, 3, 56, 56, 8});
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
      // One task per output row: its point table, then per point the lane sums (a few vector
      // accumulators, reading the row's Gcol) and their horizontal sums.
      const int vec = natural_vector_size<float>();
      Var row{"row"}, dn{"dn"}, yn{"yn"};
      sums.compute_root().bound(k, 0, 3).reorder(k, ox, j, i, d, oy, n).fuse(oy, n, row).parallel(row).unroll(k);
      lanes.compute_at(sums, ox).vectorize(l);
      lanes.update().reorder(l, rco).vectorize(l);
      for (auto& [f, width] : folds) {
        f.compute_at(sums, ox);
        if (width > 1) f.vectorize(l);
      }
      geo.compute_at(sums, row).vectorize(ox, vec, TailStrategy::GuardWithIf);
      // The image transposed as the forward's ChannelColumn does it: vectors along x.
      in_t.compute_root().reorder(x, c, y, n).fuse(y, n, yn).parallel(yn).vectorize(x, vec, TailStrategy::GuardWithIf);
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

  Var ox{"ox"}, oy{"oy"}, j{"j"}, i{"i"}, d{"d"}, c{"c"}, n{"n"}, oo{"oo"}, g{"g"}, cg{"cg"}, t{"t"}, x{"x"}, y{"y"};
  Func geo{"geo"}, col{"col"}, gout{"gout"}, partial{"partial"}, partial_bias{"partial_bias"}, prow{"prow"};
  Func gw_sum{"gw_sum"};
  ChannelColumn cc;
  RDom r, rt, rr, rpx;
  Expr Cg_, Cog_, D_;

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
    if (get_target().has_gpu_feature()) {
      partial(j, i, cg, oo, g, t) = 0.0f;
      partial(j, i, cg, oo, g, t) += gout(r.x, roy, oo, g, rn) * col(r.x, roy, j, i, g * cv.Cg + cg, rn);
    } else {
      // CPU: per output row a GEMM, prow(cg, k, oo) = Σ_ox col(cg, k, ox) gout(oo, ox), with
      // the input channels along the vectors (the column as ChannelColumn lays it out) and
      // grad_output broadcast; the rows of a chunk add into its partial. The rounded-up
      // channels (kCg, kOo below) are computed and never read.
      cc.define(cv, input, geo, c, x, y, j, i, ox, oy, d, n);
      rpx = RDom(0, cv.Wo, "rpx");
      prow(cg, j, i, oo, g, oy, n) = 0.0f;
      prow(cg, j, i, oo, g, oy, n) += cc.at(g * cv.Cg + cg, j, i, rpx, oy, n) * gout(rpx, oy, oo, g, n);
      rr = RDom(0, rows_per_chunk, "rr");
      Expr row2 = t * rows_per_chunk + rr;
      Expr rn2 = row2 / cv.Ho, roy2 = clamp(row2 - rn2 * cv.Ho, 0, cv.Ho - 1);
      partial(cg, j, i, oo, g, t) = 0.0f;
      partial(cg, j, i, oo, g, t) += prow(cg, j, i, oo, g, roy2, rn2);
      Cg_ = cv.Cg, Cog_ = cv.Cog, D_ = cv.D;
    }
    partial_bias(oo, g, t) = 0.0f;
    partial_bias(oo, g, t) += grad_output(r.x, roy, oo, g, rn);

    rt = RDom(0, chunks, "rt");
    if (get_target().has_gpu_feature()) grad_weight(j, i, cg, oo, g) = sum(partial(j, i, cg, oo, g, rt));
    else {
      // (CPU: the chunks' partials are added in double and rounded once, so the result does
      // not depend on the order of the chunks, e.g. on the order of the images in the batch.)
      gw_sum(cg, j, i, oo, g) = cast<double>(0);
      gw_sum(cg, j, i, oo, g) += cast<double>(partial(cg, j, i, oo, g, rt));
      grad_weight(j, i, cg, oo, g) = cast<float>(gw_sum(cg, j, i, oo, g));
    }
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
      // Per chunk and row: the point table and the column (every channel and tap), then the
      // row's GEMM in register tiles of kCg input channels (kCg / vec vectors) times kOo output
      // channels (kCg / vec * kOo accumulators; per ox, kCg / vec column vectors loaded and kOo
      // grad_output elements broadcast), ox innermost; each tile then joins the chunk's
      // partial. The partials are rounded up to whole tiles (bound), so no tile is cut.
      const int vec = natural_vector_size<float>();
      const int kCg = 4 * vec, kOo = 6;
      Var cgo{"cgo"}, cgi{"cgi"}, cgv{"cgv"}, ooo{"ooo"}, ooi{"ooi"};
      Expr cg_round = (Cg_ + kCg - 1) / kCg * kCg, oo_round = (Cog_ + kOo - 1) / kOo * kOo;
      partial.compute_root().bound(cg, 0, cg_round).bound(oo, 0, oo_round);
      partial.parallel(t).vectorize(cg, vec);
      partial.update()
          .split(cg, cgo, cgi, kCg, TailStrategy::RoundUp)
          .split(oo, ooo, ooi, kOo, TailStrategy::RoundUp)
          .reorder(cgi, ooi, cgo, j, i, ooo, g, rr, t)
          .vectorize(cgi, vec)
          .unroll(ooi)
          .parallel(t);
      prow.compute_at(partial, cgo).vectorize(cg, vec).unroll(oo);
      Stage pu = prow.update();
      pu.split(cg, cgv, cgi, vec).reorder(cgi, cgv, oo, rpx.x).vectorize(cgi).unroll(cgv).unroll(oo);
      pu.specialize(D_ == 1);
      geo.compute_at(partial, rr).vectorize(ox, vec);
      cc.schedule(LoopLevel(partial, rr), vec);
      partial_bias.compute_root().parallel(t);
      partial_bias.update().reorder(r.x, r.y, oo, g, t).parallel(t);
      grad_weight.reorder(j, i, cg, oo, g).parallel(oo);
      // The chunks' sum a vector of channels at a time (the partials' innermost axis), in the
      // chunks' order as before; the transpose to grad_weight's layout is then scalar.
      gw_sum.compute_at(grad_weight, oo).vectorize(cg, vec);
      gw_sum.update().reorder(cg, j, i, rt).vectorize(cg, vec);
      grad_bias.compute_root();
    }
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(DeformConv2dForward, deform_conv2d_forward)
HALIDE_REGISTER_GENERATOR(DeformConv2dGcol, deform_conv2d_gcol)
HALIDE_REGISTER_GENERATOR(DeformConv2dGradInput, deform_conv2d_grad_input)
HALIDE_REGISTER_GENERATOR(DeformConv2dGradOffsetMask, deform_conv2d_grad_offset_mask)
HALIDE_REGISTER_GENERATOR(DeformConv2dGradWeight, deform_conv2d_grad_weight)
