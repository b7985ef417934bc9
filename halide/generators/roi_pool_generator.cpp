// roi_pool in float32 (SPEC §3): forward (max over quantised bins) and backward (gout to the
// argmax pixel). Halide dimension order is the reverse of NCHW: input (x, y, c, n),
// rois (field, k), output (pw, ph, c, k).
//
// Bin bounds depend on the roi and the bin, never on the channel: they are tables per roi
// shared by every channel, and the channels are processed in blocks of kLanes as in roi_align. They are computed in float as torchvision's float kernel does
// (x * s in float, C rounding), so float32 and the double reference may disagree only where a
// product lands within an ulp of a rounding boundary (a flip the comparison reports).
#include <vector>

#include "Halide.h"
#include "float_bits.h"
#include "roi_sampling.h"

using namespace Halide;
using namespace oplab_halide;

namespace {

// C round (std::round): half away from zero. Halide's round() is half to even, which would
// send 2.5 to 2; the fractional part v - trunc(v) is exact in float, so the test is exact.
Expr round_half_away(Expr v) {
  Expr t = trunc(v);
  return select(abs(v - t) >= 0.5f, t + select(v < 0.0f, -1.0f, 1.0f), t);
}

// Bin bounds of one axis for roi k: [lo, hi) = [floor(p * bin) + start, ceil((p+1) * bin) + start)
// clamped to [0, size], with start = round(a * s), bin = max(round(b * s) - start + 1, 1) / pooled.
// Clamped in float before the conversion to int, so that a box far outside cannot overflow it.
struct PoolAxis {
  Func lo, hi;
  void define(Var p, Var k, Expr a, Expr b, Expr scale, Expr pooled, Expr size) {
    Expr start = round_half_away(a * scale), end = round_half_away(b * scale);
    Expr len = max(end - start + 1.0f, 1.0f);  // inclusive end
    Expr bin = len / cast<float>(pooled);
    Expr fsize = cast<float>(size);
    lo(p, k) = cast<int>(clamp(floor(cast<float>(p) * bin) + start, 0.0f, fsize));
    hi(p, k) = cast<int>(clamp(ceil(cast<float>(p + 1) * bin) + start, 0.0f, fsize));
  }
};

// The max of one bin and channel, scanned row-major (x inner, as the reference): the value and
// its flat index y * W + x, index < 0 while no non-NaN pixel has been seen. The first non-NaN
// pixel wins, replaced only by a strictly greater one, so NaN never wins and ties keep the
// first.
//
// Scanned as one running (value, index) pair, every pixel waits for the previous pixel's
// compare and blends (a dependency chain of ~6 cycles a pixel, which bounded the kernel). So
// the bin's rows are taken in pairs: rows lo + 2i and lo + 2i + 1 keep running pairs of their
// own, updated in the same loop body (two independent chains), and the two are combined at the
// end: the larger value wins, and of equal values the smaller index, i.e. the earlier pixel in
// the row-major scan, which is the one the single scan keeps; a partial without a non-NaN
// pixel (index < 0) never wins. That is the single scan's result exactly: its winner is the
// first pixel holding the bin's largest non-NaN value, which is the first such pixel of the
// partial that holds it. The second row of the last pair may lie past the bin (an odd number
// of rows): it reads a row inside the bin instead and takes no part.
//
// Channels come in blocks of kLanes (roi_sampling.h): best(cl, pw, ph, cb, k), the pixels
// read from `blk`, the input with a block's channels innermost (one dense vector per pixel on
// the CPU; inlined index arithmetic on the GPU).
struct BinMax {
  Var pw{"pw"}, ph{"ph"}, cl{"cl"}, cb{"cb"}, k{"k"}, p{"p"};
  // best's bin arguments and the bin's column and row: on the CPU one flat bin (FlatBins,
  // roi_sampling.h), on the GPU (pw, ph) themselves.
  std::vector<Var> bin;
  PoolAxis ax, ay;
  // The bounds of best's bin of roi k: [x_lo, x_hi) x [y_lo, y_hi). On the CPU read from
  // tables per flat bin (so that the sample loops' bounds are one table load each, which
  // Halide lifts out of the loops as it does for (pw, ph)).
  Func bx_lo{"ws_bin"}, bx_hi{"we_bin"}, by_lo{"hs_bin"}, by_hi{"he_bin"};
  Expr x_lo, x_hi, y_lo, y_hi;
  Func batch{"batch"}, best{"best"};
  ChannelBlocked blk;
  RDom r;
  int lanes = kLanes;  // channels per block (1 on the GPU: channel_lanes)

