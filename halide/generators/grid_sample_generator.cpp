// grid_sample in float32 (SPEC §12), 4-D input: the forward, grad_input (a scatter) and
// grad_grid (a gather over the channels). Buffers, dims reversed from the tensors:
//   input (w, h, c, n)   grid (k, x, y, n), k = 0 x, 1 y   output, grad_output (x, y, c, n)
// Parameters: mode (0 bilinear, 1 nearest, 2 bicubic), padding (0 zeros, 1 border,
// 2 reflection), align_corners (0, 1): one kernel serves every combination.
// Each axis gives up to four taps (grid_sample_taps.h: its index, whether it lies in the
// image, its weight and the weight's derivative in the grid value); a position reads the
// product of its two axes' taps; every sum is float32.
#include "grid_sample_taps.h"
#include "kernel_widths.h"
#include "task_scratch.h"

using namespace Halide;
using oplab_scratch::kTaskScratch;
using namespace oplab_grid;

namespace {

#define OPLAB_GRID_INPUTS                          \
  Input<Buffer<float>> input{"input", 4};          \
  Input<Buffer<float>> grid{"grid", 4};            \
  Input<int> mode{"mode", 0, 0, 2};                \
  Input<int> padding{"padding", 0, 0, 2};          \
  Input<int> align_corners{"align_corners", 0, 0, 1};

// CPU: the schedule of a channels-last copy f(ci, x, ...) of B planes: along x a vector at a
// time from each of the B planes (dense loads), each lane stored alone into its pixel's B
// channels. Vectorised along ci instead, each vector was a gather of one float from each of B
// planes: the forward took 1.1x longer at 64 channels and 1.15x at 16 (one thread, bench and
// reduced bench shapes; docs/bench/2026-11-29d-cpu.md).
Func& planes_to_channels_last(Func& f, int B) {
  std::vector<Var> a = f.args();
  Var xo{"xo"}, xi{"xi"};
  std::vector<VarOrRVar> order = {xi, a[0], xo};
  for (size_t i = 2; i < a.size(); ++i) order.push_back(a[i]);
  f.split(a[1], xo, xi, B, TailStrategy::GuardWithIf).reorder(order).vectorize(xi).unroll(a[0]);
  return f;
}

// The two axes' taps of every grid position: tx(k, x, y, n) along W, ty(k, x, y, n) along H.
void define_taps(Func& tx, Func& ty, const Func& grid, Expr W, Expr H, Expr mode, Expr padding, Expr ac) {
  Var k{"k"}, x{"x"}, y{"y"}, n{"n"};
  tx(k, x, y, n) = axis_tap(grid(0, x, y, n), W, k, mode, padding, ac);
  ty(k, x, y, n) = axis_tap(grid(1, x, y, n), H, k, mode, padding, ac);
}

// out(x, y, c, n) = sum over the taps (rows outer) of wy * wx * input, a tap outside reading 0.
//  * CPU: channels-last in blocks of a vector's width (16) of channels. Per image, every block
//    is copied to in_cl(ci, w, h, co) (4 MiB at 64 channels of 128 x 128), so a tap of a
//    position reads a block's 16 channels as one dense vector (one cache line) instead of one
//    float from each of 16 planes. Then a task per row: the row's taps (specialised on mode
//    and padding, so bilinear zeros forms only its own coordinates), and per block the masked
//    sums for its channels and the row written transposed, a plane's run at a time (16
//    positions to 16 planes at a time measured slower). The taps, in doubles, are formed once
//    per row for all blocks: copying and sampling one block at a time formed them once per
//    row and block (bench shape, one thread: 17.9-18.2 ms against 9.3-9.6; the pixels then
//    come from L3 rather than L2, which costs less than the taps did;
//    docs/bench/2026-11-29c-cpu.md). An axis' four slots are formed together per vector of
//    positions (row_taps_unrolled_at), so the grid's strided load, the coordinate, its
//    padding and floor are computed once per position, not once per slot: at 16 channels
//    the slot loop's taps took 70% of the kernel (one thread, reduced bench shape: 1.14-1.61
//    ms against 0.57-0.87; bench shape 10.3-10.5 against 8.0-8.1; every output bit equal;
//    docs/bench/2026-11-29d-cpu.md). Each tap pair's mask is stored as bits and ANDed with
//    the product (exactly select(on, w * v, 0)): a select on a scalar condition became a
//    branch around each load. strict_float keeps the sum in tap order (no
//    reassociation, no fused multiply-add).
//    Bench shape [8, 64, 128, 128], grid 128 x 128 at random positions: about 2.2x faster than
//    vectorising over positions, which gathers each tap a float at a time from 64 planes
//    (measured with a block at a time).
//  * CPU with channels_last = false (the glue's choice, halide/glue/grid_sample_path.h): no
//    copy; a task per (row, image), taps once per row, channels in turn, positions vectorised,
//    each tap gathered a float at a time from its plane. For inputs whose copy Halide cannot
//    allocate (64 H W bytes per block of 16 channels: past 2^31 bytes) and for grids with few
//    positions per input pixel, where the copy costs more than the sampling it speeds up.
//    The same sums in the same order as the channels-last path: identical results.
//  * GPU: a thread per (position, channel), 16 x 16 positions per block.
class GridSampleForward : public Generator<GridSampleForward> {
 public:
  GeneratorParam<bool> channels_last{"channels_last", true};
  OPLAB_GRID_INPUTS
  Output<Buffer<float>> output{"output", 4};

