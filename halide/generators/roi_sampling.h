#pragma once
// Pieces shared by the roi_align, deform_roi_pool, ps_roi_align (and roi_pool, ps_roi_pool)
// generators:
//  - the box of a roi under a box rule (half-pixel shift, minimum size), its bins and the
//    sample positions of a bin, and the per-roi tables of roi_align, ps_roi_align and
//    deform_roi_pool;
//  - the RoIAlign bilinear rule of SPEC §4 as Halide expressions: 0 outside [-1, H] x [-1, W];
//    inside, the coordinate is clamped to >= 0 and to the last row/column, so one pixel
//    outside the image replicates the edge;
//  - the sampling grid of a bin (fixed or adaptive) and its divisor;
//  - packing of one axis' taps into a Tuple, so that a per-roi table Func can hold them;
//  - what a sample's corners pass on to the gradient, and the averaging scatter;
//  - the channel blocks of the CPU schedules, and the schedules the RoI ops share.
// Every rule mirrors reference/roi_geometry.h and reference/roi_bilinear.h; comments there say
// why each rule is so.
//
// Sample coordinates are computed in double from the float32 rois (and offsets): they live in
// per-roi tables shared by every channel, so their cost does not scale with the data, and in
// float a coordinate of magnitude C is off by ~C ulps, which moves every bilinear weight by an
// absolute ~C * 2^-24 (a large relative error on a small weight) and decides range cut-offs
// and adaptive grids differently from the reference. They are also computed with strict IEEE
// semantics (strict_float: Halide otherwise lets LLVM fuse multiply-adds and reassociate), in
// the reference's order of operations, so that a coordinate the reference puts exactly on a
// kink (-1, 0, H-1, H, an integer) lands exactly there in the kernel too. The weights are then
// rounded to float32, a relative error of one ulp each, and all arithmetic on feature values
// is float32.
//
// The CPU forward schedules, and why (standard shape: input [2, 256, 200, 304], 1000 rois,
// 7x7; 2 threads; A/B ratios alternating run by run in one process, as the machine was shared):
//  - A task owns a block of 16 channels: it copies the block (both images, 7.8 MB) with the
//    channels innermost, so that a sample of 16 channels is 4 dense vector loads, then runs
//    every roi over it.
//  - The rois are visited in cache order (RoiOrder): by image, band of 32 rows, column. In
//    input order 1000 random boxes revisit the 7.8 MB block at random, out of L2; sorted,
//    consecutive boxes share rows. Writing the output straight from the sorted loop scattered
//    its cache lines and lost the gain (0.8-1.0x against input order), so each task keeps its
//    results by step (res, 3 MB) and writes the output in roi order. Against the input-order
//    kernels: roi_align sr2 1.2-1.3x, adaptive 1.25-1.3x, deform_roi_pool 1.4-1.45x.
//  - roi_align and deform_roi_pool keep every step's results for the block (res, 3 MB) with
//    the bins innermost, as the output is, and then write the output a row of bins at a time
//    (8-wide, masked past pooled_w): 1.05-1.18x against 16 scalar stores per bin.
//  - roi_pool keeps two running maxima (roi_pool_generator.cpp) and the cache order: 1.1x;
//    writing its two outputs 16 channels a vector: 1.45x on top. Then (FlatBins below) each
//    step's value and argmax (6 KB) go straight to the output at the roi's own index, a dense
//    run of 16 * 49 values written with full-width stores, instead of a 6 MB res per task
//    copied out 7 bins at a time: 1.15-1.23x. The same change on roi_align (flat output, per
//    step or through res) measured 0.95-1.10x, inside the noise of unchanged kernels in the
//    same runs (0.95-1.13x): not kept there.
//  - Far from the copy bandwidth (the forward moves 175 MB: at 52 GB/s that is 3.4 ms). What
//    bounds them, from perf (cpu-clock) of the kernels alone on the loaded 2-core machine,
//    counting cycles at the 2.1 GHz TSC:
//    roi_align sr2 (~50 ms of CPU time): 1000 rois x 49 bins x 4 samples x 16 blocks = 3.1 M
//    samples of 16 channels, 12.5 M corner loads of a 64-byte line (800 MB from the blocks),
//    ~34 cycles a sample in all. Shares: the block copy ~19% (reads the input once, writes
//    the 7.8 MB block: ~250 MB of traffic), the sample loop ~45% (~15 cycles a sample,
//    waiting on its loads: a box averages ~26 x 26 feature pixels, ~700 lines, about one new
//    line per corner load at sr2, so most corners miss L2 (1 MB) whatever the roi order), the
//    output ~36% (50 MB to lines not in cache: stores wait on the line fills; full-width
//    stores instead of masked rows left that share at ~27-30%, so it is the traffic, not the
//    store count). The adaptive grid has ~3x the samples.
//    roi_pool (~100-120 ms): 9.35 M inner iterations (two rows of one column, 16 channels,
//    271 M element reads from the blocks), ~25 cycles each in all. Shares: the bins' scan
//    ~44% (~11 cycles an iteration: the compare-and-blend chains), the output ~38% (value and
//    argmax, 100 MB, full-width stores waiting on line fills as in roi_align), per-bin set-up
//    ~9%, the block copy ~8%.
#include <string>
#include <utility>
#include <vector>