  void define(const Func& input, const Func& rois, Expr scale, Expr PH, Expr PW, Expr H, Expr W, Expr N, Expr C,
              int lanes_, const FlatBins* flat) {
    lanes = lanes_;
    ax.lo = Func("ws"), ax.hi = Func("we"), ay.lo = Func("hs"), ay.hi = Func("he");
    ax.define(p, k, rois(1, k), rois(3, k), scale, PW, W);
    ay.define(p, k, rois(2, k), rois(4, k), scale, PH, H);
    if (flat) {
      Var fb = flat->b;
      bin = {fb};
      Expr col = flat->col_of(fb), row = flat->row_of(fb);
      bx_lo(fb, k) = ax.lo(col, k), bx_hi(fb, k) = ax.hi(col, k);
      by_lo(fb, k) = ay.lo(row, k), by_hi(fb, k) = ay.hi(row, k);
      x_lo = bx_lo(fb, k), x_hi = bx_hi(fb, k), y_lo = by_lo(fb, k), y_hi = by_hi(fb, k);
    } else {
      bin = {pw, ph};
      x_lo = ax.lo(pw, k), x_hi = ax.hi(pw, k), y_lo = ay.lo(ph, k), y_hi = ay.hi(ph, k);
    }
    batch(k) = clamp(cast<int>(rois(0, k)), 0, N - 1);
    blk = channel_blocked(input, C, "blk", lanes);
    // The whole image, narrowed to the bin by the predicate: Halide turns bounds on an inner
    // RVar given by outer variables into the loop's own bounds, so only the bin is visited.
    // r.y counts pairs of rows.
    r = RDom(0, W, 0, (H + 1) / 2, "r");
    r.where(r.x >= x_lo && r.x < x_hi && r.y < (y_hi - y_lo + 1) / 2);
    Expr y0 = y_lo + 2 * r.y, y1 = y0 + 1, has1 = y1 < y_hi;
    // (Both rows are inside the image; the clamp tells bounds inference so.)
    Expr v0 = blk(cl, r.x, clamp(y0, 0, H - 1), cb, batch(k));
    Expr v1 = blk(cl, r.x, clamp(select(has1, y1, y0), 0, H - 1), cb, batch(k));
    // Each partial's value starts as NaN, which a bin with no non-NaN pixel keeps: its answer
    // without a select per lane (value() below says why that matters).
    best(args(cl, bin, cb, k)) = Tuple(cast<float>(NAN), -1, cast<float>(NAN), -1);
    Tuple b = best(args(cl, bin, cb, k));
    Expr take0 = !oplab_bits::is_nan_bits(v0) && (b[1] < 0 || v0 > b[0]);
    Expr take1 = has1 && !oplab_bits::is_nan_bits(v1) && (b[3] < 0 || v1 > b[2]);
    best(args(cl, bin, cb, k)) = Tuple(select(take0, v0, b[0]), select(take0, y0 * W + r.x, b[1]),
                                       select(take1, v1, b[2]), select(take1, y1 * W + r.x, b[3]));
  }

  // (cl, bin..., cb, k)
  template <class T>
  static std::vector<Expr> args(Expr cl_, const std::vector<T>& bin_, Expr cb_, Expr k_) {
    std::vector<Expr> a{cl_};
    a.insert(a.end(), bin_.begin(), bin_.end());
    a.push_back(cb_), a.push_back(k_);
    return a;
  }

  // The winner (value, index) of lane cl of block cb of the bin at best's bin arguments
  // bin_, from the two partials.
  Tuple winner(Expr cl_, const std::vector<Expr>& bin_, Expr cb_, Expr k_) const {
    Tuple b = best(args(cl_, bin_, cb_, k_));
    Expr second = b[1] < 0 || (b[3] >= 0 && (b[2] > b[0] || (b[2] == b[0] && b[3] < b[1])));
    return Tuple(select(second, b[2], b[0]), select(second, b[3], b[1]));
  }

  // Output of lane cl of block cb: (value, argmax); value 0 for an empty bin, NaN for a
  // non-empty bin of only NaN (the partials' initial NaN, kept), else the max.
  // (At best's own bin and roi.) The NaN once came from a select per lane on the winner's
  // index, which the CPU code made a merge-masked broadcast of a constant per bin: half of
  // the forward's samples sat on it (perf, bench record 2026-11-28c), and without it the
  // standard shape's forward took 0.5-0.7x the time, the same values and argmax.
  Tuple value(Expr cl_, Expr cb_) const {
    Expr empty = x_hi <= x_lo || y_hi <= y_lo;
    std::vector<Expr> bin_(bin.begin(), bin.end());
    Tuple w = winner(cl_, bin_, cb_, k);
    return Tuple(select(empty, 0.0f, w[0]), w[1]);
  }