  Var x{"x"}, y{"y"}, c{"c"}, n{"n"}, w{"w"}, h{"h"}, ci{"ci"}, co{"co"}, kx{"kx"}, ky{"ky"};
  Func tx{"tx"}, ty{"ty"}, acc{"acc"}, in_cl{"in_cl"}, pw{"pw"}, pm{"pm"}, pz{"pz"};
  RDom r;

  void generate() {
    define_taps(tx, ty, grid, input.dim(0).extent(), input.dim(1).extent(), mode, padding, align_corners);
    if (get_target().has_gpu_feature() || !channels_last) {
      Expr T = taps_of(mode);
      r = RDom({{0, T}, {0, T}}, "r");  // (kx, ky)
      FuncRef a = tx(r.x, x, y, n), b = ty(r.y, x, y, n);
      Expr on = Expr(a[kValid]) * Expr(b[kValid]) != 0.0f;
      Expr v = input(a[kIndex], b[kIndex], c, n);
      acc(x, y, c, n) = 0.0f;
      Expr poisoned = on && Expr(a[kPoisonW]) + Expr(b[kPoisonW]) != 0.0f;
      Expr sum = acc(x, y, c, n) + select(on, Expr(b[kW]) * Expr(a[kW]) * v, 0.0f) + poison_term(poisoned, v);
      // On the CPU in tap order without fused multiply-adds, as the channels-last path sums.
      acc(x, y, c, n) = get_target().has_gpu_feature() ? sum : strict_float(sum);
      output(x, y, c, n) = acc(x, y, c, n);
      return;
    }
    const int B = natural_vector_size<float>();
    // Channel co * B + ci; the last block repeats the last channel (never written out).
    in_cl(ci, w, h, co, n) = input(w, h, min(co * B + ci, input.dim(2).extent() - 1), n);
    // Per tap pair: the weight wy * wx and an all-ones mask where both taps read the image.
    pw(kx, ky, x, y, n) = ty(ky, x, y, n)[kW] * tx(kx, x, y, n)[kW];
    pm(kx, ky, x, y, n) = select(tx(kx, x, y, n)[kValid] != 0.0f && ty(ky, x, y, n)[kValid] != 0.0f,
                                 UInt(32).max(), UInt(32).min());
    // bicubic's merged taps: all ones where the pair's pixel, if not finite, makes the sum NaN.
    pz(kx, ky, x, y, n) = select(tx(kx, x, y, n)[kPoisonW] + ty(ky, x, y, n)[kPoisonW] != 0.0f, pm(kx, ky, x, y, n),
                                 UInt(32).min());
    // The taps of a mode with T per axis, unrolled, rows outer, as the GPU's RDom.
    auto sum = [&](int T) {
      Expr e = 0.0f;
      for (int j = 0; j < T; ++j)
        for (int i = 0; i < T; ++i) {
          Expr v = in_cl(ci, tx(i, x, y, n)[kIndex], ty(j, x, y, n)[kIndex], co, n);
          e = e + reinterpret<float>(reinterpret<uint32_t>(pw(i, j, x, y, n) * v) & pm(i, j, x, y, n));
          if (T == 4) e = e + reinterpret<float>(poison_bits(v) & pz(i, j, x, y, n));
        }
      return strict_float(e);
    };
    acc(ci, x, co, y, n) = select(mode == 0, sum(2), mode == 1, sum(1), sum(4));
    output(x, y, c, n) = acc(c % B, x, c / B, y, n);
  }