#include "Halide.h"
#include "kernel_widths.h"

namespace oplab_halide {

// The glue passes every buffer with zero mins: promising it lets Halide fold the buffer mins
// out of every index, which keeps the indexing cheaper and a scatter's store index and its
// implicit load index alike (see the backward generators). Call after the buffer's Func is
// defined (outputs cannot be asked their dims before).
template <class B>
void promise_zero_mins(B& b) {
  for (int d = 0; d < b.dimensions(); ++d) b.dim(d).set_min(0);
}

// Channel blocks. Every RoI kernel reads (and the backward writes) the feature map at positions
// that depend on the roi and the bin but never on the channel, so on the CPU the channels are
// regrouped into blocks of kLanes: blocked(cl, x, y, cb, n) is channel cb * kLanes + cl. A
// sample of 16 channels is then one dense vector load (one cache line) per corner instead of a
// 16-lane gather, and a task owning a block of channels scans every roi race-free. The copy in
// is a transpose of 16 x 16 tiles (see schedule_blocked_copy). On the GPU the blocked Funcs are
// inlined, so they are only index arithmetic.
constexpr int kLanes = oplab_widths::kRoiLanes;

// On the GPU a thread computes one channel, so there a block is one channel wide (lanes 1:
// blk(0, x, y, c, n) is channel c). Were blocks 16 wide there, a thread would compute a Func
// of the block over all 16 lanes wherever Halide cannot prove c % 16 a single lane: the max
// backward's running winner was so computed 16 times, in 1664 bytes of local memory per
// thread (the build's ptx_check records each kernel's stack).
inline int channel_lanes(const Halide::Target& t) { return t.has_gpu_feature() ? 1 : kLanes; }

// The channel that lane cl of block cb stands for: lanes past the last channel (C channels)
// stand for the last one, so that every lane reads inside the tensor; their results are
// discarded (a gradient's such lanes are never written out, and sums over lanes skip them).
inline Halide::Expr block_channel(Halide::Expr cb, Halide::Expr cl, int lanes, Halide::Expr C) {
  return Halide::min(cb * lanes + cl, C - 1);
}

// blk(cl, x, y, cb, n) = input(x, y, block_channel(cb, cl), n). `rows` is the same data with
// x innermost (rows(x, cl, y, cb, n)): the CPU schedule stages each 16 x 16 tile in it so that
// the tile is read as 16 dense rows (see schedule_blocked_copy). Callable as blk itself.
struct ChannelBlocked {
  Halide::Func rows, blk;
  template <class... A>
  Halide::FuncRef operator()(A&&... a) const {
    return blk(std::forward<A>(a)...);
  }
};

// `plane`: dimensions of the input between y and the channel (the position-sensitive ops' bin,
// ps_roi_blocks.h), kept in that order after cb: blk(cl, x, y, cb, plane..., n).
inline ChannelBlocked channel_blocked(const Halide::Func& input, Halide::Expr C, const std::string& name, int lanes,
                                      const std::vector<Halide::Var>& plane = {}) {
  using namespace Halide;
  Var cl{"cl"}, x{"x"}, y{"y"}, cb{"cb"}, n{"n"};
  std::vector<Var> rows_args{x, cl, y, cb}, blk_args{cl, x, y, cb};
  std::vector<Expr> in_args{x, y};
  for (const Var& v : plane) rows_args.push_back(v), blk_args.push_back(v), in_args.push_back(v);
  rows_args.push_back(n), blk_args.push_back(n);
  in_args.push_back(block_channel(cb, cl, lanes, C)), in_args.push_back(n);
  ChannelBlocked b{Func{name + "_rows"}, Func{name}};
  b.rows(rows_args) = input(in_args);
  b.blk(blk_args) = b.rows(rows_args);
  return b;
}

// Schedules a channel-blocked copy of a W-wide plane computed at `at`, in 16 x 16 tiles of
// (x, cl). Read straight from the input, a tile with cl innermost is 256 loads at the channel
// stride (Halide scalarises them: the channel clamp and the runtime stride hide that the rows
// are dense). So each tile is first staged in `rows`, x innermost: 16 dense row loads into a
// tile of constant strides, which the blocked tile then reads at constant offsets, and Halide
// turns that into one dense load and a shuffle (a transpose in registers): about 4 ms less
// per call at the bench shape. Narrow images (W < 16, only in tests) take a plain loop, a
// column at a time. `vector_rows` false unrolls the staging's lanes instead of vectorising them
// (the position-sensitive ops, ps_roi_blocks.h says why).
inline void schedule_blocked_copy(const ChannelBlocked& b, const Halide::LoopLevel& at, Halide::Expr W,
                                  bool vector_rows = true) {
  using namespace Halide;
  Func blk = b.blk, rows = b.rows;
  Var cl = blk.args()[0], x = blk.args()[1], xo{"xo"}, xi{"xi"};
  Var rx = rows.args()[0], rcl = rows.args()[1];
  blk.compute_at(at);
  blk.specialize(W >= kLanes).split(x, xo, xi, kLanes, TailStrategy::ShiftInwards).reorder(cl, xi, xo).vectorize(cl).vectorize(xi);
  blk.split(x, xo, xi, 1).reorder(cl, xi, xo).vectorize(cl);
  rows.compute_at(blk, xo);
  Stage wide = rows.specialize(W >= kLanes).vectorize(rx);
  if (vector_rows)
    wide.vectorize(rcl);
  else
    wide.unroll(rcl);
}

// A double constant (Halide's operators take float and int literals, not double ones).
inline Halide::Expr f64(double v) { return Halide::Expr(v); }

// One axis of a sample: the two taps, their weights, whether the coordinate is in range and
// whether the value varies with the coordinate there (for the true derivative).
struct AxisTaps {
  Halide::Expr valid;  // -1 <= v <= len (false for NaN)
  Halide::Expr slope;  // valid and 0 <= v < len-1: right-sided derivative is the interior slope
  Halide::Expr i0, i1; // taps, always inside [0, len-1] (the kernels run only when len > 0)
  Halide::Expr w0, w1; // weights of i0 and i1
};

// v: the coordinate, a double; len: the image size along the axis.
inline AxisTaps roi_axis_taps(Halide::Expr v, Halide::Expr len) {
  using namespace Halide;
  AxisTaps t;
  // is_finite first: Halide compiles float comparisons with fast-math flags that assume no
  // NaN/Inf, so a non-finite coordinate (a NaN/Inf offset) is excluded by the one test that
  // is exact for it.
  t.valid = is_finite(v) && v >= f64(-1.0) && v <= cast<double>(len);
  // An invalid coordinate (far outside, NaN, inf) is replaced by 0 before the float -> int
  // conversion, which is undefined for values an int cannot hold; its weights never count.
  // The clamp to [0, len] changes no valid coordinate and bounds the taps for bounds inference.
  Expr c = select(t.valid, clamp(v, f64(0.0), cast<double>(len)), f64(0.0));
  Expr lo = cast<int>(floor(c));
  Expr at_end = lo >= len - 1;
  // At or past the last index both taps are the last pixel and the coordinate sits on it.
  // Written with min rather than select + clamp so that the taps' bounds ([0, len-1]) are
  // evident to bounds inference without a clamp of their own.
  t.i0 = min(lo, len - 1);
  t.i1 = min(lo + 1, len - 1);
  Expr frac = select(at_end, f64(0.0), c - cast<double>(lo));
  t.w1 = cast<float>(frac);
  t.w0 = cast<float>(f64(1.0) - frac);
  // On [-1, 0) the coordinate is clamped (flat); at and past the last index it is flat too.
  t.slope = t.valid && v >= f64(0.0) && !at_end;
  return t;
}

inline Halide::Tuple taps_tuple(const AxisTaps& t) { return Halide::Tuple(t.valid, t.slope, t.i0, t.i1, t.w0, t.w1); }

// The inverse of taps_tuple, reading a table Func (a call returning the Tuple).
inline AxisTaps taps_of(const Halide::FuncRef& table) {
  Halide::Tuple t = table;
  return AxisTaps{t[0], t[1], t[2], t[3], t[4], t[5]};
}

// Samples per bin along one axis: the fixed sampling_ratio, or ceil(extent / pooled) for the
// adaptive grid (<= 0 means no samples); extent is a double. Clamped before the conversion to
// int so that an absurd box cannot make it undefined; the glue never asks for that many anyway.
inline Halide::Expr roi_grid_size(Halide::Expr sampling_ratio, Halide::Expr extent, Halide::Expr pooled) {
  using namespace Halide;
  Expr g = clamp(strict_float(ceil(extent / cast<double>(pooled))), f64(-1e9), f64(1e9));
  return select(sampling_ratio > 0, sampling_ratio, cast<int>(g));
}

// Divisor of the average: max(gh * gw, 1), as a float product so that it cannot overflow.
inline Halide::Expr roi_grid_count(Halide::Expr gh, Halide::Expr gw) {
  using namespace Halide;
  return max(cast<float>(gh) * cast<float>(gw), 1.0f);
}

// Sample i of a grid of g over a bin that starts at `origin` and is `bin` long (doubles), in
// the reference's operation order: origin + (i + 0.5) * bin / g, strictly (see the top).
inline Halide::Expr roi_sample_at(Halide::Expr origin, Halide::Expr bin, Halide::Expr i, Halide::Expr g) {
  using namespace Halide;
  return strict_float(origin + (cast<double>(i) + f64(0.5)) * bin / cast<double>(g));
}

// Where bin p of an axis starts, for a box starting at `start` with bins `bin` long (doubles).
inline Halide::Expr roi_bin_start(Halide::Expr start, Halide::Expr p, Halide::Expr bin) {
  using namespace Halide;
  return start + cast<double>(p) * bin;
}

// How the corners of a roi become a box (reference/roi_geometry.h's RoiBoxRule): shifted by
// half a pixel (x * s - 0.5), and the extent raised to at least one pixel. roi_align decides
// both at run time (its `aligned` input); deform_roi_pool and ps_roi_align are always aligned.
struct RoiBoxRule {
  Halide::Expr half_pixel, min_one_pixel;  // bool
};
inline RoiBoxRule aligned_box_rule() { return {Halide::Expr(true), Halide::Expr(false)}; }

// select(flag, yes, no), or the branch itself when the flag is known at generation time, so
// that a fixed rule leaves no select (nor its dead branch) in the geometry. A negated flag
// selects on the flag itself with the branches swapped: inside strict_float Halide's
// simplifier leaves a select as written, and this is the form roi_align's geometry had before
// it was shared (its kernels stayed the same code).
inline Halide::Expr select_flag(Halide::Expr flag, Halide::Expr yes, Halide::Expr no) {
  if (Halide::Internal::is_const_one(flag)) return yes;
  if (Halide::Internal::is_const_zero(flag)) return no;
  if (const auto* n = flag.as<Halide::Internal::Not>()) return Halide::select(n->a, no, yes);
  return Halide::select(flag, yes, no);
}

// The box of roi k in feature-map pixels, in double: its start corner and its extent (may be
// empty or reversed unless the rule raises it to one pixel). scale is a double.
struct RoiBox {
  Halide::Expr sx, sy, rw, rh;
};
inline RoiBox roi_box(const Halide::Func& rois, Halide::Expr k, Halide::Expr scale, const RoiBoxRule& rule) {
  using namespace Halide;
  auto at = [&](int f) { return cast<double>(rois(f, k)) * scale; };
  Expr off = select_flag(rule.half_pixel, f64(0.5), f64(0.0));
  RoiBox b;
  b.sx = at(1) - off, b.sy = at(2) - off;
  Expr rw = at(3) - off - b.sx, rh = at(4) - off - b.sy;
  // Strict as well (the box may be stored in a table outside the samples' strict_float): a
  // fused multiply-subtract made end * scale - start * scale 6.999999999999999 where the
  // reference has 7, moving a sample from just past the map's end (skipped) onto it.
  b.sx = strict_float(b.sx), b.sy = strict_float(b.sy);
  b.rw = strict_float(select_flag(rule.min_one_pixel, max(rw, f64(1.0)), rw));
  b.rh = strict_float(select_flag(rule.min_one_pixel, max(rh, f64(1.0)), rh));
  return b;
}

// The four corners of a sample on plane `at(x, y)`, each read even when its weight is 0 (so
// NaN/Inf propagate as in the reference), in the reference's order of terms.
template <class At>
Halide::Expr roi_bilinear_value(const AxisTaps& ty, const AxisTaps& tx, At at) {
  return ty.w0 * tx.w0 * at(tx.i0, ty.i0) + ty.w0 * tx.w1 * at(tx.i1, ty.i0) + ty.w1 * tx.w0 * at(tx.i0, ty.i1) +
         ty.w1 * tx.w1 * at(tx.i1, ty.i1);
}

// Corner q in 0..3 of a sample (q bit 0: x tap, bit 1: y tap), for scatters that loop over the
// corners: its pixel and its weight.
struct Corner {
  Halide::Expr x, y, w;
};
inline Corner roi_corner(const AxisTaps& ty, const AxisTaps& tx, Halide::Expr q) {
  using namespace Halide;
  Expr qx = (q % 2) == 1, qy = q >= 2;
  return Corner{select(qx, tx.i1, tx.i0), select(qy, ty.i1, ty.i0), select(qy, ty.w1, ty.w0) * select(qx, tx.w1, tx.w0)};
}

// A sample's value on plane `at(x, y)`: the bilinear value when both coordinates are in range,
// else 0 (SPEC §4).
template <class At>
Halide::Expr roi_bilinear_sample(const AxisTaps& ty, const AxisTaps& tx, At at) {
  return Halide::select(ty.valid && tx.valid, roi_bilinear_value(ty, tx, at), 0.0f);
}

// What corner q of a sample passes on to the gradient of the feature map in the averaging ops
// (roi_align avg, deform_roi_pool, ps_roi_align): its pixel, its image, its weight / count and
// whether the sample is in range. The backward generators realise it as the Func `target`
// where it is scattered: on the GPU the atomic update's store index and its implicit load
// index are then the same loads, which Halide 14 needs to emit a native atomic add rather than
// a compare-and-swap loop (schedule_roi_scatter).
inline Halide::Tuple roi_corner_target(const AxisTaps& ty, const AxisTaps& tx, Halide::Expr q, Halide::Expr batch,
                                       Halide::Expr count) {
  Corner cn = roi_corner(ty, tx, q);
  return Halide::Tuple(cn.x, cn.y, batch, cn.w / count, ty.valid && tx.valid);
}

// What a corner `t` (roi_corner_target) adds for the output gradient gout: gout * (w / count);
// an out-of-range sample adds exactly 0 (even for a NaN gout).
inline Halide::Expr roi_corner_add(const Halide::Tuple& t, Halide::Expr gout) {
  return Halide::select(t[4], gout * t[3], 0.0f);
}

// The per-roi scalars and per-sample tap tables of the RoIAlign-style geometries (RoiGeometry
// below; deform_roi_pool's, whose bins each move by their own offset). Samples depend on the roi
// and the bin, never on the channel: they are computed once per roi into small tables shared by
// every channel, the trick of torchvision's pre_calc. `info` holds the per-roi scalars; both are
// realised (see the schedules) so that the inner loops load them rather than recompute the
// double-precision geometry per sample. The tables' arguments are the geometry's own (sample
// first, roi last).
struct RoiSampleTables {
  // (j, k) -> batch (j = 0), gy (1), gx (2). One int Func rather than a Tuple: Halide 14 fails
  // (StorageFlattening) on Tuple elements in the loop bounds that RDom::where turns into.
  Halide::Func info{"roi_info"};
  Halide::Func batch{"batch"}, gy{"gy"}, gx{"gx"}, count{"count"};  // its fields (inline)
  Halide::Func yt{"yt"}, xt{"xt"};  // per sample of a bin: taps_tuple

