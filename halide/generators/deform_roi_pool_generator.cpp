// deform_roi_pool in float32 (SPEC §5, after mmcv's DeformRoIPool): an always-aligned
// RoIAlign (avg) whose every bin is translated by a learned offset, forward and backward
// (grad_input; grad_offset, the true derivative). Halide dimension order is the reverse of
// NCHW: input (x, y, c, n), rois (field, k), offset (pw, ph, j, k) with j = 0 the x (width)
// shift and j = 1 the y shift (the opposite order of deform_conv2d), output (pw, ph, c, k).
//
// The generator parameter has_offset builds the variant without the offset input (and without
// grad_offset): the plain aligned RoIAlign with no minimum box size.
//
// Sample positions and weights depend on the roi and the bin, never on the channel: they are
// per-roi tables shared by every channel, and the channels are processed in blocks of kLanes
// as in roi_align (roi_sampling.h). Samples are visited iy-major as in the reference.
#include "Halide.h"
#include "deform_roi_geometry.h"
#include "roi_sampling.h"

using namespace Halide;
using namespace oplab_halide;

namespace {

class DeformRoiPoolForward : public Generator<DeformRoiPoolForward> {
 public:
  GeneratorParam<bool> has_offset{"has_offset", true};
  Input<Buffer<float>> input{"input", 4};
  Input<Buffer<float>> rois{"rois", 2};
  Input<double> spatial_scale{"spatial_scale"};
  Input<int> sampling_ratio{"sampling_ratio"};
  Input<double> gamma{"gamma"};
  Input<int> pooled_h{"pooled_h"}, pooled_w{"pooled_w"};
  Input<int> max_grid{"max_grid"};  // the largest gy, gx of any roi (the glue computes it)
  Input<Buffer<int32_t>> order{"order", 1};  // the rois in cache order (CPU only: RoiOrder)
  Output<Buffer<float>> output{"output", 4};
  Input<Buffer<float>>* offset = nullptr;  // [K, 2, PH, PW]; with has_offset only

  void configure() {
    if (has_offset) offset = add_input<Buffer<float>>("offset", 4);
  }

  DeformGeometry g;
  RoiOrder ord;
  Var c{"c"}, cl{"cl"}, cb{"cb"};
  Func acc{"acc"}, res{"res"};
  ChannelBlocked blk;
  RDom r;
  int lanes = kLanes;  // channels per block (1 on the GPU: channel_lanes)

  void generate() {
    lanes = channel_lanes(get_target());
    Expr W = input.dim(0).extent(), H = input.dim(1).extent(), C = input.dim(2).extent(), N = input.dim(3).extent();
    const bool cpu = !get_target().has_gpu_feature();
    Expr K = rois.dim(1).extent();
    // On the CPU the rois (and their offsets) in cache order (RoiOrder): k below is then the
    // step, not the roi.
    Func off{"offset_in_order"};
    Var opw, oph, oj, os;
    if (cpu) {
      ord.define(rois, order, K);
      if (offset) off(opw, oph, oj, os) = (*offset)(opw, oph, oj, ord.roi(os));
    } else if (offset) {
      off = *offset;
    }
    g.define(cpu ? ord.rois : Func(rois), offset ? &off : nullptr, spatial_scale, sampling_ratio, gamma, pooled_h,
             pooled_w, H, W, N);
    Var pw = g.pw, ph = g.ph, k = g.k;
    blk = channel_blocked(input, C, "blk", lanes);

    r = g.grid(k, max_grid);
    AxisTaps ty = taps_of(g.yt(r.y, pw, ph, k)), tx = taps_of(g.xt(r.x, pw, ph, k));
    acc(cl, pw, ph, cb, k) = 0.0f;
    acc(cl, pw, ph, cb, k) += roi_bilinear_sample(ty, tx, [&](Expr x, Expr y) { return blk(cl, x, y, cb, g.batch(k)); });
    if (cpu) {
      // The results of step k (res), written out at roi k's own index.
      res(cl, pw, ph, cb, k) = acc(cl, pw, ph, cb, k) / g.count(k);
      output(pw, ph, c, k) = res(c % lanes, pw, ph, c / lanes, ord.step(k));
    } else {
      output(pw, ph, c, k) = acc(c % lanes, pw, ph, c / lanes, k) / g.count(k);
    }
  }

