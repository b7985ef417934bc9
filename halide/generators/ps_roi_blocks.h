#pragma once
// Pieces shared by the ps_roi_align and ps_roi_pool generators (SPEC §11): the feature map in
// channel blocks, the gradient they scatter into, and the schedules (CPU and GPU) of the
// forward and of the grad_input scatter.
//
// Both kernels take the feature map (and its gradient) as the 6-D view (x, y, pw, ph, c, n) of
// [N, C, H, W] read as [N, Co, PH, PW, H, W] (the glue's ps_roi_view.h): the plane that bin
// (ph, pw) of output channel c reads, channel (c * PH + ph) * PW + pw, is indexed by the bin
// itself, so the algorithms need no channel arithmetic.
//
// On the CPU the output channels of one bin are processed in blocks of kPsLanes, as roi_align
// processes its channels in blocks (roi_sampling.h): the Co planes of a bin are read at the
// same positions for every channel, so a task owning (bin, block) copies its planes (both
// images) once into blk(cl, x, y, cb, pw, ph, n), channels innermost, and every sample of
// every roi is then one dense vector load (in the backward, one dense read-modify-write of the
// gradient in the same layout). Read directly, each sample would be a load per lane, the lanes
// PH * PW planes apart: about twice the time at the R-FCN shape, although each plane is read
// by one bin of each roi only (about one sample per pixel there), which is what the copy
// costs. Blocks of 8 rather than roi_align's 16: R-FCN's Co = 21 fills 24 lanes rather than 32,
// which the copy (and the backward's zeroing and transpose) pays for lane by lane. On the GPU
// a block is one channel wide and the blocked Funcs are index arithmetic.
#include <vector>

#include "Halide.h"
#include "roi_sampling.h"

