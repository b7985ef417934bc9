// grid_sample in float32 (SPEC §12), 5-D input: the forward, grad_input (a scatter) and
// grad_grid (a gather over the channels). Buffers, dims reversed from the tensors:
//   input (w, h, d, c, n)   grid (k, x, y, z, n), k = 0 x, 1 y, 2 z
//   output, grad_output (x, y, z, c, n)
// Parameters: mode (0 bilinear, i.e. trilinear, 1 nearest; bicubic is 4-D only), padding
// (0 zeros, 1 border, 2 reflection), align_corners (0, 1). Each axis' taps are the 4-D
// kernels' (grid_sample_taps.h); a position reads the product of its three axes' taps (up to
// 2 x 2 x 2), every sum float32.
#include "grid_sample_taps.h"
#include "kernel_widths.h"
#include "task_scratch.h"

using namespace Halide;
using oplab_scratch::kTaskScratch;
using namespace oplab_grid;

namespace {

#define OPLAB_GRID3_INPUTS                         \
  Input<Buffer<float>> input{"input", 5};          \
  Input<Buffer<float>> grid{"grid", 5};            \
  Input<int> mode{"mode", 0, 0, 1};                \
  Input<int> padding{"padding", 0, 0, 2};          \
  Input<int> align_corners{"align_corners", 0, 0, 1};

// The three axes' taps of every grid position, t?(k, x, y, z, n), k = 0, 1: along W, H, D.
template <class In, class Grid>
void define_taps3(Func& tx, Func& ty, Func& tz, const In& input, const Grid& grid, Expr mode, Expr padding, Expr ac) {
  Var k{"k"}, x{"x"}, y{"y"}, z{"z"}, n{"n"};
  tx(k, x, y, z, n) = axis_tap(grid(0, x, y, z, n), input.dim(0).extent(), k, mode, padding, ac, 2);
  ty(k, x, y, z, n) = axis_tap(grid(1, x, y, z, n), input.dim(1).extent(), k, mode, padding, ac, 2);
  tz(k, x, y, z, n) = axis_tap(grid(2, x, y, z, n), input.dim(2).extent(), k, mode, padding, ac, 2);
}

// Taps per axis of a mode: 2 (bilinear) or 1 (nearest).
Expr taps3_of(Expr mode) { return select(mode == 0, 2, 1); }

// CPU: an axis' taps specialised on mode and padding, so each combination forms only its own
// coordinates (the general expression carries every padding's arithmetic in double).
void specialize_taps3(Func& t, Expr mode, Expr padding) {
  for (int m = 0; m < 2; ++m)
    for (int p = 0; p < 3; ++p) t.specialize(mode == m && padding == p);
}

// The GPU layout of a pure 5-D definition f(a, b, s, c, n): 16 x 16 of (a, b) per block, a
// block per tile of a slice s of a channel c of an image n. Returns the innermost thread Var.
Var gpu_tile_slices(Func f, const Var& a, const Var& b, const Var& s, const Var& c, const Var& n) {
  Var ao{"ao"}, bo{"bo"}, ai{"ai"}, bi{"bi"}, cn{"cn"}, scn{"scn"};
  f.split(a, ao, ai, 16, TailStrategy::GuardWithIf)
      .split(b, bo, bi, 16, TailStrategy::GuardWithIf)
      .fuse(c, n, cn)
      .fuse(s, cn, scn)
      .reorder(ai, bi, ao, bo, scn)
      .gpu_blocks(ao, bo, scn)
      .gpu_threads(ai, bi);
  return ai;
}

// out(x, y, z, c, n) = sum over the taps (z outer, x inner) of wz * wy * wx * input, a tap
// outside reading 0, in tap order without fused multiply-adds (strict_float) on every path.
//  * CPU: channels-last, as the 4-D forward. Per (image, block of channels) the block is copied
//    to in_cl(ci, w, h, d) so that a tap of a position reads the block's channels as one dense
//    vector, then a task per (row, slice): the row's taps (specialised on mode and padding),
//    each tap triple's weight wz * wy * wx, the sums for the block's channels, and the row
//    written transposed. The copy has one voxel more along each axis, zeros, where an axis'
//    tap outside the image is sent: such a tap reads 0 and its weight is 0, so it adds +0 as
//    the all-ones mask ANDed with each product did (the same bits), without the mask's load
//    and AND per tap (docs/bench/2026-12-08-cpu.md: 10-25% faster on one thread).
//    Blocks are 16 channels (a vector), or 4 for 4 channels or fewer: a 16-lane block of a
//    4-channel volume would copy and read four times its bytes. What it replaced vectorised
//    over positions and read each tap of each channel a float at a time (LLVM extracts the
//    lanes' indices and loads them one by one): the bench's reduced 5-D shape (4 channels)
//    10.2 ms, behind the 3x target against torch's 25.8.
//  * CPU with channels_last = false (the glue's choice for inputs too large to copy and sparse
//    grids, grid_sample_path.h): a task per (row, slice, image); taps once per row; channels in
//    turn, positions vectorised, each tap gathered from its plane. Same sums, same order.
//  * GPU: a thread per (position, channel), 16 x 16 positions of a slice per block.
class GridSample3dForward : public Generator<GridSample3dForward> {
 public:
  GeneratorParam<bool> channels_last{"channels_last", true};
  OPLAB_GRID3_INPUTS
  Output<Buffer<float>> output{"output", 5};