  // The scalars of roi k: its image, clamped into [0, N-1] (the glue validated it; clamped in
  // `batch`, where it is used, so that bounds inference sees that range: the value bounds of
  // `info` as a whole span the grid sizes too), and its grid sizes gh, gw.
  void define_info(Halide::Var j, Halide::Var k, const Halide::Func& rois, Halide::Expr gh, Halide::Expr gw,
                   Halide::Expr N) {
    using namespace Halide;
    info(j, k) = select(j == 0, cast<int>(rois(0, k)), j == 1, gh, gw);
    batch(k) = clamp(info(0, k), 0, N - 1);
    gy(k) = info(1, k);
    gx(k) = info(2, k);
    count(k) = roi_grid_count(gy(k), gx(k));
  }

  // The sampling grid of a bin of roi kk: r.x = ix (inner), r.y = iy (outer), iy-major as in
  // the reference. Only the first gx x gy iterations count; the predicate reads per-roi grid
  // sizes (never the Func being updated), and Halide turns it into tight loop bounds.
  Halide::RDom grid(Halide::Expr kk, Halide::Expr max_grid) const {
    Halide::RDom r(0, max_grid, 0, max_grid, "s");
    r.where(r.x < gx(kk) && r.y < gy(kk));
    return r;
  }

  // On the CPU: the per-roi scalars and the tables for all rois up front (small), shared by
  // every block of channels.
  void schedule_tables_cpu(Halide::Var j) {
    info.compute_root().bound(j, 0, 3).unroll(j);
    yt.compute_root();
    xt.compute_root();
  }