  void schedule() {
    promise_zero_mins(input, grid, output);
    if (get_target().has_gpu_feature()) {
      Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, cn{"cn"};
      output.split(x, xo, xi, 16, TailStrategy::GuardWithIf)
          .split(y, yo, yi, 16, TailStrategy::GuardWithIf)
          .fuse(c, n, cn)
          .reorder(xi, yi, xo, yo, cn)
          .gpu_blocks(xo, yo, cn)
          .gpu_threads(xi, yi);
      acc.compute_at(output, xi);
      return;
    }
    if (!channels_last) {
      const int vec = natural_vector_size<float>();
      Var yn{"yn"};
      output.reorder(x, c, y, n).fuse(y, n, yn).parallel(yn).vectorize(x, vec, TailStrategy::GuardWithIf);
      acc.compute_at(output, c).store_in(kTaskScratch).vectorize(x, vec, TailStrategy::GuardWithIf);
      acc.update().reorder(x, r.x, r.y).vectorize(x, vec, TailStrategy::GuardWithIf);
      for (Func* t : {&tx, &ty}) row_taps_at(*t, LoopLevel(output, yn), vec);
      return;
    }
    const int B = natural_vector_size<float>();
    Var xo{"xo"}, xi{"xi"}, oci{"oci"}, oco{"oco"};
    output.split(x, xo, xi, B, TailStrategy::GuardWithIf)
        .split(c, oco, oci, B, TailStrategy::GuardWithIf)
        .reorder(xi, xo, oci, oco, y, n)
        .vectorize(xi)
        .parallel(y);
    planes_to_channels_last(in_cl, B).compute_at(output, n).parallel(h);
    acc.compute_at(output, oco).store_in(kTaskScratch).vectorize(ci);
    for (int m = 0; m < 3; ++m) acc.specialize(mode == m);
    for (Func* t : {&tx, &ty}) {
      row_taps_unrolled_at(*t, LoopLevel(output, y), B, 4);
      for (int m = 0; m < 3; ++m)
        for (int p = 0; p < 3; ++p) t->specialize(mode == m && padding == p);
    }
    // In memory rather than inlined: seeing the mask's comparison, LLVM branches around loads.
    for (Func* t : {&pw, &pm, &pz})
      t->compute_at(output, y).store_in(kTaskScratch).reorder_storage(x, kx, ky).reorder(x, kx, ky).vectorize(x, B, TailStrategy::GuardWithIf);
  }
};

// grad_input: every tap of every position scatters wy * wx * gout to its pixel (the forward's
// transpose, taps outside the image skipped).
//  * CPU: channels-last, as the forward gathers. Per image, the taps of all its positions are
//    formed first (tx, ty: a table per axis, rows in parallel, vectorised over positions),
//    then a task per block of kGridScatterLanes channels accumulates into gi_cl(ci, w, h),
//    the block's channels of a pixel side by side, so each tap is one dense vector load, add
//    and store; each row of grad_output is first transposed the same way (go_cl, one read of
//    the block's planes per position instead of one per tap), and the finished block is
//    transposed back into its planes. Lanes are distinct channels and blocks distinct
//    planes, so no two writes collide. Each position walks only its mode's taps (4 of
//    bilinear's 16 slots). Every pixel's sum is in the order
//    the positions and taps come (rows, positions, taps), as the plain scatter it replaces
//    summed: the same bits. What it replaced scattered each tap into the planes directly, a
//    gather and a scatter instruction per tap: the reduced bench shape's backward took 6.9 ms
//    against the forward's 1.2, behind torch (docs/bench/2026-11-28b-cpu.md).
//  * GPU: a thread per (column of positions, channel) adds atomically (positions share pixels).
class GridSampleGradInput : public Generator<GridSampleGradInput> {
 public:
  OPLAB_GRID_INPUTS
  Input<Buffer<float>> grad_output{"grad_output", 4};  // (x, y, c, n)
  Output<Buffer<float>> grad_input{"grad_input", 4};   // (w, h, c, n)