  Var x{"x"}, y{"y"}, z{"z"}, c{"c"}, n{"n"}, w{"w"}, h{"h"}, d{"d"}, ci{"ci"}, co{"co"}, kx{"kx"}, ky{"ky"}, kz{"kz"};
  Func tx{"tx"}, ty{"ty"}, tz{"tz"}, acc{"acc"}, in_cl{"in_cl"}, pw{"pw"};
  RDom r;

  void generate() {
    define_taps3(tx, ty, tz, input, grid, mode, padding, align_corners);
    if (get_target().has_gpu_feature() || !channels_last) {
      Expr T = taps3_of(mode);
      r = RDom({{0, T}, {0, T}, {0, T}}, "r");  // (kx, ky, kz)
      FuncRef a = tx(r[0], x, y, z, n), b = ty(r[1], x, y, z, n), e = tz(r[2], x, y, z, n);
      Expr on = Expr(a[kValid]) * Expr(b[kValid]) * Expr(e[kValid]) != 0.0f;
      Expr v = input(a[kIndex], b[kIndex], e[kIndex], c, n);
      acc(x, y, z, c, n) = 0.0f;
      Expr sum = acc(x, y, z, c, n) + select(on, Expr(e[kW]) * Expr(b[kW]) * Expr(a[kW]) * v, 0.0f);
      acc(x, y, z, c, n) = get_target().has_gpu_feature() ? sum : strict_float(sum);
      output(x, y, z, c, n) = acc(x, y, z, c, n);
      return;
    }
    Expr C = input.dim(3).extent(), B = block_lanes(C);
    Expr W = input.dim(0).extent(), H = input.dim(1).extent(), D = input.dim(2).extent();
    // Channel co * B + ci; the last block repeats the last channel (never written out). One
    // more voxel along each axis, w = W, h = H or d = D, holds zeros: a tap outside the image
    // reads there (its axis index sent past the end, below), so no mask is applied per tap.
    in_cl(ci, w, h, d, co, n) =
        select(w < W && h < H && d < D, input(min(w, W - 1), min(h, H - 1), min(d, D - 1), min(co * B + ci, C - 1), n), 0.0f);
    // An axis' index, past the end where the tap reads nothing.
    Var k{"k"};
    auto redirect = [&](Func& t, Func& raw, Expr S) {
      FuncRef f = raw(k, x, y, z, n);
      t(k, x, y, z, n) = Tuple(select(Expr(f[kValid]) != 0.0f, Expr(f[kIndex]), S), f[kValid], f[kW], f[kDw]);
    };
    Func rx{"rx"}, ry{"ry"}, rz{"rz"};
    std::swap(rx, tx), std::swap(ry, ty), std::swap(rz, tz);
    tx = Func("tx_cl"), ty = Func("ty_cl"), tz = Func("tz_cl");
    redirect(tx, rx, W), redirect(ty, ry, H), redirect(tz, rz, D);
    // Each axis' weight is 0 where its tap reads nothing, and finite, so the product of a tap
    // outside is +0 and adds +0 * 0 = +0, as the mask did: the same bits.
    pw(kx, ky, kz, x, y, z, n) = tz(kz, x, y, z, n)[kW] * ty(ky, x, y, z, n)[kW] * tx(kx, x, y, z, n)[kW];
    // The taps of a mode with T per axis, unrolled, z outer and x inner, as the plain RDom.
    auto sum = [&](int T) {
      Expr e = 0.0f;
      for (int k = 0; k < T; ++k)
        for (int j = 0; j < T; ++j)
          for (int i = 0; i < T; ++i) {
            Expr v = in_cl(ci, tx(i, x, y, z, n)[kIndex], ty(j, x, y, z, n)[kIndex], tz(k, x, y, z, n)[kIndex], co, n);
            e = e + pw(i, j, k, x, y, z, n) * v;
          }
      return strict_float(e);
    };
    acc(ci, x, co, y, z, n) = select(mode == 0, sum(2), sum(1));
    output(x, y, z, c, n) = acc(c % B, x, c / B, y, z, n);
  }

