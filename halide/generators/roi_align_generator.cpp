// roi_align in float32 (SPEC §4): forward (avg or max, a generator parameter) and the
// backward of each. Halide dimension order is the reverse of NCHW: input (x, y, c, n),
// rois (field, k), output (pw, ph, c, k).
//
// Sampling positions and bilinear weights depend on the roi and the bin, never on the
// channel: they are computed once per roi into small tables (RoiGeometry, roi_sampling.h) and
// shared by every channel, the trick of torchvision's pre_calc. The channels are processed in
// blocks of kLanes (roi_sampling.h): `blk` is the input with a block's channels innermost, and
// the accumulators are indexed (cl, ..., cb, ...), so one sample of a whole block is four dense
// vector loads on the CPU; on the GPU `blk` is inlined (plain index arithmetic).
//
// Samples are visited iy-major (iy outer, ix inner) as in the reference: the sum's order, and
// in max mode which of two equal samples wins (the first), follow it.
#include "Halide.h"
#include "float_bits.h"
#include "roi_sampling.h"

using namespace Halide;
using namespace oplab_halide;

namespace {

class RoiAlignForward : public Generator<RoiAlignForward> {
 public:
  GeneratorParam<bool> max_mode{"max_mode", false};
  Input<Buffer<float>> input{"input", 4};
  Input<Buffer<float>> rois{"rois", 2};
  Input<double> spatial_scale{"spatial_scale"};
  Input<int> sampling_ratio{"sampling_ratio"};
  Input<bool> aligned{"aligned"};
  Input<int> pooled_h{"pooled_h"}, pooled_w{"pooled_w"};
  Input<int> max_grid{"max_grid"};  // the largest gy, gx of any roi (the glue computes it)
  Input<Buffer<int32_t>> order{"order", 1};  // the rois in cache order (CPU only: RoiOrder)
  Output<Buffer<float>> output{"output", 4};

  Var pw{"pw"}, ph{"ph"}, c{"c"}, k{"k"}, cl{"cl"}, cb{"cb"};
  RoiGeometry g;
  RoiOrder ord;
  Func acc{"acc"}, res{"res"};
  ChannelBlocked blk;
  RDom r;
  int lanes = kLanes;  // channels per block (1 on the GPU: channel_lanes)

  void generate() {
    const bool cpu = !get_target().has_gpu_feature();
    lanes = channel_lanes(get_target());
    Expr W = input.dim(0).extent(), H = input.dim(1).extent(), C = input.dim(2).extent(), N = input.dim(3).extent();
    Expr K = rois.dim(1).extent();
    // On the CPU the rois in cache order (RoiOrder): k below is then the step, not the roi.
    if (cpu) ord.define(rois, order, K);
    g.define(cpu ? ord.rois : Func(rois), spatial_scale, sampling_ratio, RoiBoxRule{aligned, !aligned}, pooled_h,
             pooled_w, H, W, N);
    blk = channel_blocked(input, C, "blk", lanes);

    r = g.grid(k, max_grid);
    AxisTaps ty = taps_of(g.yt(r.y, ph, k)), tx = taps_of(g.xt(r.x, pw, k));
    Expr sample = roi_bilinear_sample(ty, tx, [&](Expr x, Expr y) { return blk(cl, x, y, cb, g.batch(k)); });

    Expr value;  // output channel c of roi (step) k
    if (!max_mode) {
      acc(cl, pw, ph, cb, k) = 0.0f;
      acc(cl, pw, ph, cb, k) += sample;
      value = acc(c % lanes, pw, ph, c / lanes, k) / g.count(k);
    } else {
      // First non-NaN sample wins, replaced only by a strictly greater one. The running best
      // starts as NaN, which no sample ever is once taken: still NaN at the end means no
      // sample won (only NaN samples); no samples at all gives 0 (docs/semantics.md).
      acc(cl, pw, ph, cb, k) = cast<float>(NAN);
      Expr best = acc(cl, pw, ph, cb, k);
      acc(cl, pw, ph, cb, k) = select(!oplab_bits::is_nan_bits(sample) && (oplab_bits::is_nan_bits(best) || sample > best), sample, best);
      Expr any_sample = g.gy(k) > 0 && g.gx(k) > 0;
      value = select(any_sample, acc(c % lanes, pw, ph, c / lanes, k), 0.0f);
    }
    if (cpu) {
      // The results of step k (res), written out at roi k's own index.
      res(cl, pw, ph, cb, k) = substitute(c, cb * lanes + cl, value);
      output(pw, ph, c, k) = res(c % lanes, pw, ph, c / lanes, ord.step(k));
    } else {
      output(pw, ph, c, k) = value;
    }
  }