  Var w{"w"}, h{"h"}, c{"c"}, n{"n"}, q{"q"}, x{"x"}, y{"y"}, k{"k"}, ci{"ci"}, co{"co"};
  Func tx{"tx"}, ty{"ty"}, target{"target"}, go_cl{"go_cl"}, gi_cl{"gi_cl"};
  Func sx{"sx"}, sy{"sy"};  // the three fields of a tap the scatter reads
  RDom r;

  void generate() {
    define_taps(tx, ty, grid, input.dim(0).extent(), input.dim(1).extent(), mode, padding, align_corners);
    // The CPU's per-image tables hold only what the scatter reads: with all four slots formed
    // together (see schedule()) they stay the size the six fields of two slots had.
    for (auto [s, t] : {std::pair<Func*, Func*>{&sx, &tx}, {&sy, &ty}}) {
      Var k{"k"};
      FuncRef f = (*t)(k, x, y, n);
      (*s)(k, x, y, n) = Tuple(f[kIndex], f[kValid], f[kW]);
    }
    // target(q, x, y, n): tap q = kx + T ky of position (x, y): its pixel and weight (0 for a
    // tap outside the image or past the mode's taps). On the GPU, T = 4 (a constant, so the
    // taps unroll) and target is realised where it is scattered, so that the atomic add's
    // store index and its implicit load index are the same loads, which Halide 14 needs to
    // emit a native float atomic add rather than a compare-and-swap loop. On the CPU, T is
    // the mode's taps per axis and target is inlined.
    const bool gpu = get_target().has_gpu_feature();
    Expr T = gpu ? Expr(4) : taps_of(mode);
    FuncRef a = sx(q % T, x, y, n), b = sy(q / T, x, y, n);
    target(q, x, y, n) = Tuple(a[0], b[0], Expr(b[2]) * Expr(a[2]), Expr(a[1]) * Expr(b[1]));
    // r = (q, x, y): taps innermost, positions row by row.
    r = RDom({{0, T * T}, {0, grid.dim(1).extent()}, {0, grid.dim(2).extent()}}, "r");
    FuncRef t = target(r[0], r[1], r[2], n);
    if (gpu) {
      grad_input(w, h, c, n) = 0.0f;
      grad_input(t[0], t[1], c, n) += select(Expr(t[3]) != 0.0f, Expr(t[2]) * grad_output(r[1], r[2], c, n), 0.0f);
      return;
    }
    const int B = oplab_widths::kGridScatterLanes;
    // Channel co * B + ci; the last block repeats the last channel (never written out).
    go_cl(ci, x, y, co, n) = grad_output(x, y, min(co * B + ci, grad_output.dim(2).extent() - 1), n);
    gi_cl(ci, w, h, co, n) = 0.0f;
    gi_cl(ci, t[0], t[1], co, n) += select(Expr(t[3]) != 0.0f, Expr(t[2]) * go_cl(ci, r[1], r[2], co, n), 0.0f);
    grad_input(w, h, c, n) = gi_cl(c % B, w, h, c / B, n);
  }