  // Channels per block: a vector's width (kWidestFloatVector where AVX-512 runs), or
  // kGridNarrowScatterLanes for that many channels or fewer.
  Expr block_lanes(Expr C) const {
    return select(C <= oplab_widths::kGridNarrowScatterLanes, oplab_widths::kGridNarrowScatterLanes,
                  natural_vector_size<float>());
  }

  void schedule() {
    promise_zero_mins(input, grid, output);
    if (get_target().has_gpu_feature()) {
      acc.compute_at(output, gpu_tile_slices(output, x, y, z, c, n));
      return;
    }
    const int vec = natural_vector_size<float>();
    Var yz{"yz"}, yzn{"yzn"};
    if (!channels_last) {
      output.reorder(x, c, y, z, n)
          .fuse(y, z, yz)
          .fuse(yz, n, yzn)
          .parallel(yzn)
          .vectorize(x, vec, TailStrategy::GuardWithIf);
      acc.compute_at(output, c).store_in(kTaskScratch).vectorize(x, vec, TailStrategy::GuardWithIf);
      acc.update().reorder(x, r[0], r[1], r[2]).vectorize(x, vec, TailStrategy::GuardWithIf);
      for (Func* t : {&tx, &ty, &tz}) {
        row_taps_unrolled_at(*t, LoopLevel(output, yzn), vec, 2);
        specialize_taps3(*t, mode, padding);
      }
      return;
    }
    const int narrow = oplab_widths::kGridNarrowScatterLanes;
    Expr C = input.dim(3).extent();
    Var xo{"xo"}, xi{"xi"}, oci{"oci"}, oco{"oco"}, hd{"hd"};
    // A task per row of a slice, within a block of channels of an image (the block's copy
    // made first, its slices in parallel).
    auto blocks = [&](Stage s, int B) {
      s.split(x, xo, xi, vec, TailStrategy::GuardWithIf)
          .split(c, oco, oci, B, TailStrategy::GuardWithIf)
          .reorder(xi, xo, oci, y, z, oco, n)
          .vectorize(xi)
          .fuse(y, z, yz)
          .parallel(yz);
    };
    blocks(output.specialize(C <= narrow), narrow);
    blocks(output, vec);
    in_cl.compute_at(output, oco).fuse(h, d, hd).parallel(hd);
    in_cl.specialize(C <= narrow).vectorize(ci, narrow);
    in_cl.vectorize(ci, vec);
    acc.compute_at(output, yz).store_in(kTaskScratch);
    for (int m = 0; m < 2; ++m) {
      acc.specialize(C <= narrow && mode == m).vectorize(ci, narrow);
      acc.specialize(mode == m).vectorize(ci, vec);
    }
    for (Func* t : {&tx, &ty, &tz}) {
      row_taps_unrolled_at(*t, LoopLevel(output, yz), vec, 2);
      specialize_taps3(*t, mode, padding);
    }
    // The weights of a row's tap triples, formed once per row (vectorised), read per channel block.
    pw.compute_at(output, yz).store_in(kTaskScratch).reorder_storage(x, kx, ky, kz).reorder(x, kx, ky, kz).vectorize(x, vec, TailStrategy::GuardWithIf);
  }
};

// grad_input: every tap of every position scatters wz * wy * wx * gout to its voxel.
//  * CPU: channels-last, as the 4-D kernel's: a task per (block of kGridScatterLanes
//    channels, image) accumulates into gi_cl(ci, w, h, d), the block's channels of a voxel side
//    by side (one dense vector load, add and store per tap), each row of grad_output
//    transposed the same way first (go_cl), the taps of a row formed where it is scattered
//    (specialised on mode and padding), and the block transposed back into its planes at the
//    end. Lanes are distinct channels and only the task's image writes its block: no two writes
//    collide. Every voxel's sum is in the order of the positions and taps, as the plain scatter
//    it replaced (a gather and a scatter instruction per tap, taps formed for the whole batch
//    up front in fresh tables each call) summed: the same bits.
//  * GPU: a thread per (column of positions, channel) adds atomically.
class GridSample3dGradInput : public Generator<GridSample3dGradInput> {
 public:
  OPLAB_GRID3_INPUTS
  Input<Buffer<float>> grad_output{"grad_output", 5};  // (x, y, z, c, n)
  Output<Buffer<float>> grad_input{"grad_input", 5};   // (w, h, d, c, n)

