#pragma once
// Pieces shared by the ps_roi_align and ps_roi_pool generators (SPEC §11): the feature map in
// channel blocks and the CPU schedules of the forward and of the grad_input scatter.
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
constexpr int kPsLanes = 8;
inline int ps_channel_lanes(const Halide::Target& t) { return t.has_gpu_feature() ? 1 : kPsLanes; }

// blk(cl, x, y, cb, pw, ph, n) = input(x, y, pw, ph, cb * lanes + cl, n), lanes past the last
// output channel reading the last one (their results are discarded); rows is the same with x
// innermost, the staging that schedule_ps_blocked_copy reads the planes through.
inline ChannelBlocked ps_channel_blocked(const Halide::Func& input, Halide::Expr Co, int lanes) {
  using namespace Halide;
  Var cl{"cl"}, x{"x"}, y{"y"}, cb{"cb"}, pw{"pw"}, ph{"ph"}, n{"n"};
  ChannelBlocked b{Func{"blk_rows"}, Func{"blk"}};
  b.rows(x, cl, y, cb, pw, ph, n) = input(x, y, pw, ph, min(cb * lanes + cl, Co - 1), n);
  b.blk(cl, x, y, cb, pw, ph, n) = b.rows(x, cl, y, cb, pw, ph, n);
  return b;
}

// schedule_blocked_copy (roi_sampling.h) for the blocks of the position-sensitive ops: tiles
// of 16 pixels by the block's lanes staged in `rows`, but the rows unrolled rather than
// vectorised. A task's block is a loop index derived from the fused task (bin, block), so
// Halide cannot prove a full block's lanes are below Co, and with a vectorised lane the clamped
// channel index makes the tile one wide gather (scalarised: tried, it cost 40% of the
// forward); unrolled, each row is one dense load whose channel is clamped on its own.
inline void schedule_ps_blocked_copy(const ChannelBlocked& b, const Halide::LoopLevel& at, Halide::Expr W) {
  using namespace Halide;
  Func blk = b.blk, rows = b.rows;
  Var cl = blk.args()[0], x = blk.args()[1], xo{"xo"}, xi{"xi"};
  Var rx = rows.args()[0], rcl = rows.args()[1];
  blk.compute_at(at);
  blk.specialize(W >= kLanes).split(x, xo, xi, kLanes, TailStrategy::ShiftInwards).reorder(cl, xi, xo).vectorize(cl).vectorize(xi);
  blk.split(x, xo, xi, 1).reorder(cl, xi, xo).vectorize(cl);
  rows.compute_at(blk, xo);
  rows.specialize(W >= kLanes).vectorize(rx).unroll(rcl);
}

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
  schedule_ps_blocked_copy(blk, LoopLevel(res, t), W);
  acc.compute_at(res, t).vectorize(acl);
  acc.update().reorder(acl, r.x, r.y, ak).vectorize(acl);
  output.parallel(output.args()[3]);
}

// The CPU grad_input. gblk(cl, x, y, n, pw, ph, cb), the gradient of block cb of bin (ph, pw)
// with channels innermost, is zeroed and accumulated (its update: r[0] innermost, the roi
// r[rk] outermost, pure in cl, pw, ph, cb) reading goutb(cl, k, pw, ph, cb), then transposed
// into grad_input(x, y, pw, ph, c, n). A task owns one (bin, block) and scans every roi into it:
// race-free without atomics, and the adds of a whole block are one dense vector
// read-modify-write. The transpose moves tiles of 16 pixels by the block's lanes in registers
// (the channel split guards rather than shifts its last block, so a tile's lanes are the lanes
// of one block: constant offsets, one dense load and a shuffle); narrow images or fewer
// channels than a block take a plain loop.
inline void schedule_ps_scatter_cpu(Halide::Func grad_input, Halide::Func gblk, Halide::Func goutb, const Halide::RDom& r,
                                    int rk, bool unroll_inner, Halide::Expr W, Halide::Expr Co) {
  using namespace Halide;
  Var x = grad_input.args()[0], y = grad_input.args()[1], pw = grad_input.args()[2], ph = grad_input.args()[3],
      c = grad_input.args()[4], n = grad_input.args()[5];
  Var cb{"cb"}, cl{"cl"}, xo{"xo"}, xi{"xi"}, t{"t"};
  grad_input.specialize(W >= kLanes && Co >= kPsLanes)
      .split(c, cb, cl, kPsLanes, TailStrategy::GuardWithIf)
      .split(x, xo, xi, kLanes, TailStrategy::ShiftInwards)
      .reorder(xi, cl, xo, y, n, pw, ph, cb)
      .fuse(pw, ph, t)
      .fuse(t, cb, t)
      .vectorize(xi)
      .vectorize(cl)
      .parallel(t);
  grad_input.split(c, cb, cl, kPsLanes, TailStrategy::GuardWithIf)
      .reorder(cl, x, y, n, pw, ph, cb)
      .fuse(pw, ph, t)
      .fuse(t, cb, t)
      .parallel(t);
  Var gcl = gblk.args()[0];
  gblk.compute_at(grad_input, t).vectorize(gcl);
  // The lanes innermost, then r in its own order (all of it named: reordering the lanes with
  // r[0] alone would swap r[0] into the lanes' outer slot, outside every roi).
  std::vector<VarOrRVar> order{gcl};
  for (int i = 0; i < r.dimensions(); ++i) order.push_back(r[i]);
  Stage update = gblk.update();
  update.reorder(order).vectorize(gcl);
  if (unroll_inner) update.unroll(r[0]);
  goutb.compute_at(gblk, r[rk]).vectorize(goutb.args()[0]);
}

}  // namespace oplab_halide