  void schedule() {
    promise_zero_mins(input, grid, grad_output, grad_input);
    RVar rq = r[0], rx = r[1], ry = r[2];
    if (get_target().has_gpu_feature()) {
      Var wo{"wo"}, ho{"ho"}, wi{"wi"}, hi{"hi"}, cn{"cn"};
      grad_input.split(w, wo, wi, 16, TailStrategy::GuardWithIf)
          .split(h, ho, hi, 16, TailStrategy::GuardWithIf)
          .fuse(c, n, cn)
          .reorder(wi, hi, wo, ho, cn)
          .gpu_blocks(wo, ho, cn)
          .gpu_threads(wi, hi);
      RVar rxo{"rxo"}, rxi{"rxi"};
      grad_input.update()
          .atomic()
          .split(rx, rxo, rxi, 64, TailStrategy::GuardWithIf)
          .reorder(rq, ry, rxi, rxo, c, n)
          .gpu_blocks(rxo, c, n)
          .gpu_threads(rxi)
          .unroll(rq);
      // Each thread walks one column of positions (its rows in turn).
      target.compute_at(grad_input, ry).bound(q, 0, 16).unroll(q);
      return;
    }
    const int vec = natural_vector_size<float>(), B = oplab_widths::kGridScatterLanes;
    // Images in turn, a task per block: its block accumulated channels-last, then written
    // back a pixel's channels at a time (one dense load, each lane stored into its plane; a
    // plane's run of pixels at a time, a strided gather from the block per vector, took
    // 1.03-1.04x longer: one thread, bench and reduced bench shapes). Blocks of 16 channels
    // instead of kGridScatterLanes = 8 took 1.6-1.9x longer, of 4 1.03-1.3x
    // (docs/bench/2026-11-29d-cpu.md).
    grad_input.split(c, co, ci, B, TailStrategy::GuardWithIf)
        .reorder(ci, w, h, co, n)
        .vectorize(ci)
        .parallel(co);
    gi_cl.compute_at(grad_input, co).vectorize(ci);
    gi_cl.update().reorder(ci, rq, rx, ry).vectorize(ci);
    // The mode made a constant: the taps per axis fold into the slot arithmetic (q % T and
    // q / T were integer divisions per tap) and bilinear's 4 taps unroll.
    gi_cl.update().specialize(mode == 0).unroll(rq);
    gi_cl.update().specialize(mode == 1);
    gi_cl.update().specialize(mode == 2);
    planes_to_channels_last(go_cl, B).compute_at(gi_cl, ry).store_in(kTaskScratch);
    // The taps of an image, formed before its blocks and read by each (specialised on mode and
    // padding as the forward's: each combination forms only its own coordinates). Formed per
    // row inside each block's task instead, they were formed once per block: 8 times at 64
    // channels, whose doubles cost more than the scatter (bench shape, one thread: 20.1 ms
    // against 12.4-13.2; reduced shape, two blocks: 1.19-1.26 against 0.94-0.96;
    // docs/bench/2026-11-29c-cpu.md).
    // Per image, the tables (0.8 MiB per axis at 128 x 128 positions: four slots of the three
    // fields sx and sy keep) come from the calling thread's heap, which glibc keeps between
    // calls; tables for the whole batch (4 MiB each) were returned to the system and their
    // page faults cost more than the scatter at every call (a driver of the kernel alone, 1
    // thread, reduced shape: 14 ms). An axis' four slots are formed together per vector of
    // positions, as the forward's (row_taps_unrolled_at): the slot loop formed each position's
    // coordinate once per slot (reduced bench shape, one thread: 1.04-1.14 ms against
    // 0.86-0.91). Under glibc's default heap settings rather than the benchmark's, this
    // kernel read 1.85 ms at the reduced shape against the slot loop's 1.36 (at the bench
    // shape 10.8 against 12.2; docs/bench/2026-11-29d-cpu.md).
    for (Func* t : {&sx, &sy}) {
      row_taps_unrolled_at(*t, LoopLevel(grad_input, n), vec, 4, MemoryType::Auto).parallel(t->args()[2]);
      for (int m = 0; m < 3; ++m)
        for (int p = 0; p < 3; ++p) t->specialize(mode == m && padding == p);
    }
  }
};

// grad_grid(k, x, y, n) = factor-carrying derivative: sum over channels and taps of
// gout * input * (dwx * wy for x, wx * dwy for y); nearest's is 0 (left exact, as the
// reference).
//  * CPU: channels-last, as the forward gathers. Per image the input is copied to blocks of 16
//    channels side by side (in_cl, every block), then a task per row: the row's taps, its
//    grad_output transposed the same way (go_cl), and per position, for each block and tap
//    pair, one dense vector of 16 channels times the position's vector of gout, masked where
//    the pair reads outside the image, added into two vectors of lane sums (x and y); last,
//    each vector's 16 lanes are summed. Lanes past the last channel read 0 in both factors.
//    The row's taps as the forward's: an axis' four slots together per vector of positions
//    (reduced bench shape, one thread: 1.35-1.61 ms against 0.76-0.83 with the slot loop).
//    What it replaced gathered each tap a float at a time, positions in the lanes: at the
//    bench shape ([8, 64, 128, 128], one thread) 26.0-26.8 ms against 11.8-11.9
//    (docs/bench/2026-11-29c-cpu.md). The sums run in another order (lanes, then blocks and
//    taps, then across the lanes): float32 rounding apart, the same values.
//  * CPU with channels_last = false (the glue's choice, as for the forward,
//    halide/glue/grid_sample_path.h: inputs whose copy Halide cannot allocate, sparse grids):
//    the gather, a vector lane per position, channels and taps in turn.
//  * GPU: the gather, a thread per position.
class GridSampleGradGrid : public Generator<GridSampleGradGrid> {
 public:
  GeneratorParam<bool> channels_last{"channels_last", true};
  OPLAB_GRID_INPUTS
  Input<Buffer<float>> grad_output{"grad_output", 4};  // (x, y, c, n)
  Output<Buffer<float>> grad_grid{"grad_grid", 4};     // (k, x, y, n)