  Var w{"w"}, h{"h"}, d{"d"}, c{"c"}, n{"n"}, q{"q"}, x{"x"}, y{"y"}, z{"z"}, k{"k"}, ci{"ci"}, co{"co"};
  Func tx{"tx"}, ty{"ty"}, tz{"tz"}, target{"target"}, go_cl{"go_cl"}, gi_cl{"gi_cl"};
  RDom r;

  void generate() {
    define_taps3(tx, ty, tz, input, grid, mode, padding, align_corners);
    // target(q, x, y, z, n): tap q = kx + T ky + T^2 kz of a position: its voxel, weight and
    // whether it reads the image. On the GPU T = 2 (constant: the taps unroll) and target is
    // realised where it is scattered (the native atomic add needs the store's and the
    // implicit load's index to be the same loads); on the CPU T is the mode's taps per axis.
    const bool gpu = get_target().has_gpu_feature();
    Expr T = gpu ? Expr(2) : taps3_of(mode);
    FuncRef a = tx(q % T, x, y, z, n), b = ty((q / T) % T, x, y, z, n), e = tz(q / (T * T), x, y, z, n);
    target(q, x, y, z, n) = Tuple(a[kIndex], b[kIndex], e[kIndex], Expr(e[kW]) * Expr(b[kW]) * Expr(a[kW]),
                                  Expr(a[kValid]) * Expr(b[kValid]) * Expr(e[kValid]));
    r = RDom({{0, T * T * T}, {0, grid.dim(1).extent()}, {0, grid.dim(2).extent()}, {0, grid.dim(3).extent()}}, "r");
    FuncRef t = target(r[0], r[1], r[2], r[3], n);
    if (gpu) {
      grad_input(w, h, d, c, n) = 0.0f;
      grad_input(t[0], t[1], t[2], c, n) += select(Expr(t[4]) != 0.0f, Expr(t[3]) * grad_output(r[1], r[2], r[3], c, n), 0.0f);
      return;
    }
    // Channel co * B + ci; the last block repeats the last channel (never written out).
    Expr C = grad_output.dim(3).extent(), B = block_lanes(C);
    go_cl(ci, x, y, z, co, n) = grad_output(x, y, z, min(co * B + ci, C - 1), n);
    gi_cl(ci, w, h, d, co, n) = 0.0f;
    gi_cl(ci, t[0], t[1], t[2], co, n) +=
        select(Expr(t[4]) != 0.0f, Expr(t[3]) * go_cl(ci, r[1], r[2], r[3], co, n), 0.0f);
    grad_input(w, h, d, c, n) = gi_cl(c % B, w, h, d, c / B, n);
  }

