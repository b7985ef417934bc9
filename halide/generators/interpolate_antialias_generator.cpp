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
// Buffers are (x, y, plane): W innermost, every N*C plane resampled alike. The W pass runs
// first into a per-plane buffer of H rows of the output's width; the H pass then reads whole
// rows of it (a scalar weight per row, dense vectors along x).
#include "Halide.h"

using namespace Halide;

namespace {

class InterpolateAntialias : public Generator<InterpolateAntialias> {
 public:
  Input<Buffer<float>> input{"input", 3};
  Input<Buffer<int32_t>> x_index{"x_index", 2};  // (xo, k)
  Input<Buffer<float>> x_weight{"x_weight", 2};  // (xo, k)
  Input<Buffer<int32_t>> y_index{"y_index", 2};  // (yo, k)
  Input<Buffer<float>> y_weight{"y_weight", 2};  // (yo, k)
  Output<Buffer<float>> output{"output", 3};

  Var x{"x"}, y{"y"}, p{"p"};
  Func rows{"rows"};
  RDom rx, ry;  // the taps of a W and of an H position

  void generate() {
    Expr W = input.dim(0).extent(), H = input.dim(1).extent();
    rx = RDom(0, x_weight.dim(1).extent(), "rx");
    ry = RDom(0, y_weight.dim(1).extent(), "ry");
    // The W pass: every input row resampled to the output's width. The index is clamped only to
    // give Halide its bounds; the glue's tables are in range.
    rows(x, y, p) = 0.0f;
    Expr ix = x_index(x, rx), iy = y_index(y, ry);
    rows(x, y, p) += select(ix >= 0, x_weight(x, rx) * input(clamp(ix, 0, W - 1), y, p), 0.0f);
    // The H pass over those rows, into the output.
    output(x, y, p) = 0.0f;
    output(x, y, p) += select(iy >= 0, y_weight(y, ry) * rows(x, clamp(iy, 0, H - 1), p), 0.0f);
  }

  void schedule() {
    if (get_target().has_gpu_feature()) {
      // One thread per element of each pass, its taps in a loop; planes are the third block
      // dimension. The rows buffer lives in device memory between the two kernels.
      Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
      rows.compute_root();
      for (Func f : {rows, Func(output)}) {
        f.gpu_tile(x, y, xo, yo, xi, yi, 32, 8, TailStrategy::GuardWithIf).gpu_blocks(p);
        f.update().gpu_tile(x, y, xo, yo, xi, yi, 32, 8, TailStrategy::GuardWithIf).gpu_blocks(p);
      }
      return;
    }
    const int vec = get_target().natural_vector_size<float>();
    // Planes in parallel and, inside a plane, rows in parallel (one plane of a large image
    // still uses every core). The rows buffer of a plane (H x out width) is computed per plane.
    // Taps outer, x inner in both passes: a tap's weights and indices are dense vectors along
    // x (the W pass then reads a gather of the input), or one scalar per row (the H pass).
    output.vectorize(x, vec, TailStrategy::GuardWithIf).parallel(y, 8, TailStrategy::GuardWithIf).parallel(p);
    output.update().reorder(x, ry, y, p).vectorize(x, vec, TailStrategy::GuardWithIf).parallel(y, 8, TailStrategy::GuardWithIf).parallel(p);
    rows.compute_at(output, p).vectorize(x, vec, TailStrategy::GuardWithIf).parallel(y, 8, TailStrategy::GuardWithIf);
    rows.update().reorder(x, rx, y).vectorize(x, vec, TailStrategy::GuardWithIf).parallel(y, 8, TailStrategy::GuardWithIf);
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(InterpolateAntialias, interpolate_antialias)