  Var k{"k"}, x{"x"}, y{"y"}, n{"n"}, ci{"ci"}, co{"co"}, w{"w"}, h{"h"}, kx{"kx"}, ky{"ky"};
  Func tx{"tx"}, ty{"ty"}, sums{"sums"};
  Func in_cl{"in_cl"}, go_cl{"go_cl"}, lanes{"lanes"}, wdx{"wdx"}, wdy{"wdy"}, pm{"pm"}, pzx{"pzx"}, pzy{"pzy"};
  Func sx{"sx"}, sy{"sy"}, ox{"ox"}, oy{"oy"};
  RDom r, rb, rc;

  void generate() {
    define_taps(tx, ty, grid, input.dim(0).extent(), input.dim(1).extent(), mode, padding, align_corners);
    if (!cpu_channels_last()) return define_gather();
    using oplab_bits::u32;
    const int B = natural_vector_size<float>();
    Expr C = input.dim(2).extent();
    Expr ch = co * B + ci;
    in_cl(ci, w, h, co, n) = select(ch < C, input(w, h, min(ch, C - 1), n), 0.0f);
    go_cl(ci, x, co, y, n) = select(ch < C, grad_output(x, y, min(ch, C - 1), n), 0.0f);
    FuncRef a = tx(kx, x, y, n), b = ty(ky, x, y, n);
    wdx(kx, ky, x, y, n) = Expr(a[kDw]) * Expr(b[kW]);
    wdy(kx, ky, x, y, n) = Expr(a[kW]) * Expr(b[kDw]);
    pm(kx, ky, x, y, n) = select(Expr(a[kValid]) != 0.0f && Expr(b[kValid]) != 0.0f, UInt(32).max(), UInt(32).min());
    // bicubic's merged taps (axis_tap): all ones where the pair's pixel, if not finite, makes
    // that slope's sum NaN.
    pzx(kx, ky, x, y, n) = select(Expr(a[kPoisonDw]) + Expr(b[kPoisonW]) != 0.0f, pm(kx, ky, x, y, n), u32(0));
    pzy(kx, ky, x, y, n) = select(Expr(a[kPoisonW]) + Expr(b[kPoisonDw]) != 0.0f, pm(kx, ky, x, y, n), u32(0));
    rb = RDom(0, (C + B - 1) / B, "rb");
    lanes(ci, x, y, n) = Tuple(0.0f, 0.0f, u32(0), u32(0));
    auto step = [&](int T) {
      Expr gx = lanes(ci, x, y, n)[0], gy = lanes(ci, x, y, n)[1], px = lanes(ci, x, y, n)[2], py = lanes(ci, x, y, n)[3];
      Expr g = go_cl(ci, x, rb, y, n);
      for (int j = 0; j < T; ++j)
        for (int i = 0; i < T; ++i) {
          Expr v = in_cl(ci, tx(i, x, y, n)[kIndex], ty(j, x, y, n)[kIndex], rb, n) * g;
          Expr vm = reinterpret<float>(reinterpret<uint32_t>(v) & pm(i, j, x, y, n));
          gx = gx + wdx(i, j, x, y, n) * vm;
          gy = gy + wdy(i, j, x, y, n) * vm;
          if (T == 4) {
            px = px | (poison_bits(v) & pzx(i, j, x, y, n));
            py = py | (poison_bits(v) & pzy(i, j, x, y, n));
          }
        }
      // strict_float: each channel's sum in tap order, without fused multiply-adds. Fused, a
      // product and its negative (reflection's symmetric taps) left the rounding of one of them
      // instead of 0 (a fuzz case: -5.7e-14 where the reference, whose merged taps cancel
      // exactly, has 0).
      return std::vector<Expr>{strict_float(gx), strict_float(gy), px, py};
    };
    const std::vector<Expr> s2 = step(2), s4 = step(4);
    lanes(ci, x, y, n) = Tuple(select(mode == 0, s2[0], s4[0]), select(mode == 0, s2[1], s4[1]),
                               select(mode == 0, s2[2], s4[2]), select(mode == 0, s2[3], s4[3]));
    rc = RDom(0, B, "rc");
    sx(x, y, n) = 0.0f;
    sx(x, y, n) += lanes(rc, x, y, n)[0];
    sy(x, y, n) = 0.0f;
    sy(x, y, n) += lanes(rc, x, y, n)[1];
    ox(x, y, n) = u32(0);
    // Each lane holds 0 or a quiet NaN's bits (poison_bits): their max is their OR, and max
    // is a reduction Halide vectorises.
    ox(x, y, n) = max(ox(x, y, n), lanes(rc, x, y, n)[2]);
    oy(x, y, n) = u32(0);
    oy(x, y, n) = max(oy(x, y, n), lanes(rc, x, y, n)[3]);
    // The merged taps' NaN ORed into the sum's bits (see define_gather).
    Expr poison = select(k == 0, ox(x, y, n), oy(x, y, n));
    Expr sum = select(k == 0, sx(x, y, n), sy(x, y, n));
    grad_grid(k, x, y, n) = select(mode == 1, 0.0f, reinterpret<float>(reinterpret<uint32_t>(sum) | select(mode == 2, poison, u32(0))));
  }