  void schedule_bounds_cpu() {
    for (Func f : {ax.lo, ax.hi, ay.lo, ay.hi}) f.compute_root();
    if (bx_lo.defined())
      for (Func f : {bx_lo, bx_hi, by_lo, by_hi}) f.compute_root();
  }
};

// Forward: the pooled values and, as torchvision does, the argmax of every bin (flat index
// y * W + x in its plane, -1 for none), which the backward scatters to. On the CPU the rois
// are visited in cache order (RoiOrder, roi_sampling.h) and the results written out at each
// roi's own index, as roi_align does.
class RoiPoolForward : public Generator<RoiPoolForward> {
 public:
  Input<Buffer<float>> input{"input", 4};
  Input<Buffer<float>> rois{"rois", 2};
  Input<float> spatial_scale{"spatial_scale"};
  Input<int> pooled_h{"pooled_h"}, pooled_w{"pooled_w"};
  Input<Buffer<int32_t>> order{"order", 1};  // the rois in cache order (CPU only: RoiOrder)
  Output<Buffer<>> output{"output", {Float(32), Int(32)}, 4};  // (value, argmax)

  BinMax m;
  RoiOrder ord;
  FlatBins bins;
  RDom steps;
  Func res{"res"};
  Var c{"c"};

  void generate() {
    const bool cpu = !get_target().has_gpu_feature();
    Expr W = input.dim(0).extent(), H = input.dim(1).extent(), C = input.dim(2).extent(), N = input.dim(3).extent();
    Expr K = rois.dim(1).extent();
    // On the CPU k below is the step of the cache order, not the roi.
    if (cpu) ord.define(rois, order, K);
    if (cpu) bins.define(pooled_h, pooled_w);
    m.define(input, cpu ? ord.rois : Func(rois), spatial_scale, pooled_h, pooled_w, H, W, N, C,
             channel_lanes(get_target()), cpu ? &bins : nullptr);
    Var pw = m.pw, ph = m.ph, k = m.k, cl = m.cl, cb = m.cb;
    if (cpu) {
      // The results of step k (res), written straight to the output at roi order(k)'s index;
      // the output's bin (pw, ph) is flat bin pw + ph * pooled_w (the glue passes the bins as
      // one dimension: FlatBins).
      res(cl, bins.b, cb, k) = m.value(cl, cb);
      output(pw, ph, c, k) = Tuple(undef<float>(), undef<int32_t>());
      steps = RDom(0, K, "steps");
      output(pw, ph, c, ord.roi(steps)) = res(c % m.lanes, pw + ph * pooled_w, c / m.lanes, steps);
    } else {
      output(pw, ph, c, k) = m.value(c % m.lanes, c / m.lanes);
    }
  }

  void schedule() {
    Var pw = m.pw, ph = m.ph, k = m.k, cl = m.cl, cb = m.cb;
    promise_zero_mins(input), promise_zero_mins(rois), promise_zero_mins(order);
    if (get_target().has_gpu_feature()) {
      Var t{"t"}, tb{"tb"}, ti{"ti"};
      output.fuse(pw, ph, t).fuse(t, c, t).gpu_tile(t, tb, ti, 128, TailStrategy::GuardWithIf);
      m.best.compute_at(output, ti);
    } else {
      // A task owns a block of channels and runs every roi over it: the block's copy is made
      // once, and a bin's pixel is one dense vector of the block's 16 channels. The rois are
      // visited in cache order (RoiOrder); each step's results (res: value and argmax of the
      // block's 16 channels for every bin, 6 KB, stored as the output is, bins innermost) are
      // written straight to the output at the roi's own index, from the output's update over
      // the steps. With FlatBins a roi's block of the output is one dense run of 16 * PH * PW
      // values, written with full-width vector stores (masked only for the last of a channel).
      // Against the kernel that kept every step's results for the whole block (res, 6 MB per
      // task) and then wrote the output a row of 7 bins at a time (masked 8-wide stores):
      // 1.15-1.23x (median CPU time of 4 alternating A/B runs of 7-11 in one process,
      // identical values and argmax; unchanged kernels in the same runs: 0.95-1.13x, the
      // noise of the shared machine).
      RVar s = steps.x;
      Var b = bins.b;
      output.update().split(c, cb, cl, kLanes, TailStrategy::GuardWithIf).reorder(pw, ph, cl, s, cb).parallel(cb);
      output.update().specialize(Func(output).output_buffers()[0].dim(0).extent() >= oplab_widths::kRoiPoolWideBins).vectorize(pw, 16, TailStrategy::GuardWithIf);
      output.update().vectorize(pw, 8, TailStrategy::GuardWithIf);
      ord.schedule_cpu();
      bins.schedule_cpu();
      m.schedule_bounds_cpu();
      schedule_blocked_copy(m.blk, LoopLevel(output, cb), input.dim(0).extent());
      res.compute_at(output, s).reorder_storage(b, cl, cb, k).reorder(cl, b).vectorize(cl);
      m.best.compute_at(res, b).vectorize(cl);
      m.best.update().reorder(cl, m.r.x, m.r.y).vectorize(cl);
    }
  }
};

// grad_input: each bin's gout goes to the argmax the forward recorded (none for an empty or
// all-NaN bin), as torchvision's backward does: no search again. The gradient is seen as
// planes of H * W pixels (the glue's view), so that the flat argmax needs no division.
class RoiPoolBackward : public Generator<RoiPoolBackward> {
 public:
  Input<Buffer<int32_t>> argmax{"argmax", 4};
  Input<Buffer<float>> rois{"rois", 2};
  Input<Buffer<float>> grad_output{"grad_output", 4};
  // grad_input's extents H * W and N, as parameters: the CPU accumulates into a scratch Func
  // that grad_input then reads, and the scatter's bounds must be known before grad_input is
  // defined (its dims are readable only then). The kernel requires grad_input to match.
  Input<int> pixels{"pixels"}, images{"images"};
  Output<Buffer<float>> grad_input{"grad_input", 3};  // (y * W + x, c, n)