  // Lanes per block: kGridScatterLanes, or kGridNarrowScatterLanes for that many channels or
  // fewer. A block of 8 lanes for 4 channels doubles the block a task scatters into (a
  // random-access working set of 4 MiB at the bench's 32 x 64 x 64 volume, past the cache)
  // and the zeroing and transposing of it; 4 lanes for many channels doubles the tasks, each
  // walking every position's taps (16 channels: 68-74 ms against 47-57 with 8).
  static Expr block_lanes(Expr C) {
    return select(C <= oplab_widths::kGridNarrowScatterLanes, oplab_widths::kGridNarrowScatterLanes,
                  oplab_widths::kGridScatterLanes);
  }

  void schedule() {
    promise_zero_mins(input, grid, grad_output, grad_input);
    RVar rq = r[0], rx = r[1], ry = r[2], rz = r[3];
    if (get_target().has_gpu_feature()) {
      gpu_tile_slices(grad_input, w, h, d, c, n);
      RVar rxo{"rxo"}, rxi{"rxi"};
      grad_input.update()
          .atomic()
          .split(rx, rxo, rxi, 64, TailStrategy::GuardWithIf)
          .reorder(rq, ry, rz, rxi, rxo, c, n)
          .gpu_blocks(rxo, c, n)
          .gpu_threads(rxi)
          .unroll(rq);
      // Each thread walks one column of positions (its rows, slice by slice).
      target.compute_at(grad_input, ry).bound(q, 0, 8).unroll(q);
      return;
    }
    const int vec = natural_vector_size<float>();
    Var cn{"cn"}, wo{"wo"}, wi{"wi"};
    Expr C = grad_output.dim(3).extent();
    const int narrow = oplab_widths::kGridNarrowScatterLanes, wide = oplab_widths::kGridScatterLanes;
    // The same schedule for either block width, each its own specialisation.
    auto blocks = [&](Stage s, int B) {
      s.split(c, co, ci, B, TailStrategy::GuardWithIf)
          .split(w, wo, wi, vec, TailStrategy::GuardWithIf)
          .reorder(wi, wo, h, d, ci, co, n)
          .vectorize(wi)
          .fuse(co, n, cn)
          .parallel(cn);
    };
    blocks(grad_input.specialize(C <= narrow), narrow);
    blocks(grad_input, wide);
    gi_cl.compute_at(grad_input, cn);
    for (Func* f : {&gi_cl, &go_cl}) {
      f->specialize(C <= narrow).vectorize(ci, narrow);
      f->vectorize(ci, wide);
    }
    gi_cl.update().reorder(ci, rq, rx, ry, rz);
    // Per block width, the mode made a constant: the taps per axis fold into the slot
    // arithmetic (q % T and q / T were integer divisions per tap) and bilinear's 8 unroll.
    Stage narrow_blocks = gi_cl.update().specialize(C <= narrow);
    narrow_blocks.vectorize(ci, narrow);
    narrow_blocks.specialize(mode == 0).unroll(rq);
    narrow_blocks.specialize(mode == 1);
    gi_cl.update().vectorize(ci, wide);
    gi_cl.update().specialize(mode == 0).unroll(rq);
    gi_cl.update().specialize(mode == 1);
    go_cl.compute_at(gi_cl, ry).store_in(kTaskScratch);
    for (Func* t : {&tx, &ty, &tz}) {
      row_taps_unrolled_at(*t, LoopLevel(gi_cl, ry), vec, 2);
      specialize_taps3(*t, mode, padding);
    }
  }
};

// grad_grid(k, x, y, z, n): sum over channels and taps of gout * input * the tap weight's
// derivative along axis k (the other two weights as they are); nearest's is 0 (exact, as the
// reference). A gather over the channels: a thread (GPU) or a vector lane (CPU) per position.
class GridSample3dGradGrid : public Generator<GridSample3dGradGrid> {
 public:
  OPLAB_GRID3_INPUTS
  Input<Buffer<float>> grad_output{"grad_output", 5};  // (x, y, z, c, n)
  Output<Buffer<float>> grad_grid{"grad_grid", 5};     // (k, x, y, z, n)