  // On the GPU: the per-roi scalars and the tables as small kernels of their own (a thread per
  // roi, and per table element), read by the main kernel from device memory.
  void schedule_tables_gpu(Halide::Var j, Halide::Var k) {
    using namespace Halide;
    Var t{"t"}, tb{"tb"}, ti{"ti"};
    info.compute_root().bound(j, 0, 3).unroll(j).gpu_tile(k, tb, ti, 64, TailStrategy::GuardWithIf);
    for (Func f : {yt, xt}) {
      std::vector<Var> a = f.args();
      f.compute_root().fuse(a[0], a[1], t);
      for (size_t d = 2; d < a.size(); ++d) f.fuse(t, a[d], t);
      f.gpu_tile(t, tb, ti, 128, TailStrategy::GuardWithIf);
    }
  }
};

// The geometry of roi_align and ps_roi_align, whose samples depend on the roi and on the bin's
// row (y) or column (x) only: tables yt, xt (i, p, k) -> the taps of sample i of bin p.
struct RoiGeometry : RoiSampleTables {
  Halide::Var i{"i"}, p{"p"}, k{"k"}, j{"j"};

  // Geometry in double (see the top); scale is a double. N: batch size.
  void define(const Halide::Func& rois, Halide::Expr scale, Halide::Expr sampling_ratio, const RoiBoxRule& rule,
              Halide::Expr PH, Halide::Expr PW, Halide::Expr H, Halide::Expr W, Halide::Expr N) {
    using namespace Halide;
    RoiBox b = roi_box(rois, k, scale, rule);
    Expr bin_h = b.rh / cast<double>(PH), bin_w = b.rw / cast<double>(PW);
    define_info(j, k, rois, roi_grid_size(sampling_ratio, b.rh, PH), roi_grid_size(sampling_ratio, b.rw, PW), N);
    Expr y = roi_sample_at(roi_bin_start(b.sy, p, bin_h), bin_h, i, gy(k));
    Expr x = roi_sample_at(roi_bin_start(b.sx, p, bin_w), bin_w, i, gx(k));
    yt(i, p, k) = taps_tuple(roi_axis_taps(y, H));
    xt(i, p, k) = taps_tuple(roi_axis_taps(x, W));
  }

