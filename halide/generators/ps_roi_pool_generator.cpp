// ps_roi_pool in float32 (SPEC §11, R-FCN's position-sensitive average pooling): forward and
// backward (grad_input). Output (k, c, ph, pw) is the mean of bin (ph, pw) of roi k on the one
// input channel (c * PH + ph) * PW + pw; an empty bin gives 0.
//
// As in ps_roi_align, the feature map comes as the 6-D view (x, y, pw, ph, c, n) and the CPU
// processes the output channels of a bin in blocks (ps_roi_blocks.h); rois (field, k), output
// (pw, ph, c, k).
#include "Halide.h"
#include "ps_roi_blocks.h"
#include "roi_sampling.h"

using namespace Halide;
using namespace oplab_halide;

namespace {

// C round (std::round): half away from zero, on a double. Halide's round() is half to even,
// which would send 2.5 to 2; the fractional part v - trunc(v) is exact, so the test is exact.
Expr round_half_away(Expr v) {
  Expr t = trunc(v);
  return select(abs(v - t) >= f64(0.5), t + select(v < f64(0.0), f64(-1.0), f64(1.0)), t);
}

// The bins of every roi (SPEC §11, torchvision's kernels): per axis, start = round(a * s),
// extent = max(round(b * s) - start, 1) (no +1, unlike roi_pool), bin = extent / pooled, and bin
// p covers [floor(p * bin) + start, ceil((p + 1) * bin) + start) with both ends clamped into
// [0, size - 1], so the last row and column are never part of a bin. Formed in double with
// strict IEEE semantics, in the reference's operations (reference/ps_roi_pool.cpp): every
// bound is then the reference's (a product x * s exactly on n + 0.5 rounds the same way on
// both sides), and clamped before the conversion to int, so that a box far outside the image
// cannot overflow it.
struct PoolBins {
  Var p{"p"}, k{"k"}, j{"j"};
  // (j, p, k) -> x start (j = 0), x end (1), y start (2), y end (3) of bin p along that axis.
  // One int Func: its values are loop bounds (RDom::where), which Halide 14 cannot take from
  // Tuple elements.
  Func bounds{"bin_bounds"};
  Func batch{"batch"};

  void define(const Func& rois, Expr scale, Expr PH, Expr PW, Expr H, Expr W, Expr N) {
    auto axis_bound = [&](int f0, int f1, Expr pooled, Expr size, bool end) {
      Expr start = round_half_away(cast<double>(rois(f0, k)) * scale);
      Expr stop = round_half_away(cast<double>(rois(f1, k)) * scale);
      Expr bin = max(stop - start, f64(1.0)) / cast<double>(pooled);
      Expr v = (end ? ceil(cast<double>(p + 1) * bin) : floor(cast<double>(p) * bin)) + start;
      return cast<int>(strict_float(clamp(v, f64(0.0), cast<double>(size - 1))));
    };
    bounds(j, p, k) = select(j == 0, axis_bound(1, 3, PW, W, false), j == 1, axis_bound(1, 3, PW, W, true),
                             j == 2, axis_bound(2, 4, PH, H, false), axis_bound(2, 4, PH, H, true));
    batch(k) = clamp(cast<int>(rois(0, k)), 0, N - 1);
  }

  Expr x0(Expr pw, Expr kk) const { return bounds(0, pw, kk); }
  Expr x1(Expr pw, Expr kk) const { return bounds(1, pw, kk); }
  Expr y0(Expr ph, Expr kk) const { return bounds(2, ph, kk); }
  Expr y1(Expr ph, Expr kk) const { return bounds(3, ph, kk); }

  // Pixels of bin (ph, pw) of roi kk (as float), 0 for an empty bin; formed in double, where
  // the product of two int extents is exact.
  Expr area(Expr pw, Expr ph, Expr kk) const {
    Expr w = max(x1(pw, kk) - x0(pw, kk), 0), h = max(y1(ph, kk) - y0(ph, kk), 0);
    return cast<float>(cast<double>(w) * cast<double>(h));
  }

  // The pixels of bin (ph, pw) of roi kk, row-major (x inner) as in the reference: the whole
  // image, narrowed by the predicate, which Halide turns into the loops' own bounds.
  RDom bin(Expr pw, Expr ph, Expr kk, Expr W, Expr H, const std::string& name) const {
    RDom r(0, W, 0, H, name);
    r.where(r.x >= x0(pw, kk) && r.x < x1(pw, kk) && r.y >= y0(ph, kk) && r.y < y1(ph, kk));
    return r;
  }

  // The bounds of every roi up front (small), shared by every channel.
  void schedule_cpu() { bounds.compute_root().bound(j, 0, 4).unroll(j); }