namespace oplab_halide {

// Output channels per block on the CPU; 1 on the GPU (a thread computes one channel).
constexpr int kPsLanes = oplab_widths::kPsLanes;
inline int ps_channel_lanes(const Halide::Target& t) { return t.has_gpu_feature() ? 1 : kPsLanes; }

// The extents of the 6-D view (x, y, pw, ph, c, n) of a feature map (or its gradient).
struct PsExtents {
  Halide::Expr W, H, PW, PH, Co, N;
};
template <class B>
PsExtents ps_extents(const B& b) {
  return {b.dim(0).extent(), b.dim(1).extent(), b.dim(2).extent(), b.dim(3).extent(), b.dim(4).extent(),
          b.dim(5).extent()};
}

// The blocks are channel_blocked(input, Co, "blk", lanes, {pw, ph}) (roi_sampling.h):
// blk(cl, x, y, cb, pw, ph, n), copied at a task by schedule_blocked_copy with vector_rows
// false: tiles of 16 pixels by the block's lanes staged in `rows`, but the rows unrolled rather
// than vectorised. A task's block is a loop index derived from the fused task (bin, block), so
// Halide cannot prove a full block's lanes are below Co, and with a vectorised lane the clamped
// channel index makes the tile one wide gather (scalarised: tried, it cost 40% of the
// forward); unrolled, each row is one dense load whose channel is clamped on its own.

// The CPU forward. res(cl, k, pw, ph, cb) is the result of lane cl of block cb at bin (ph, pw)
// of roi k, computed from acc(cl, k, pw, ph, cb) (updated over r: r.x inner, r.y outer);
// output(pw, ph, c, k) reads it. A task owns one (bin, block): it copies the block's planes,
// then runs every roi over them into its own contiguous slice of res (rois innermost but for
// the lanes). The output is gathered from res in a second parallel pass over rois (about 2%
// of the time): the bins of one roi and channel lie next to each other in the output, so
// tasks owning bins would share its cache lines.
template <class Geometry>
void schedule_ps_forward_cpu(Halide::Func output, Halide::Func res, Halide::Func acc, const Halide::RDom& r,
                             const ChannelBlocked& blk, Geometry& geometry, Halide::Expr W) {
  using namespace Halide;
  Var cl = res.args()[0], k = res.args()[1], pw = res.args()[2], ph = res.args()[3], cb = res.args()[4], t{"t"};
  Var acl = acc.args()[0], ak = acc.args()[1];
  geometry.schedule_cpu();
  res.compute_root().fuse(pw, ph, t).fuse(t, cb, t).parallel(t).vectorize(cl);
  schedule_blocked_copy(blk, LoopLevel(res, t), W, false);
  acc.compute_at(res, t).vectorize(acl);
  acc.update().reorder(acl, r.x, r.y, ak).vectorize(acl);
  output.parallel(output.args()[3]);
}

// The forward schedule of both ops: schedule_roi_forward_gpu (roi_sampling.h) on the GPU,
// schedule_ps_forward_cpu on the CPU.
template <class Geometry>
void schedule_ps_forward(Halide::Func output, Halide::Func res, Halide::Func acc, const Halide::RDom& r,
                         const ChannelBlocked& blk, Geometry& geometry, Halide::Expr W, bool gpu) {
  if (gpu)
    schedule_roi_forward_gpu(output, acc, geometry);
  else
    schedule_ps_forward_cpu(output, res, acc, r, blk, geometry, W);
}

// The gradient of the feature map that both backward kernels scatter into: on the CPU
// gblk(cl, x, y, n, pw, ph, cb), a block of one bin's planes with the channels innermost
// (schedule_ps_scatter_cpu), zeroed, then `scatter` (which adds the op's update definitions),
// then transposed into grad_input(x, y, pw, ph, c, n); on the GPU grad_input itself, zeroed,
// then `scatter`. (Halide takes no update of gblk once grad_input reads it, hence the order.)
template <class Scatter>
void define_ps_gradient(Halide::Func grad_input, Halide::Func gblk, bool cpu, Scatter scatter) {
  using namespace Halide;
  Var x{"x"}, y{"y"}, pw{"pw"}, ph{"ph"}, c{"c"}, n{"n"}, cl{"cl"}, cb{"cb"};
  if (cpu)
    gblk(cl, x, y, n, pw, ph, cb) = 0.0f;
  else
    grad_input(x, y, pw, ph, c, n) = 0.0f;
  scatter();
  if (cpu) grad_input(x, y, pw, ph, c, n) = gblk(c % kPsLanes, x, y, n, pw, ph, c / kPsLanes);
}

// The CPU grad_input. gblk(cl, x, y, n, pw, ph, cb), the gradient of block cb of bin (ph, pw)
// with channels innermost, is zeroed and accumulated (its update: r[0] innermost, the roi
// r[rk] outermost, pure in cl, pw, ph, cb) reading goutb(cl, k, pw, ph, cb), then transposed
// into grad_input(x, y, pw, ph, c, n). A task owns one (ph, block), its bins (pw) in turn, and
// scans every roi into each: race-free without atomics, and the adds of a whole block are one
// dense vector read-modify-write. With pw fused into the task index Halide sized gblk for
// every pw of the row (7 blocks, 1.7 MB at the main job's R-FCN shape, each task writing its
// own: past L2); one pw at a time it is one block (`oplab bench --reduced --shape ps_roi_align
// --threads 1`: 0.84-0.89 ms against 0.69-0.75, standard shape on two threads 3.57 against
// 3.36). The forward's acc, sized the same way, is small: there the change measured nothing.
// The transpose moves tiles of 16 pixels by the block's lanes in registers (the channel split
// guards rather than shifts its last block, so a tile's lanes are the lanes of one block:
// constant offsets, one dense load and a shuffle); a block's guarded lanes (the last block, or
// the only one when there are fewer output channels than a block) store vectors of 16
// pixels, each assembled lane by lane; narrow images take a plain loop.
// Measured at the main job's R-FCN shape (7 output channels, one partial block; `oplab bench
// --reduced --shape ps_roi_align --threads 1`): 1.38 ms when the tiles needed a full block
// (the plain loop, a scalar load and store per element, most of the kernel's samples), 0.64
// ms now.
inline void schedule_ps_scatter_cpu(Halide::Func grad_input, Halide::Func gblk, Halide::Func goutb, const Halide::RDom& r,
                                    int rk, bool corners, Halide::Expr W, Halide::Expr Co) {
  using namespace Halide;
  Var x = grad_input.args()[0], y = grad_input.args()[1], pw = grad_input.args()[2], ph = grad_input.args()[3],
      c = grad_input.args()[4], n = grad_input.args()[5];
  Var cb{"cb"}, cl{"cl"}, xo{"xo"}, xi{"xi"}, t{"t"};
  grad_input.specialize(W >= kLanes)
      .split(c, cb, cl, kPsLanes, TailStrategy::GuardWithIf)
      .split(x, xo, xi, kLanes, TailStrategy::ShiftInwards)
      .reorder(xi, cl, xo, y, n, pw, ph, cb)
      .fuse(ph, cb, t)
      .vectorize(xi)
      .vectorize(cl)
      .parallel(t);
  grad_input.split(c, cb, cl, kPsLanes, TailStrategy::GuardWithIf)
      .reorder(cl, x, y, n, pw, ph, cb)
      .fuse(ph, cb, t)
      .parallel(t);
  Var gcl = gblk.args()[0];
  gblk.compute_at(grad_input, pw).vectorize(gcl);
  // The lanes innermost, then r in its own order (all of it named: reordering the lanes with
  // r[0] alone would swap r[0] into the lanes' outer slot, outside every roi).
  std::vector<VarOrRVar> order{gcl};
  for (int i = 0; i < r.dimensions(); ++i) order.push_back(r[i]);
  Stage update = gblk.update();
  update.reorder(order).vectorize(gcl);
  if (corners) update.unroll(r[0]);  // a sample's four corners
  goutb.compute_at(gblk, r[rk]).vectorize(goutb.args()[0]);
}

// The grad_input schedule of both ops. r is the scatter's domain, the roi r[rk] outermost; the
// bin is the plane's own (pw, ph). With `corners` (ps_roi_align) r[0] is the corner of a sample
// and target(q, ix, iy, pw, ph, k) gives each corner (roi_corner_target); without (ps_roi_pool)
// target(pw, ph, c, k) is what a bin adds to each of its pixels.
//  * CPU: schedule_ps_scatter_cpu.
//  * GPU: straight into grad_input with atomic adds, one thread per bin (a 2-D block of
//    pw x ph), one block per (channel, roi): the bins of overlapping rois share pixels. The
//    target is realised where it is scattered (a sample's four corners unrolled), so that the
//    atomic update's store and its implicit load index with the same loaded values (else
//    Halide 14 falls back to a compare-and-swap loop).
template <class Geometry>
void schedule_ps_scatter(Halide::Func grad_input, Halide::Func gblk, Halide::Func goutb, Halide::Func target,
                         const Halide::RDom& r, int rk, bool corners, Geometry& geometry, Halide::Expr W,
                         Halide::Expr Co, bool gpu) {
  using namespace Halide;
  if (!gpu) {
    geometry.schedule_cpu();
    schedule_ps_scatter_cpu(grad_input, gblk, goutb, r, rk, corners, W, Co);
    return;
  }
  Var x = grad_input.args()[0], y = grad_input.args()[1], pw = grad_input.args()[2], ph = grad_input.args()[3],
      c = grad_input.args()[4], n = grad_input.args()[5];
  Var t{"t"}, tb{"tb"}, ti{"ti"};
  grad_input.fuse(x, y, t).fuse(t, pw, t).fuse(t, ph, t).fuse(t, c, t).fuse(t, n, t);
  grad_input.gpu_tile(t, tb, ti, 256, TailStrategy::GuardWithIf);
  std::vector<VarOrRVar> order;
  for (int i = 0; i < rk; ++i) order.push_back(r[i]);
  for (VarOrRVar v : {VarOrRVar(pw), VarOrRVar(ph), VarOrRVar(c), VarOrRVar(r[rk])}) order.push_back(v);
  Stage update = grad_input.update();
  update.atomic().reorder(order);
  if (corners) update.unroll(r[0]);
  update.gpu_threads(pw, ph).gpu_blocks(c, r[rk]);
  if (corners)
    target.compute_at(grad_input, r[1]).unroll(target.args()[0]);
  else
    target.compute_at(grad_input, pw);
  geometry.schedule_gpu();
}

}  // namespace oplab_halide