  void schedule_cpu() { schedule_tables_cpu(j); }
  void schedule_gpu() { schedule_tables_gpu(j, k); }
};

// The gradient of the feature map that roi_align and deform_roi_pool scatter into: on the CPU
// gblk(cl, x, y, cb, n), in channel blocks (a task owns a block), zeroed, then `scatter` (which
// adds the op's update definitions), then transposed into grad_input(x, y, c, n); on the GPU
// grad_input itself, zeroed, then `scatter` (schedule_roi_scatter). (Halide takes no update of
// gblk once grad_input reads it, hence the order.)
template <class Scatter>
void define_roi_gradient(Halide::Func grad_input, Halide::Func gblk, bool cpu, Scatter scatter) {
  using namespace Halide;
  Var x{"x"}, y{"y"}, c{"c"}, n{"n"}, cl{"cl"}, cb{"cb"};
  if (cpu)
    gblk(cl, x, y, cb, n) = 0.0f;
  else
    grad_input(x, y, c, n) = 0.0f;
  scatter();
  if (cpu) grad_input(x, y, c, n) = gblk(c % kLanes, x, y, c / kLanes, n);
}

// The averaging scatter of roi_align and deform_roi_pool into the gradient of
// define_roi_gradient: every corner of every in-range sample of bin (ph, pw) of roi k adds
// gout * w / count, read from target(q, ix, iy, pw, ph, k) (roi_corner_target); gout is
// goutb(cl, pw, ph, cb, k) on the CPU, grad_output on the GPU. Returns r, corner q (innermost),
// sample ix, iy, bin pw, ph, roi k (r[5]), for schedule_roi_scatter.
template <class Geometry>
Halide::RDom scatter_roi_corners(Halide::Func grad_input, Halide::Func gblk, Halide::Func goutb,
                                 Halide::Func grad_output, Halide::Func target, const Geometry& g,
                                 Halide::Expr max_grid, Halide::Expr PW, Halide::Expr PH, Halide::Expr K, bool cpu) {
  using namespace Halide;
  Var c{"c"}, cl{"cl"}, cb{"cb"};
  RDom r({{0, 4}, {0, max_grid}, {0, max_grid}, {0, PW}, {0, PH}, {0, K}}, "r");
  r.where(r[1] < g.gx(r[5]) && r[2] < g.gy(r[5]));
  Tuple t = target(r[0], r[1], r[2], r[3], r[4], r[5]);
  if (cpu)
    gblk(cl, t[0], t[1], cb, t[2]) += roi_corner_add(t, goutb(cl, r[3], r[4], cb, r[5]));
  else
    grad_input(t[0], t[1], c, t[2]) += roi_corner_add(t, grad_output(r[3], r[4], c, r[5]));
  return r;
}

// Rois in an order that reuses the cache (the CPU forwards). The glue passes `order`, a
// permutation of the rois sorted by image and position (halide/glue/roi_order.h). The CPU
// kernels compute step s of their roi loop for roi order(s): their geometry reads `rois`, the
// boxes in that order (a copy of K x 5 values), so that consecutive steps read overlapping
// pixels of the channel block while they are still in L2. Each roi's output is independent of
// every other, so the order changes no value; the results, indexed by step, are written out
// at roi k's own index through `inverse`, the step of roi k. Indices are clamped so that
// bounds inference sees them in range (the glue passes a permutation). Only the CPU
// schedules use it.
struct RoiOrder {
  Halide::Func rois{"sorted_rois"}, inverse{"inverse_order"};
  Halide::Func order;  // the glue's permutation
  Halide::Expr K;      // the number of rois