  // On the GPU target, computed on the host and copied to the device (a few ints per roi):
  // Halide's PTX code generator fuses every multiply and add into an FMA (its LLVM target
  // options ask for fast FP-op fusion whatever strict_float says), and a fused x * s - trunc(x * s)
  // rounds a product that lies just off n + 0.5 the other way, moving a whole bin (measured on
  // an H100: 3 of 1000 campaign cases). The host's code keeps strict_float.
  void schedule_gpu() { bounds.compute_root().bound(j, 0, 4).unroll(j); }
};

// Both forward kernels' signature (the glue calls either with the same buffers): input as
// (x, y, pw, ph, c, n), rois, the scale, output as (pw, ph, c, k).
#define OPLAB_PS_ROI_POOL_FORWARD_IO            \
  Input<Buffer<float>> input{"input", 6};       \
  Input<Buffer<float>> rois{"rois", 2};         \
  Input<double> spatial_scale{"spatial_scale"}; \
  Output<Buffer<float>> output{"output", 4};

class PsRoiPoolForward : public Generator<PsRoiPoolForward> {
 public:
  OPLAB_PS_ROI_POOL_FORWARD_IO

  Var pw{"pw"}, ph{"ph"}, c{"c"}, k{"k"}, cl{"cl"}, cb{"cb"};
  PoolBins b;
  Func acc{"acc"}, res{"res"};
  ChannelBlocked blk;
  RDom r;

  void generate() {
    const int lanes = ps_channel_lanes(get_target());
    const PsExtents e = ps_extents(input);
    b.define(rois, spatial_scale, e.PH, e.PW, e.H, e.W, e.N);
    blk = channel_blocked(input, e.Co, "blk", lanes, {pw, ph});
    r = b.bin(pw, ph, k, e.W, e.H, "r");
    acc(cl, k, pw, ph, cb) = 0.0f;
    acc(cl, k, pw, ph, cb) += blk(cl, r.x, r.y, cb, pw, ph, b.batch(k));
    Expr area = b.area(pw, ph, k);
    res(cl, k, pw, ph, cb) = select(area > 0.0f, acc(cl, k, pw, ph, cb) / area, 0.0f);
    output(pw, ph, c, k) = res(c % lanes, k, pw, ph, c / lanes);
  }

  void schedule() {
    promise_zero_mins(input), promise_zero_mins(rois), promise_zero_mins(output);
    // The bins end at W - 1 (exclusive, clamped: the last column is never read), so the block
    // copied for a task is W - 1 pixels wide, and its tiles of 16 (which shift the last one
    // inwards) need 16 of those: at W = 16 the last tile would start at x = -1 (caught by the
    // campaign once it drew images 16 wide, the kernel path of ps_roi_pool.cpp's glue).
    schedule_ps_forward(output, res, acc, r, blk, b, input.dim(0).extent() - 1, get_target().has_gpu_feature());
  }
};

// The same forward reading each bin in place, no channel blocks: output (pw, ph, c, k) sums its
// rectangle of plane (pw, ph, c) of image batch(k), row-major as the reference, and divides.
// The blocked kernel above copies the whole feature map (both images, every channel) into
// channels-last blocks: the right trade when the rois' bins together cover the map several
// times over (R-FCN's 300 rois), the wrong one when they cover a fraction of it, as
// torchvision's one thread reading bins in place shows at 75 rois on the reduced bench shape.
// The glue picks by the bytes each would move (glue/ps_roi_pool.cpp).
//  * CPU: a task per roi, its bins in output order; a bin's rows are scalar loads (a few
//    pixels each), its lines the only memory the kernel touches.
//  * GPU: one thread per output element, as the blocked kernel's GPU schedule.
class PsRoiPoolForwardInPlace : public Generator<PsRoiPoolForwardInPlace> {
 public:
  OPLAB_PS_ROI_POOL_FORWARD_IO

  Var pw{"pw"}, ph{"ph"}, c{"c"}, k{"k"};
  PoolBins b;
  Func acc{"acc"};

  void generate() {
    const PsExtents e = ps_extents(input);
    b.define(rois, spatial_scale, e.PH, e.PW, e.H, e.W, e.N);
    RDom r = b.bin(pw, ph, k, e.W, e.H, "r");
    acc(pw, ph, c, k) = 0.0f;
    acc(pw, ph, c, k) += input(r.x, r.y, pw, ph, c, b.batch(k));
    Expr area = b.area(pw, ph, k);
    output(pw, ph, c, k) = select(area > 0.0f, acc(pw, ph, c, k) / area, 0.0f);
  }