  bool cpu_channels_last() const { return channels_last && !get_target().has_gpu_feature(); }

  // A position per thread (GPU) or vector lane (CPU), the channels and taps in turn.
  void define_gather() {
    Expr T = taps_of(mode);
    r = RDom({{0, T}, {0, T}, {0, input.dim(2).extent()}}, "r");  // (kx, ky, c)
    FuncRef a = tx(r[0], x, y, n), b = ty(r[1], x, y, n);
    Expr on = Expr(a[kValid]) * Expr(b[kValid]) != 0.0f;
    Expr v = select(on, input(a[kIndex], b[kIndex], r[2], n) * grad_output(x, y, r[2], n), 0.0f);
    // The merged taps' NaN for a non-finite pixel (axis_tap): slopes along the axis derived.
    // ORed into the bits of the sum at the end rather than added as a NaN: outside
    // strict_float LLVM's fast-math flags may drop an added NaN (measured: this sum lost it),
    // and strict sums cost the backward 7% (bench grid shape); integer ORs are never folded.
    // Only bicubic merges taps (bilinear's two are distinct pixels; its zero weights give NaN
    // by the product): on the CPU the other modes' update is specialised without it (a tenth
    // of the backward's time, bench grid shape).
    Expr poison_x = mode == 2 && on && Expr(a[kPoisonDw]) + Expr(b[kPoisonW]) != 0.0f;
    Expr poison_y = mode == 2 && on && Expr(a[kPoisonW]) + Expr(b[kPoisonDw]) != 0.0f;
    sums(x, y, n) = Tuple(0.0f, 0.0f, oplab_bits::u32(0), oplab_bits::u32(0));
    sums(x, y, n) = Tuple(sums(x, y, n)[0] + select(on, Expr(a[kDw]) * Expr(b[kW]) * v, 0.0f),
                          sums(x, y, n)[1] + select(on, Expr(a[kW]) * Expr(b[kDw]) * v, 0.0f),
                          sums(x, y, n)[2] | select(poison_x, poison_bits(v), oplab_bits::u32(0)),
                          sums(x, y, n)[3] | select(poison_y, poison_bits(v), oplab_bits::u32(0)));
    auto with_poison = [&](int i) {
      return reinterpret<float>(reinterpret<uint32_t>(sums(x, y, n)[i]) | sums(x, y, n)[i + 2]);
    };
    grad_grid(k, x, y, n) = select(mode == 1, 0.0f, select(k == 0, with_poison(0), with_poison(1)));
  }

