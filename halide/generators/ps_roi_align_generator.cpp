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
    const PsExtents e = ps_extents(input);
    g.define(rois, spatial_scale, sampling_ratio, aligned_box_rule(), e.PH, e.PW, e.H, e.W, e.N);
    blk = channel_blocked(input, e.Co, "blk", lanes, {pw, ph});
    // Samples iy-major as in the reference (the sum's order follows it).
    r = g.grid(k, max_grid);
    AxisTaps ty = taps_of(g.yt(r.y, ph, k)), tx = taps_of(g.xt(r.x, pw, k));
    acc(cl, k, pw, ph, cb) = 0.0f;
    acc(cl, k, pw, ph, cb) += roi_bilinear_sample(ty, tx, [&](Expr x, Expr y) { return blk(cl, x, y, cb, pw, ph, g.batch(k)); });
    // A grid without samples sums nothing and divides by 1: 0 (torchvision divides by 0).
    res(cl, k, pw, ph, cb) = acc(cl, k, pw, ph, cb) / g.count(k);
    output(pw, ph, c, k) = res(c % lanes, k, pw, ph, c / lanes);
  }

  void schedule() {
    promise_zero_mins(input), promise_zero_mins(rois), promise_zero_mins(output);
    schedule_ps_forward(output, res, acc, r, blk, g, input.dim(0).extent(), get_target().has_gpu_feature());
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

  Var pw{"pw"}, ph{"ph"}, c{"c"}, k{"k"}, q{"q"}, ix{"ix"}, iy{"iy"}, cl{"cl"}, cb{"cb"};
  RoiGeometry g;
  Func target{"target"}, gblk{"gblk"}, goutb{"goutb"};
  RDom r;
  bool cpu = true;

  void generate() {
    cpu = !get_target().has_gpu_feature();
    const PsExtents e = ps_extents(input);
    g.define(rois, spatial_scale, sampling_ratio, aligned_box_rule(), e.PH, e.PW, e.H, e.W, e.N);
    // Every corner of every sample, realised where it is scattered (roi_corner_target says why).
    AxisTaps ty = taps_of(g.yt(iy, ph, k)), tx = taps_of(g.xt(ix, pw, k));
    target(q, ix, iy, pw, ph, k) = roi_corner_target(ty, tx, q, g.batch(k), g.count(k));

    // r: corner q (innermost), sample ix, iy, roi k; the bin is the plane's own (pw, ph).
    r = RDom({{0, 4}, {0, max_grid}, {0, max_grid}, {0, grad_output.dim(3).extent()}}, "r");
    r.where(r[1] < g.gx(r[3]) && r[2] < g.gy(r[3]));
    Tuple t = target(r[0], r[1], r[2], pw, ph, r[3]);
    define_ps_gradient(grad_input, gblk, cpu, [&] {
      if (cpu) {
        goutb(cl, k, pw, ph, cb) = grad_output(pw, ph, block_channel(cb, cl, kPsLanes, e.Co), k);
        gblk(cl, t[0], t[1], t[2], pw, ph, cb) += roi_corner_add(t, goutb(cl, r[3], pw, ph, cb));
      } else {
        grad_input(t[0], t[1], pw, ph, c, t[2]) += roi_corner_add(t, grad_output(pw, ph, c, r[3]));
      }
    });
  }

  void schedule() {
    promise_zero_mins(input), promise_zero_mins(rois), promise_zero_mins(grad_output), promise_zero_mins(grad_input);
    schedule_ps_scatter(grad_input, gblk, goutb, target, r, 3, true, g, input.dim(0).extent(), input.dim(4).extent(), !cpu);
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(PsRoiAlignForward, ps_roi_align_forward)
HALIDE_REGISTER_GENERATOR(PsRoiAlignBackward, ps_roi_align_backward)