  void schedule() {
    promise_zero_mins(input), promise_zero_mins(rois), promise_zero_mins(output);
    if (get_target().has_gpu_feature()) {
      schedule_roi_forward_gpu(output, acc, b);
      return;
    }
    b.schedule_cpu();
    output.parallel(k);
    acc.compute_at(output, pw);
  }
};

// grad_input: gout(k, c, ph, pw) / area to every pixel of bin (ph, pw) of roi k in plane
// (pw, ph, c) of image batch(k), rois in order, pixels row-major.
//  * CPU: per plane (pw, ph, c), every image's (a task per (ph, c), its planes in turn): it
//    zeroes a scratch plane, adds every roi's bin of it, rois in order, and copies it into
//    grad_input while it is in cache. Only that task writes the plane, so no two writes
//    collide, and each pixel's sum is in roi order, as before. A bin adds one value to a
//    rectangle of its plane, so nothing is gained by blocking channels: the channels-last
//    blocks ps_roi_align's corners need (ps_roi_blocks.h), which this kernel used too, zeroed
//    and transposed a copy of the whole gradient: 0.7-0.95x torchvision's speed on the reduced
//    bench shape (7 output channels; 1.7x faster now, the same on the standard one).
//    Zeroing every plane first and adding the bins after was slower still (the adds missed
//    the cache): hence the plane per task.
//  * GPU: straight into grad_input with atomic adds, one thread per bin (a 2-D block of
//    pw x ph), one block per (channel, roi): the bins of overlapping rois share pixels.
class PsRoiPoolBackward : public Generator<PsRoiPoolBackward> {
 public:
  Input<Buffer<float>> input{"input", 6};  // its shape only (never read, never copied to a GPU)
  Input<Buffer<float>> rois{"rois", 2};
  Input<Buffer<float>> grad_output{"grad_output", 4};
  Input<double> spatial_scale{"spatial_scale"};
  Output<Buffer<float>> grad_input{"grad_input", 6};  // (x, y, pw, ph, c, n)

  Var pw{"pw"}, ph{"ph"}, c{"c"}, k{"k"}, cl{"cl"}, cb{"cb"};
  PoolBins b;
  Func target{"target"}, gblk{"gblk"}, goutb{"goutb"}, plane{"plane"};
  RDom r;
  bool cpu = true;

  void generate() {
    cpu = !get_target().has_gpu_feature();
    const PsExtents e = ps_extents(input);
    b.define(rois, spatial_scale, e.PH, e.PW, e.H, e.W, e.N);
    // The area of a bin that is scattered at all is >= 1.
    Expr area = max(b.area(pw, ph, k), 1.0f);
    // r: pixel x (innermost), y, then roi k; the bin is the plane's own (pw, ph).
    r = RDom({{0, e.W}, {0, e.H}, {0, grad_output.dim(3).extent()}}, "r");
    r.where(r[0] >= b.x0(pw, r[2]) && r[0] < b.x1(pw, r[2]) && r[1] >= b.y0(ph, r[2]) && r[1] < b.y1(ph, r[2]));
    Var x{"x"}, y{"y"}, n{"n"};
    // What a bin adds to each of its pixels, and where (its image): on the GPU realised where
    // it is scattered (schedule_ps_scatter), on the CPU once per (roi, plane).
    target(pw, ph, c, k) = Tuple(b.batch(k), grad_output(pw, ph, c, k) / area);
    Tuple t = target(pw, ph, c, r[2]);
    if (!cpu) {
      grad_input(x, y, pw, ph, c, n) = 0.0f;
      grad_input(r[0], r[1], pw, ph, c, t[0]) += t[1];
      return;
    }
    // The plane of every image, accumulated where its task writes it (in cache), then copied.
    plane(x, y, n, pw, ph, c) = 0.0f;
    plane(r[0], r[1], t[0], pw, ph, c) += t[1];
    grad_input(x, y, pw, ph, c, n) = plane(x, y, n, pw, ph, c);
  }

  void schedule() {
    promise_zero_mins(input), promise_zero_mins(rois), promise_zero_mins(grad_output), promise_zero_mins(grad_input);
    if (!cpu) {
      schedule_ps_scatter(grad_input, gblk, goutb, target, r, 2, false, b, input.dim(0).extent(), input.dim(4).extent(), true);
      return;
    }
    b.schedule_cpu();
    Var x = grad_input.args()[0], y = grad_input.args()[1], n = grad_input.args()[5], t{"t"};
    const int vec = natural_vector_size<float>();
    // A task per (ph, c), its planes (every image's) one pw at a time: zeroed, its bins added,
    // rois in order, and copied out, all while it is in cache (zeroing every plane first and
    // adding after, the adds missed). With a task per plane, pw fused into the task index,
    // Halide sized the scratch for every pw (7 planes, each task writing its own, past L1):
    // 0.67-0.74 ms against 0.59-0.62 now on the reduced bench shape (one thread, the kernel
    // alone; the same bits).
    grad_input.reorder(x, y, n, pw, ph, c).fuse(ph, c, t).parallel(t).vectorize(x, vec, TailStrategy::GuardWithIf);
    plane.compute_at(grad_input, pw).vectorize(plane.args()[0], vec, TailStrategy::GuardWithIf);
    plane.update().reorder(r[0], r[1], r[2]);
    target.compute_at(plane, r[2]);
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(PsRoiPoolForward, ps_roi_pool_forward)
HALIDE_REGISTER_GENERATOR(PsRoiPoolForwardInPlace, ps_roi_pool_forward_in_place)
HALIDE_REGISTER_GENERATOR(PsRoiPoolBackward, ps_roi_pool_backward)
