// interpolate with antialias (SPEC §16) in float32: a separable resample through tap tables.
// Each output position o of an axis reads taps k = 0..K-1 at index(o, k) with weight(o, k); the
// glue (glue/interpolate_antialias.cpp) builds the tables on the host in double (the support,
// the edge cut and the renormalisation of SPEC §16) and rounds each weight to float once. A
// tap past an output position's own count has index -1 and adds an exact 0 (never 0 times a
// pixel, which would carry a NaN the reference never reads).
//
// The backward is the same kernel: the transpose of a separable table map is a separable table
// map whose tables list, for each input position, the outputs that read it (consecutive ones)
// and their weights. The glue transposes the tables and calls this kernel on grad_output.
//
// Buffers are (x, y, plane): W innermost, every N*C plane resampled alike. The H pass runs
// first, one output row at a time: its weights are scalars per row and its reads dense vectors
// along x. The W pass then reads that row, which is in cache. Measured on this machine
// (bench, 2 threads): the other order (a W pass over every input row, gathers from memory, then
// H) took 24.7 ms on [8, 256, 64, 64] x0.5 bilinear against ONNX Runtime's 12.2 ms; on a
// downscale H first also does s times fewer gathers.
//
// The CPU's W pass reads bands, not gathers. Its x tables are banded (the glue's Table): the
// kAntialiasBand outputs of one vector share a first input position
// x_band(block), and tap k of each of them reads input x_band + k, with index -1 and the
// weight -0.0f (the mark the W pass tests) where that input is not one of the output's own
// taps. Each tap is then one scalar load broadcast to the vector, not a gather of 16 lanes: K + 15 s taps for an output step of s
// inputs (at most the input's width) instead of K gathers, which LLVM makes 16 scalar loads and
// inserts each. The gathers took 0.90 ms on the backward of [2, 64, 64, 64] x0.25 bicubic
// (reduced bench) and the bands 0.29-0.44 (torch 0.55-0.96); docs/bench/2026-11-29b-cpu.md has
// every shape. The GPU keeps the gathers: a thread per output reads its own taps only.
#include "Halide.h"

#include "kernel_widths.h"

using namespace Halide;

namespace {

class InterpolateAntialias : public Generator<InterpolateAntialias> {
 public:
  Input<Buffer<float>> input{"input", 3};
  Input<Buffer<int32_t>> x_index{"x_index", 2};  // (xo, k)
  Input<Buffer<float>> x_weight{"x_weight", 2};  // (xo, k)
  Input<Buffer<int32_t>> y_index{"y_index", 2};  // (yo, k)
  Input<Buffer<float>> y_weight{"y_weight", 2};  // (yo, k)
  Input<Buffer<int32_t>> x_band{"x_band", 1};    // CPU: the first input of each band (block)
  Output<Buffer<float>> output{"output", 3};

  Var x{"x"}, y{"y"}, p{"p"};
  Func cols{"cols"};  // the H pass: (input x, output y, plane)
  RDom rx, ry;        // the taps of a W and of an H position

  void generate() {
    Expr W = input.dim(0).extent(), H = input.dim(1).extent();
    rx = RDom(0, x_weight.dim(1).extent(), "rx");
    ry = RDom(0, y_weight.dim(1).extent(), "ry");
    // Indices are clamped only to give Halide its bounds; the glue's tables are in range.
    Expr ix = x_index(x, rx), iy = y_index(y, ry);
    cols(x, y, p) = 0.0f;
    cols(x, y, p) += select(iy >= 0, y_weight(y, ry) * input(x, clamp(iy, 0, H - 1), p), 0.0f);
    output(x, y, p) = 0.0f;
    // x / kAntialiasBand is one band for a whole vector (the CPU schedule's vectors are the bands
    // and the output's x starts at 0), so a band's read is a scalar. The glue starts each band
    // early enough that all its reads are inputs: the read is promised in range, not clamped
    // (a clamp costs 4 scalar instructions per tap).
    Expr read = clamp(ix, 0, W - 1), present = ix >= 0;
    if (!get_target().has_gpu_feature()) {
      read = unsafe_promise_clamped(x_band(x / oplab_widths::kAntialiasBand) + rx, 0, W - 1);
      // A band's absent taps carry the weight -0.0f (the glue's kAbsentTap; no tap of its own
      // has it): tested on the weight the multiply loads anyway, where the index test loaded a
      // second table as large, and the W pass streamed both per row (index and weight of 40
      // taps x 224 outputs at 512 -> 224: 72 KB, past L1). With the weight alone (measured
      // without any test, its upper bound): 1.35 -> 0.91-0.98 ms forward, one thread.
      const Expr absent_bits = Internal::make_const(UInt(32), 0x80000000u);  // the bits of -0.0f
      present = reinterpret<uint32_t>(x_weight(x, rx)) != absent_bits;
    }
    output(x, y, p) += select(present, x_weight(x, rx) * cols(read, y, p), 0.0f);
    output.dim(0).set_min(0);
  }

  void schedule() {
    if (get_target().has_gpu_feature()) {
      // One thread per element of each pass, its taps in a loop; planes are the third block
      // dimension. The H pass's rows live in device memory between the two kernels.
      Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
      cols.compute_root();
      for (Func f : {cols, Func(output)}) {
        f.gpu_tile(x, y, xo, yo, xi, yi, 32, 8, TailStrategy::GuardWithIf).gpu_blocks(p);
        f.update().gpu_tile(x, y, xo, yo, xi, yi, 32, 8, TailStrategy::GuardWithIf).gpu_blocks(p);
      }
      return;
    }
    const int vec = get_target().natural_vector_size<float>();
    // Output rows of every plane in one parallel loop, in tasks of at least 8 rows (a task per
    // row of a small feature map costs more than the row) and at most about 128 tasks: with
    // 8 rows, [8, 256, 64, 64] x0.5 made 8192 tasks of a few microseconds in each of the two
    // loops, the threads spent them taking tasks, and two threads ran no faster than one
    // (docs/bench/2026-11-29h-cpu.md). The row the H pass makes is computed in the task, just
    // before the W pass reads it.
    Var yp("yp"), task("task"), row("row");
    Expr rows_per_task = max(8, output.dim(1).extent() * output.dim(2).extent() / 128);
    output.fuse(y, p, yp).split(yp, task, row, rows_per_task, TailStrategy::GuardWithIf).parallel(task)
        .vectorize(x, vec, TailStrategy::GuardWithIf);
    // W pass: a band's taps inner, its vector of outputs held in a register. (Two bands at once,
    // to overlap their chains of adds, measured slower on 512->224 bicubic: 1.52-1.57 ms against
    // 0.81-1.47, reduced bench.)
    Var xb("xb"), xl("xl");
    output.update().split(x, xb, xl, oplab_widths::kAntialiasBand, TailStrategy::GuardWithIf)
        .reorder(xl, rx, xb, y, p).fuse(y, p, yp).split(yp, task, row, rows_per_task, TailStrategy::GuardWithIf)
        .parallel(task).vectorize(xl);
    // H pass: taps outer, x inner: dense vectors of one row's pixels times a scalar weight.
    cols.compute_at(output, row).vectorize(x, vec, TailStrategy::GuardWithIf);
    cols.update().reorder(x, ry).vectorize(x, vec, TailStrategy::GuardWithIf);
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(InterpolateAntialias, interpolate_antialias)