  void schedule() {
    promise_zero_mins(input), promise_zero_mins(rois), promise_zero_mins(order), promise_zero_mins(output);
    if (offset) promise_zero_mins(*offset);
    // As roi_align's forward (roi_sampling.h).
    if (!get_target().has_gpu_feature()) ord.schedule_cpu();
    schedule_roi_forward(output, res, acc, r, blk, g, input.dim(0).extent(), get_target().has_gpu_feature());
  }
};

// grad_input: every in-range sample scatters gout * w / count to its four corners (as
// roi_align avg: on the CPU into the gradient in channel blocks, race-free, then transposed;
// on the GPU straight into grad_input with atomic adds). grad_offset (has_offset):
// d output / d offset, the true derivative of the bilinear rule with the right-sided
// convention of reference/roi_bilinear.h, summed over channels: gamma * rw * mean over samples
// of dv/dx for channel 0, gamma * rh * dv/dy for 1 (a pure reduction, no scatter).
class DeformRoiPoolBackward : public Generator<DeformRoiPoolBackward> {
 public:
  GeneratorParam<bool> has_offset{"has_offset", true};
  // The feature map: its shape always, its values only for grad_offset (a buffer a GPU kernel
  // never reads is never copied to the device).
  Input<Buffer<float>> input{"input", 4};
  Input<Buffer<float>> rois{"rois", 2};
  Input<Buffer<float>> grad_output{"grad_output", 4};
  Input<double> spatial_scale{"spatial_scale"};
  Input<int> sampling_ratio{"sampling_ratio"};
  Input<double> gamma{"gamma"};
  Input<int> max_grid{"max_grid"};
  Output<Buffer<float>> grad_input{"grad_input", 4};
  // has_offset only: the offsets and their gradient.
  Input<Buffer<float>>* offset = nullptr;
  Output<Buffer<float>>* grad_offset = nullptr;

  void configure() {
    if (has_offset) {
      offset = add_input<Buffer<float>>("offset", 4);
      grad_offset = add_output<Buffer<float>>("grad_offset", 4);
    }
  }

  DeformGeometry g;
  Var j{"j"}, q{"q"}, ix{"ix"}, iy{"iy"}, cl{"cl"}, cb{"cb"};
  Func target{"target"}, gblk{"gblk"}, goutb{"goutb"}, dpart{"dpart"}, dsum{"dsum"};
  ChannelBlocked blk;
  RDom r, rd, rl, rc;
  bool cpu = true;

