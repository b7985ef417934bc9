// ps_roi_align in float32 (SPEC §11, R-FCN's position-sensitive RoIAlign): forward and
// backward (grad_input). Output (k, c, ph, pw) averages the samples of bin (ph, pw) of roi k on
// the one input channel (c * PH + ph) * PW + pw; boxes, grid and the bilinear rule are
// roi_align's with aligned=true (RoiGeometry, roi_sampling.h). The feature map comes as the
// 6-D view (x, y, pw, ph, c, n) and the CPU processes the output channels of a bin in blocks
// (ps_roi_blocks.h); rois (field, k), output (pw, ph, c, k), as in roi_align.
#include "Halide.h"
#include "ps_roi_blocks.h"
#include "roi_sampling.h"

using namespace Halide;
using namespace oplab_halide;

namespace {

class PsRoiAlignForward : public Generator<PsRoiAlignForward> {
 public:
  Input<Buffer<float>> input{"input", 6};  // (x, y, pw, ph, c, n)
  Input<Buffer<float>> rois{"rois", 2};
  Input<double> spatial_scale{"spatial_scale"};
  Input<int> sampling_ratio{"sampling_ratio"};
  Input<int> max_grid{"max_grid"};  // the largest gy, gx of any roi (the glue computes it)
  Output<Buffer<float>> output{"output", 4};

  Var pw{"pw"}, ph{"ph"}, c{"c"}, k{"k"}, cl{"cl"}, cb{"cb"};
  RoiGeometry g;
  Func acc{"acc"}, res{"res"};
  ChannelBlocked blk;
  RDom r;

  void generate() {
    const int lanes = ps_channel_lanes(get_target());
    Expr W = input.dim(0).extent(), H = input.dim(1).extent(), PW = input.dim(2).extent(),
         PH = input.dim(3).extent(), Co = input.dim(4).extent(), N = input.dim(5).extent();
    g.define(rois, spatial_scale, sampling_ratio, aligned_box_rule(), PH, PW, H, W, N);
    blk = ps_channel_blocked(input, Co, lanes);
    // Samples iy-major as in the reference (the sum's order follows it).
    r = g.grid(k, max_grid);
    AxisTaps ty = taps_of(g.yt(r.y, ph, k)), tx = taps_of(g.xt(r.x, pw, k));
    Expr v = roi_bilinear_value(ty, tx, [&](Expr x, Expr y) { return blk(cl, x, y, cb, pw, ph, g.batch(k)); });
    acc(cl, k, pw, ph, cb) = 0.0f;
    acc(cl, k, pw, ph, cb) += select(ty.valid && tx.valid, v, 0.0f);
    // A grid without samples sums nothing and divides by 1: 0 (torchvision divides by 0).
    res(cl, k, pw, ph, cb) = acc(cl, k, pw, ph, cb) / g.count(k);
    output(pw, ph, c, k) = res(c % lanes, k, pw, ph, c / lanes);
  }

  void schedule() {
    promise_zero_mins(input), promise_zero_mins(rois), promise_zero_mins(output);
    if (get_target().has_gpu_feature())
      schedule_roi_forward_gpu(output, acc, g);
    else
      schedule_ps_forward_cpu(output, res, acc, r, blk, g, input.dim(0).extent());
  }
};

// grad_input: every in-range sample of bin (ph, pw) of roi k scatters gout(k, c, ph, pw) * w /
// count to its four corners in plane (pw, ph, c) of image batch(k), rois in order, samples
// iy-major, then the corners.
//  * CPU: into the gradient in channel blocks, a task per (bin, block), race-free, then
//    transposed out (ps_roi_blocks.h).
//  * GPU: straight into grad_input with atomic adds, one thread per bin (a 2-D block of
//    pw x ph), one block per (channel, roi): the rois of one plane overlap.
class PsRoiAlignBackward : public Generator<PsRoiAlignBackward> {
 public:
  Input<Buffer<float>> input{"input", 6};  // its shape only (never read, never copied to a GPU)
  Input<Buffer<float>> rois{"rois", 2};
  Input<Buffer<float>> grad_output{"grad_output", 4};
  Input<double> spatial_scale{"spatial_scale"};
  Input<int> sampling_ratio{"sampling_ratio"};
  Input<int> max_grid{"max_grid"};
  Output<Buffer<float>> grad_input{"grad_input", 6};  // (x, y, pw, ph, c, n)