  void schedule() {
    promise_zero_mins(input), promise_zero_mins(rois), promise_zero_mins(order), promise_zero_mins(output);
    if (!get_target().has_gpu_feature()) ord.schedule_cpu();
    schedule_roi_forward(output, res, acc, r, blk, g, input.dim(0).extent(), get_target().has_gpu_feature());
  }
};

// grad_input of roi_align. avg: every in-range sample of a bin scatters gout * w / count to its
// four corners. max: the winning sample (found exactly as the forward finds it) scatters
// gout * w to its four corners; an out-of-range winner (value 0) and an all-NaN bin pass
// nothing on.
//
// On the CPU the scatter accumulates into `gblk`, the gradient in channel blocks: a task owns a
// block, so it is race-free without atomics, and the adds of a whole block are one dense
// vector read-modify-write (avg) or a 16-lane gather/scatter over distinct channels (max,
// whose winners differ per channel); the block is then transposed into grad_input. On the GPU
// the scatter goes straight into grad_input with atomic adds.
class RoiAlignBackward : public Generator<RoiAlignBackward> {
 public:
  GeneratorParam<bool> max_mode{"max_mode", false};
  // The feature map: its shape always, its values only in max mode (to find each bin's
  // winner; a buffer a GPU kernel never reads is never copied to the device).
  Input<Buffer<float>> input{"input", 4};
  Input<Buffer<float>> rois{"rois", 2};
  Input<Buffer<float>> grad_output{"grad_output", 4};
  Input<double> spatial_scale{"spatial_scale"};
  Input<int> sampling_ratio{"sampling_ratio"};
  Input<bool> aligned{"aligned"};
  Input<int> max_grid{"max_grid"};
  Output<Buffer<float>> grad_input{"grad_input", 4};

  Var c{"c"}, pw{"pw"}, ph{"ph"}, k{"k"}, q{"q"}, ix{"ix"}, iy{"iy"}, cl{"cl"}, cb{"cb"};
  RoiGeometry g;
  Func winner{"winner"}, target{"target"}, gblk{"gblk"}, goutb{"goutb"};
  ChannelBlocked blk;
  RDom r, sg;
  bool cpu = true;
  int lanes = kLanes;  // channels per block (1 on the GPU: channel_lanes)

  void generate() {
    cpu = !get_target().has_gpu_feature();
    lanes = channel_lanes(get_target());
    Expr W = input.dim(0).extent(), H = input.dim(1).extent(), C = input.dim(2).extent(), N = input.dim(3).extent();
    Expr PW = grad_output.dim(0).extent(), PH = grad_output.dim(1).extent(), K = grad_output.dim(3).extent();
    g.define(rois, spatial_scale, sampling_ratio, RoiBoxRule{aligned, !aligned}, PH, PW, H, W, N);
    goutb(cl, pw, ph, cb, k) = grad_output(pw, ph, block_channel(cb, cl, lanes, C), k);
    // Every scatter goes through `target`, a Func giving each corner's pixel (x, y, image) and
    // value, realised where it is scattered (roi_corner_target says why).
    define_roi_gradient(grad_input, gblk, cpu, [&] {
      if (max_mode)
        scatter_winners(W, H, C, PW, PH, K);
      else
        scatter_samples(PW, PH, K);
    });
  }

  // avg: every corner of every in-range sample (scatter_roi_corners).
  void scatter_samples(Expr PW, Expr PH, Expr K) {
    AxisTaps ty = taps_of(g.yt(iy, ph, k)), tx = taps_of(g.xt(ix, pw, k));
    target(q, ix, iy, pw, ph, k) = roi_corner_target(ty, tx, q, g.batch(k), g.count(k));
    r = scatter_roi_corners(grad_input, gblk, goutb, grad_output, target, g, max_grid, PW, PH, K, cpu);
  }