  void generate() {
    cpu = !get_target().has_gpu_feature();
    Expr W = input.dim(0).extent(), H = input.dim(1).extent(), C = input.dim(2).extent(), N = input.dim(3).extent();
    Expr PW = grad_output.dim(0).extent(), PH = grad_output.dim(1).extent(), K = grad_output.dim(3).extent();
    Func off;
    if (offset) off = *offset;
    g.define(rois, offset ? &off : nullptr, spatial_scale, sampling_ratio, gamma, PH, PW, H, W, N);
    Var pw = g.pw, ph = g.ph, k = g.k;
    goutb(cl, pw, ph, cb, k) = grad_output(pw, ph, block_channel(cb, cl, kLanes, C), k);
    // Every corner of every sample (roi_corner_target), scattered as roi_align avg scatters.
    define_roi_gradient(grad_input, gblk, cpu, [&] {
      AxisTaps ty = taps_of(g.yt(iy, pw, ph, k)), tx = taps_of(g.xt(ix, pw, ph, k));
      target(q, ix, iy, pw, ph, k) = roi_corner_target(ty, tx, q, g.batch(k), g.count(k));
      r = scatter_roi_corners(grad_input, gblk, goutb, grad_output, target, g, max_grid, PW, PH, K, cpu);
    });

    if (grad_offset) {
      // Per block of channels: the sum over its channels and the bin's samples of
      // gout * (dv/dx, dv/dy). Out of range, and where the rule is flat in a coordinate
      // ([-1, 0), the last row/column and beyond), that coordinate's derivative is 0 (the
      // slope flags); all four corners are read otherwise, so NaN/Inf in the feature map
      // propagate as in the reference. Lanes past the last channel add nothing.
      blk = channel_blocked(input, C, "blk", kLanes);
      rd = g.grid(k, max_grid);
      AxisTaps sy = taps_of(g.yt(rd.y, pw, ph, k)), sx = taps_of(g.xt(rd.x, pw, ph, k));
      auto at = [&](Expr xx, Expr yy) { return blk(cl, xx, yy, cb, g.batch(k)); };
      Expr v00 = at(sx.i0, sy.i0), v01 = at(sx.i1, sy.i0), v10 = at(sx.i0, sy.i1), v11 = at(sx.i1, sy.i1);
      Expr dy = select(sx.valid && sy.slope, sx.w0 * (v10 - v00) + sx.w1 * (v11 - v01), 0.0f);
      Expr dx = select(sy.valid && sx.slope, sy.w0 * (v01 - v00) + sy.w1 * (v11 - v10), 0.0f);
      Expr lane = cb * kLanes + cl < C;
      Expr go = grad_output(pw, ph, block_channel(cb, cl, kLanes, C), k);
      dpart(cl, pw, ph, cb, k) = Tuple(0.0f, 0.0f);
      dpart(cl, pw, ph, cb, k) = Tuple(dpart(cl, pw, ph, cb, k)[0] + select(lane, go * dx, 0.0f),
                                       dpart(cl, pw, ph, cb, k)[1] + select(lane, go * dy, 0.0f));
      // Over the lanes of a block, then over the blocks.
      rl = RDom(0, kLanes, "rl");
      dsum(pw, ph, cb, k) = Tuple(0.0f, 0.0f);
      dsum(pw, ph, cb, k) = Tuple(dsum(pw, ph, cb, k)[0] + dpart(rl, pw, ph, cb, k)[0],
                                  dsum(pw, ph, cb, k)[1] + dpart(rl, pw, ph, cb, k)[1]);
      rc = RDom(0, (C + kLanes - 1) / kLanes, "rc");
      Expr sum_x = sum(dsum(pw, ph, rc, k)[0]), sum_y = sum(dsum(pw, ph, rc, k)[1]);
      // The per-roi factor gamma * extent is formed in double, then applied in float.
      Expr fx = cast<float>(gamma * g.rw(k)), fy = cast<float>(gamma * g.rh(k));
      (*grad_offset)(pw, ph, j, k) = select(j == 0, fx * sum_x, fy * sum_y) / g.count(k);
    }
  }

  void schedule() {
    Var pw = g.pw, ph = g.ph, k = g.k;
    promise_zero_mins(input), promise_zero_mins(rois), promise_zero_mins(grad_output), promise_zero_mins(grad_input);
    if (offset) promise_zero_mins(*offset), promise_zero_mins(*grad_offset);
    Expr W = input.dim(0).extent(), C = input.dim(2).extent();
    schedule_roi_scatter(grad_input, gblk, goutb, target, r, 5, g, W, C, !cpu);
    if (!cpu) {
      if (grad_offset) {
        // One thread per (bin, roi), summing over every channel and sample.
        Var t{"t"}, tb{"tb"}, ti{"ti"};
        Func go = *grad_offset;
        go.bound(j, 0, 2).reorder(j, pw, ph, k).unroll(j).fuse(pw, ph, t).fuse(t, k, t).gpu_tile(t, tb, ti, 64, TailStrategy::GuardWithIf);
        dsum.compute_at(go, ti);
        // A lane at a time (inside the sum over lanes): all 16 at once would sit in local
        // memory, 256 bytes a thread.
        dpart.compute_at(dsum, rl);
      }
      return;
    }
    if (grad_offset) {
      // The block sums of every roi, a task per block (each with its copy of the block), then
      // a pure sum over the blocks per (bin, roi).
      dsum.compute_root().reorder(pw, ph, k, cb).parallel(cb);
      dsum.update().reorder(rl, pw, ph, k, cb).parallel(cb);
      schedule_blocked_copy(blk, LoopLevel(dsum, cb), W);
      dpart.compute_at(dsum, k).vectorize(cl);
      dpart.update().reorder(cl, rd.x, rd.y, pw, ph).vectorize(cl);
      Func go = *grad_offset;
      go.bound(j, 0, 2).reorder(j, pw, ph, k).unroll(j).parallel(k);
    }
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(DeformRoiPoolForward, deform_roi_pool_forward)
HALIDE_REGISTER_GENERATOR(DeformRoiPoolBackward, deform_roi_pool_backward)