  void schedule() {
    promise_zero_mins(input, grid, grad_output, grad_grid);
    grad_grid.bound(k, 0, 2).unroll(k);
    if (get_target().has_gpu_feature()) {
      Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
      grad_grid.split(x, xo, xi, 16, TailStrategy::GuardWithIf)
          .split(y, yo, yi, 16, TailStrategy::GuardWithIf)
          .reorder(k, xi, yi, xo, yo, n)
          .gpu_blocks(xo, yo, n)
          .gpu_threads(xi, yi);
      sums.compute_at(grad_grid, xi);
      return;
    }
    if (!channels_last) {
      const int vec = natural_vector_size<float>();
      // Images in turn, a task per row. (A task per row through a loop fusing rows and images
      // had Halide size each row's storage for every row up to it: a heap allocation per task
      // past 16 KiB.)
      grad_grid.reorder(k, x, y, n).parallel(y);
      sums.compute_at(grad_grid, y).store_in(kTaskScratch).vectorize(x, vec, TailStrategy::GuardWithIf);
      sums.update().reorder(x, r[0], r[1], r[2]).vectorize(x, vec, TailStrategy::GuardWithIf);
      sums.update().specialize(mode == 2);
      for (Func* t : {&tx, &ty}) {
        row_taps_at(*t, LoopLevel(grad_grid, y), vec);
        for (int m = 0; m < 3; ++m)
          for (int p = 0; p < 3; ++p) t->specialize(mode == m && padding == p);
      }
      return;
    }
    const int B = natural_vector_size<float>();
    grad_grid.reorder(k, x, y, n).parallel(y);
    for (int m = 0; m < 3; ++m) grad_grid.specialize(mode == m);
    planes_to_channels_last(in_cl, B).compute_at(grad_grid, n).parallel(h);
    planes_to_channels_last(go_cl, B).compute_at(grad_grid, y).store_in(kTaskScratch);
    lanes.compute_at(grad_grid, x).vectorize(ci);
    lanes.update().reorder(ci, rb).vectorize(ci);
    for (Func* f : {&sx, &sy, &ox, &oy}) {
      f->compute_at(grad_grid, x);
      f->update().atomic().vectorize(rc);
    }
    for (Func* t : {&tx, &ty}) {
      row_taps_unrolled_at(*t, LoopLevel(grad_grid, y), B, 4);
      for (int m = 0; m < 3; ++m)
        for (int p = 0; p < 3; ++p) t->specialize(mode == m && padding == p);
    }
    for (Func* t : {&wdx, &wdy, &pm, &pzx, &pzy})
      t->compute_at(grad_grid, y).store_in(kTaskScratch).reorder_storage(x, kx, ky).reorder(x, kx, ky).vectorize(x, B, TailStrategy::GuardWithIf);
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(GridSampleForward, grid_sample_forward)
HALIDE_REGISTER_GENERATOR(GridSampleGradInput, grid_sample_grad_input)
HALIDE_REGISTER_GENERATOR(GridSampleGradGrid, grid_sample_grad_grid)