  void define(const Halide::Func& boxes, const Halide::Func& order_, Halide::Expr K_) {
    using namespace Halide;
    order = order_, K = K_;
    Var f{"f"}, s{"s"}, k{"k"};
    rois(f, s) = boxes(f, roi(s));
    RDom r(0, K, "ro");
    inverse(k) = 0;
    inverse(roi(r)) = r;
  }
  // The roi of step s.
  Halide::Expr roi(Halide::Expr s) const { return Halide::clamp(order(s), 0, K - 1); }
  // Roi k's step, for reading the results written by step.
  Halide::Expr step(Halide::Expr k) const { return Halide::clamp(inverse(k), 0, K - 1); }

  void schedule_cpu() {
    rois.compute_root();
    inverse.compute_root();
  }
};

// The bins of a roi as one index b = pw + ph * PW (roi_pool's CPU forward): the glue passes the
// output with its bins as one dimension of PH * PW (dims (PH * PW, 1, C, K), the same memory),
// so that a roi's block of 16 channels is one dense run of 16 * PH * PW floats, written with
// full-width vector stores rather than a masked store per row of bins. A bin's row and column
// come from two small tables: a load, not a division by the run-time PW per bin and block.
struct FlatBins {
  Halide::Var b{"b"};
  Halide::Func row{"bin_row"}, col{"bin_col"};
  Halide::Expr PH, PW;
  void define(Halide::Expr PH_, Halide::Expr PW_) {
    PH = PH_, PW = PW_;
    row(b) = b / PW;
    col(b) = b % PW;
  }
  // (Clamped so that bounds inference sees the range; b is always in [0, PH * PW).)
  Halide::Expr row_of(Halide::Expr bb) const { return Halide::clamp(row(bb), 0, PH - 1); }
  Halide::Expr col_of(Halide::Expr bb) const { return Halide::clamp(col(bb), 0, PW - 1); }
  void schedule_cpu() {
    row.compute_root();
    col.compute_root();
  }
};

// GPU forward of the RoI ops: one thread per output element (pw, ph, c, k), the accumulator
// in registers, the op's per-roi tables as kernels of their own.
template <class Geometry>
void schedule_roi_forward_gpu(Halide::Func output, Halide::Func acc, Geometry& geometry) {
  using namespace Halide;
  Var pw = output.args()[0], ph = output.args()[1], c = output.args()[2];
  Var t{"t"}, tb{"tb"}, ti{"ti"};
  output.fuse(pw, ph, t).fuse(t, c, t).gpu_tile(t, tb, ti, 128, TailStrategy::GuardWithIf);
  acc.compute_at(output, ti);
  geometry.schedule_gpu();
}

// The forward schedule roi_align and deform_roi_pool share. Output (pw, ph, c, k), accumulator
// acc(cl, pw, ph, cb, s) updated over the sample grid r, the input read through blk. `geometry`
// is the op's per-roi table set (schedule_cpu / schedule_gpu).
//  * GPU: schedule_roi_forward_gpu (acc's last argument is the roi itself).
//  * CPU: a task owns a block of channels and runs every roi over it: the block's copy (both
//    images, ~8 MB at the standard shape) is made once and read by ~1000 rois, and no two tasks
//    share anything. Per roi, the 16 lanes of every sample are dense vector loads. The rois are
//    visited in cache order (RoiOrder: acc's last argument is the step s) into res(cl, pw,
//    ph, cb, s), the block's results of every roi (3 MB at the standard shape); the output is
//    then written from res in roi order. res is stored bins innermost, as the output is: each
//    step's 16 lanes go into res as strided stores (lines still in cache), and the output is
//    written a row of bins at a time (8-wide, masked past pooled_w) rather than as 16 scalar
//    stores 196 bytes apart per bin (1.05-1.18x the CPU time in alternating A/B runs at the
//    standard shapes, same results). Written straight from acc in cache order, the output's
//    cache lines come in random order and cost more than the sorted rois saved (measured).
template <class Geometry>
void schedule_roi_forward(Halide::Func output, Halide::Func res, Halide::Func acc, const Halide::RDom& r,
                          ChannelBlocked& blk, Geometry& geometry, Halide::Expr W, bool gpu) {
  using namespace Halide;
  Var pw = output.args()[0], ph = output.args()[1], c = output.args()[2], k = output.args()[3];
  Var cl = acc.args()[0], cb = acc.args()[3], s = acc.args()[4];
  if (gpu) {
    schedule_roi_forward_gpu(output, acc, geometry);
  } else {
    output.split(c, cb, cl, kLanes, TailStrategy::GuardWithIf).reorder(pw, ph, cl, k, cb).parallel(cb);
    output.vectorize(pw, 8, TailStrategy::GuardWithIf);
    geometry.schedule_cpu();
    schedule_blocked_copy(blk, LoopLevel(output, cb), W);
    const std::vector<Var> ra = res.args();  // (cl, pw, ph, cb, s)
    res.compute_at(output, cb).reorder_storage(ra[1], ra[2], ra[0], ra[3], ra[4]).vectorize(ra[0]);
    acc.compute_at(res, s).vectorize(cl);
    acc.update().reorder(cl, r.x, r.y, pw, ph).vectorize(cl);
  }
}

// The grad_input schedule roi_align and deform_roi_pool share. grad_input(x, y, c, n) is
// zeroed, then every corner of `target` (q innermost) is added in over r: corner r[0], bins
// r[rk - 2] and r[rk - 1], roi r[rk]. On the CPU the adds go into gblk(cl, x, y, cb, n), the
// gradient in channel blocks, reading goutb(cl, pw, ph, cb, k); on the GPU straight into
// grad_input. Each op schedules its own extra Funcs (roi_align's winner, deform_roi_pool's
// grad_offset) after this.
//  * GPU: one thread per bin (a 2-D block of pw x ph), one block per (channel, roi); bins of
//    overlapping rois (and neighbouring bins) hit the same pixels, so the adds are atomic. Each
//    corner's target is realised where it is scattered (registers): realised elsewhere
//    (compute_root), Halide 14 clamps the atomic update's implicit load and not its store, and
//    falls back to a compare-and-swap loop (tried; the build's ptx_check then fails).
//  * CPU: a task owns a block of channels (cb) and scans every roi into its block of the
//    gradient, then transposes the block into grad_input (16 x 16 tiles in registers; narrow
//    or few-channel tensors take a plain loop). The channel split guards rather than shifts
//    its last block: a tile's lanes are then exactly lanes 0..15 of one block, which Halide
//    sees as constant offsets (one dense load and a shuffle) rather than per-lane c % 16 and
//    c / 16 (256 scalar loads).
template <class Geometry>
void schedule_roi_scatter(Halide::Func grad_input, Halide::Func gblk, Halide::Func goutb, Halide::Func target,
                          const Halide::RDom& r, int rk, Geometry& geometry, Halide::Expr W, Halide::Expr C, bool gpu) {
  using namespace Halide;
  Var x = grad_input.args()[0], y = grad_input.args()[1], c = grad_input.args()[2], n = grad_input.args()[3];
  if (gpu) {
    Var t{"t"}, tb{"tb"}, ti{"ti"};
    grad_input.fuse(x, y, t).fuse(t, c, t).fuse(t, n, t).gpu_tile(t, tb, ti, 256, TailStrategy::GuardWithIf);
    RVar rpw = r[rk - 2], rph = r[rk - 1];
    grad_input.update().atomic().reorder(r[0], rpw, rph, c, r[rk]).unroll(r[0]).gpu_threads(rpw, rph).gpu_blocks(c, r[rk]);
    target.compute_at(grad_input, r[1]).unroll(target.args()[0]);
    geometry.schedule_gpu();
    return;
  }
  Var cl = gblk.args()[0], cb = gblk.args()[3], xo{"xo"}, xi{"xi"};
  grad_input.specialize(W >= kLanes && C >= kLanes)
      .split(c, cb, cl, kLanes, TailStrategy::GuardWithIf)
      .split(x, xo, xi, kLanes, TailStrategy::ShiftInwards)
      .reorder(xi, cl, xo, y, n, cb)
      .vectorize(xi)
      .vectorize(cl)
      .parallel(cb);
  grad_input.split(c, cb, cl, kLanes, TailStrategy::GuardWithIf).reorder(cl, x, y, n, cb).parallel(cb);
  geometry.schedule_cpu();
  gblk.compute_at(grad_input, cb).vectorize(cl);
  gblk.update().reorder(cl, r[0]).vectorize(cl).unroll(r[0]);
  goutb.compute_at(gblk, r[rk]).vectorize(cl);
}

}  // namespace oplab_halide