  Var i{"i"}, c{"c"}, n{"n"}, pw{"pw"}, ph{"ph"}, k{"k"};
  Func target{"target"}, planes{"planes"};
  RDom r;
  bool cpu = true;

  void generate() {
    cpu = !get_target().has_gpu_feature();
    Expr PW = grad_output.dim(0).extent(), PH = grad_output.dim(1).extent(), K = grad_output.dim(3).extent();
    // Where each bin's gradient goes: Tuple(pixel, image, value); a bin without an argmax adds
    // 0 to pixel 0. Realised as a Func where it is scattered so that, on the GPU, the store and
    // its implicit load index with the very same loaded values: Halide 14 compiles a native
    // atomic add only when the two index expressions are identical (else a CAS loop).
    Expr am = argmax(pw, ph, c, k);
    target(pw, ph, c, k) = Tuple(clamp(am, 0, pixels - 1), clamp(cast<int>(rois(0, k)), 0, images - 1),
                                 select(am >= 0, grad_output(pw, ph, c, k), 0.0f));
    // r: bin pw (inner), ph, roi k.
    r = RDom(0, PW, 0, PH, 0, K, "rb");
    Tuple t = target(r.x, r.y, c, r.z);
    if (cpu) {
      // A channel's planes (both images) zeroed and accumulated in scratch, then copied out.
      planes(i, n, c) = 0.0f;
      planes(t[0], t[1], c) += t[2];
      grad_input(i, c, n) = planes(i, n, c);
    } else {
      grad_input(i, c, n) = 0.0f;
      grad_input(t[0], c, t[1]) += t[2];
    }
    grad_input.dim(0).set_bounds(0, pixels);
    grad_input.dim(2).set_bounds(0, images);
  }

  void schedule() {
    promise_zero_mins(argmax), promise_zero_mins(rois), promise_zero_mins(grad_output), promise_zero_mins(grad_input);
    if (get_target().has_gpu_feature()) {
      Var t{"t"}, tb{"tb"}, ti{"ti"};
      grad_input.fuse(i, c, t).fuse(t, n, t).gpu_tile(t, tb, ti, 256, TailStrategy::GuardWithIf);
      // One thread per bin (a 2-D block of pw x ph), one block per (channel, roi); overlapping
      // bins and rois share argmax pixels, so the adds are atomic. The bin RVars are not fused:
      // Halide 14 then indexes the atomic store and its implicit load through different let
      // variables and falls back to a CAS loop.
      grad_input.update().atomic().reorder(r.x, r.y, c, r.z).gpu_threads(r.x, r.y).gpu_blocks(c, r.z);
      target.compute_at(grad_input, r.x);
    } else {
      // Race-free without atomics: a task owns a channel, zeroes its planes (both images) in
      // scratch, adds every roi's bins into them while they are in L2 (486 KB at the reduced
      // bench shape) and copies them out. Zeroing the whole gradient first and adding after
      // (the kernel before), the adds missed the cache: 3.2-6.3 ms against 1.6-1.8 on the
      // reduced bench shape, 33.5 against 12.9 on the standard one
      // (docs/bench/2026-11-29b-cpu.md).
      grad_input.reorder(i, n, c).parallel(c).vectorize(i, 16, TailStrategy::GuardWithIf);
      planes.compute_at(grad_input, c).vectorize(i, 16, TailStrategy::GuardWithIf);
      planes.update().reorder(r.x, r.y, r.z);
    }
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(RoiPoolForward, roi_pool_forward)
HALIDE_REGISTER_GENERATOR(RoiPoolBackward, roi_pool_backward)