  // max: the corners of each bin's winner.
  void scatter_winners(Expr W, Expr H, Expr C, Expr PW, Expr PH, Expr K) {
    // The winner of each bin and channel, as the forward decides it. The running Tuple keeps
    // the winning sample's taps (so that the scatter needs no per-channel table lookups):
    // (value, pass, y0, y1, x0, x1, wy0, wy1, wx0, wx1); pass < 0 while no non-NaN sample has
    // been seen, else 1 when the winner is in range and 0 when it is not (it passes nothing).
    blk = channel_blocked(input, C, "blk", lanes);
    sg = g.grid(k, max_grid);
    AxisTaps ty = taps_of(g.yt(sg.y, ph, k)), tx = taps_of(g.xt(sg.x, pw, k));
    Expr v = roi_bilinear_value(ty, tx, [&](Expr xx, Expr yy) { return blk(cl, xx, yy, cb, g.batch(k)); });
    Expr in_range = ty.valid && tx.valid;
    Expr sample = select(in_range, v, 0.0f);
    winner(cl, pw, ph, cb, k) = Tuple(0.0f, -1, 0, 0, 0, 0, 0.0f, 0.0f, 0.0f, 0.0f);
    Tuple best = winner(cl, pw, ph, cb, k);
    Expr take = !oplab_bits::is_nan_bits(sample) && (best[1] < 0 || sample > best[0]);
    std::vector<Expr> now = {sample, select(in_range, 1, 0), ty.i0, ty.i1, tx.i0, tx.i1, ty.w0, ty.w1, tx.w0, tx.w1};
    std::vector<Expr> next;
    for (size_t f = 0; f < now.size(); ++f) next.push_back(select(take, now[f], best[f]));
    winner(cl, pw, ph, cb, k) = Tuple(next);

    // The winning sample's corners (different for every channel); a bin without a winner,
    // or whose winner is out of range, scatters zeros.
    Tuple wn = winner(cl, pw, ph, cb, k);
    Expr qx = (q % 2) == 1, qy = q >= 2;
    Expr w = select(qy, wn[7], wn[6]) * select(qx, wn[9], wn[8]);
    Expr gval = select(wn[1] == 1, goutb(cl, pw, ph, cb, k) * w, 0.0f);
    // (The taps are in range already; the clamps tell bounds inference so.)
    target(q, cl, pw, ph, cb, k) = Tuple(clamp(select(qx, wn[5], wn[4]), 0, W - 1),
                                         clamp(select(qy, wn[3], wn[2]), 0, H - 1), g.batch(k), gval);
    // r: corner q, bin pw, ph, roi k.
    r = RDom({{0, 4}, {0, PW}, {0, PH}, {0, K}}, "r");
    if (cpu) {
      Tuple t = target(r[0], cl, r[1], r[2], cb, r[3]);
      gblk(cl, t[0], t[1], cb, t[2]) += t[3];
    } else {
      Tuple t = target(r[0], 0, r[1], r[2], c, r[3]);  // lanes 1 on the GPU
      grad_input(t[0], t[1], c, t[2]) += t[3];
    }
  }

  void schedule() {
    promise_zero_mins(input), promise_zero_mins(rois), promise_zero_mins(grad_output), promise_zero_mins(grad_input);
    const int rk = max_mode ? 3 : 5;  // index of the roi dimension of r
    Expr W = input.dim(0).extent(), C = input.dim(2).extent();
    schedule_roi_scatter(grad_input, gblk, goutb, target, r, rk, g, W, C, !cpu);
    if (!cpu) {
      if (max_mode) winner.compute_at(grad_input, r[rk - 2]);
      return;
    }
    if (max_mode) {
      schedule_blocked_copy(blk, LoopLevel(grad_input, cb), W);
      winner.compute_at(gblk, r[rk]).vectorize(cl);
      winner.update().reorder(cl, sg.x, sg.y).vectorize(cl);
    }
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(RoiAlignForward, roi_align_forward)
HALIDE_REGISTER_GENERATOR(RoiAlignBackward, roi_align_backward)