  Var x{"x"}, y{"y"}, pw{"pw"}, ph{"ph"}, c{"c"}, n{"n"}, k{"k"}, q{"q"}, ix{"ix"}, iy{"iy"}, cl{"cl"}, cb{"cb"};
  RoiGeometry g;
  Func target{"target"}, gblk{"gblk"}, goutb{"goutb"};
  RDom r;
  bool cpu = true;

  void generate() {
    cpu = !get_target().has_gpu_feature();
    Expr W = input.dim(0).extent(), H = input.dim(1).extent(), PW = input.dim(2).extent(),
         PH = input.dim(3).extent(), Co = input.dim(4).extent(), N = input.dim(5).extent(),
         K = grad_output.dim(3).extent();
    g.define(rois, spatial_scale, sampling_ratio, aligned_box_rule(), PH, PW, H, W, N);

    // Every corner's pixel, image, weight / count and whether its sample is in range. A Func
    // realised where it is scattered: on the GPU the atomic update's store index and its
    // implicit load index are then the same loads, which Halide 14 needs to emit a native
    // atomic add rather than a compare-and-swap loop (roi_sampling.h, schedule_roi_scatter).
    AxisTaps ty = taps_of(g.yt(iy, ph, k)), tx = taps_of(g.xt(ix, pw, k));
    Corner cn = roi_corner(ty, tx, q);
    target(q, ix, iy, pw, ph, k) = Tuple(cn.x, cn.y, g.batch(k), cn.w / g.count(k), ty.valid && tx.valid);

    // r: corner q (innermost), sample ix, iy, roi k; the bin is the plane's own (pw, ph).
    r = RDom({{0, 4}, {0, max_grid}, {0, max_grid}, {0, K}}, "r");
    r.where(r[1] < g.gx(r[3]) && r[2] < g.gy(r[3]));
    Tuple t = target(r[0], r[1], r[2], pw, ph, r[3]);
    // gout * (w / count); an out-of-range sample adds exactly 0 (even for a NaN gout).
    if (cpu) {
      // gout of lane cl of block cb (lanes past the last channel read the last channel; their
      // sums are discarded).
      goutb(cl, k, pw, ph, cb) = grad_output(pw, ph, min(cb * kPsLanes + cl, Co - 1), k);
      gblk(cl, x, y, n, pw, ph, cb) = 0.0f;
      gblk(cl, t[0], t[1], t[2], pw, ph, cb) += select(t[4], goutb(cl, r[3], pw, ph, cb) * t[3], 0.0f);
      grad_input(x, y, pw, ph, c, n) = gblk(c % kPsLanes, x, y, n, pw, ph, c / kPsLanes);
    } else {
      grad_input(x, y, pw, ph, c, n) = 0.0f;
      grad_input(t[0], t[1], pw, ph, c, t[2]) += select(t[4], grad_output(pw, ph, c, r[3]) * t[3], 0.0f);
    }
  }

  void schedule() {
    promise_zero_mins(input), promise_zero_mins(rois), promise_zero_mins(grad_output), promise_zero_mins(grad_input);
    if (cpu) {
      g.schedule_cpu();
      schedule_ps_scatter_cpu(grad_input, gblk, goutb, r, 3, true, input.dim(0).extent(), input.dim(4).extent());
      return;
    }
    Var t{"t"}, tb{"tb"}, ti{"ti"};
    grad_input.fuse(x, y, t).fuse(t, pw, t).fuse(t, ph, t).fuse(t, c, t).fuse(t, n, t);
    grad_input.gpu_tile(t, tb, ti, 256, TailStrategy::GuardWithIf);
    grad_input.update().atomic().reorder(r[0], r[1], r[2], pw, ph, c, r[3]).unroll(r[0]).gpu_threads(pw, ph).gpu_blocks(c, r[3]);
    target.compute_at(grad_input, r[1]).unroll(target.args()[0]);
    g.schedule_gpu();
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(PsRoiAlignForward, ps_roi_align_forward)
HALIDE_REGISTER_GENERATOR(PsRoiAlignBackward, ps_roi_align_backward)