  Var k{"k"}, x{"x"}, y{"y"}, z{"z"}, n{"n"};
  Func tx{"tx"}, ty{"ty"}, tz{"tz"}, sums{"sums"};
  RDom r;

  void generate() {
    define_taps3(tx, ty, tz, input, grid, mode, padding, align_corners);
    Expr T = taps3_of(mode);
    r = RDom({{0, T}, {0, T}, {0, T}, {0, input.dim(3).extent()}}, "r");  // (kx, ky, kz, c)
    FuncRef a = tx(r[0], x, y, z, n), b = ty(r[1], x, y, z, n), e = tz(r[2], x, y, z, n);
    Expr on = Expr(a[kValid]) * Expr(b[kValid]) * Expr(e[kValid]) != 0.0f;
    Expr v = select(on, input(a[kIndex], b[kIndex], e[kIndex], r[3], n) * grad_output(x, y, z, r[3], n), 0.0f);
    Expr wx = a[kW], wy = b[kW], wz = e[kW], dx = a[kDw], dy = b[kDw], dz = e[kDw];
    sums(x, y, z, n) = Tuple(0.0f, 0.0f, 0.0f);
    sums(x, y, z, n) = Tuple(sums(x, y, z, n)[0] + select(on, dx * wy * wz * v, 0.0f),
                             sums(x, y, z, n)[1] + select(on, wx * dy * wz * v, 0.0f),
                             sums(x, y, z, n)[2] + select(on, wx * wy * dz * v, 0.0f));
    Expr s = select(k == 0, sums(x, y, z, n)[0], k == 1, sums(x, y, z, n)[1], sums(x, y, z, n)[2]);
    grad_grid(k, x, y, z, n) = select(mode == 1, 0.0f, s);
  }

  void schedule() {
    promise_zero_mins(input, grid, grad_output, grad_grid);
    grad_grid.bound(k, 0, 3).unroll(k);
    if (get_target().has_gpu_feature()) {
      Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, zn{"zn"};
      grad_grid.split(x, xo, xi, 16, TailStrategy::GuardWithIf)
          .split(y, yo, yi, 16, TailStrategy::GuardWithIf)
          .fuse(z, n, zn)
          .reorder(k, xi, yi, xo, yo, zn)
          .gpu_blocks(xo, yo, zn)
          .gpu_threads(xi, yi);
      sums.compute_at(grad_grid, xi);
    } else {
      const int vec = natural_vector_size<float>();
      // (Through the fused loop Halide sizes a row's sums for every row up to it, 16 KiB by the
      // last of 64 at the bench shape: a heap allocation per task. A task per slice instead, its
      // rows in turn, allocated nothing per row but ran slower: reduced bench backward 8.7-9.1
      // ms against 9.3-13.1, docs/bench/2026-11-29c-cpu.md.)
      Var yz{"yz"}, yzn{"yzn"};
      grad_grid.reorder(k, x, y, z, n).fuse(y, z, yz).fuse(yz, n, yzn).parallel(yzn);
      sums.compute_at(grad_grid, yzn).store_in(kTaskScratch).vectorize(x, vec, TailStrategy::GuardWithIf);
      sums.update().reorder(x, r[0], r[1], r[2], r[3]).vectorize(x, vec, TailStrategy::GuardWithIf);
      for (Func* t : {&tx, &ty, &tz}) {
        row_taps_unrolled_at(*t, LoopLevel(grad_grid, yzn), vec, 2);
        specialize_taps3(*t, mode, padding);
      }
    }
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(GridSample3dForward, grid_sample3d_forward)
HALIDE_REGISTER_GENERATOR(GridSample3dGradInput, grid_sample3d_grad_input)
HALIDE_REGISTER_GENERATOR(GridSample3dGradGrid, grid_sample3d_grad_grid)
