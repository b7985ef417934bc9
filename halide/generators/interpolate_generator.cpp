// interpolate in float32 (SPEC §6): forward and backward, every mode and rank.
//
// Tensors are seen as 4-D (x, y, z, p) = (W, H, D, N*C); the glue reshapes 1-D and 2-D inputs
// to unit y/z axes. Generator parameters pick what changes the loop structure:
//   kind  nearest (also nearest-exact, a run-time flag) | linear (linear, bilinear, trilinear) |
//         cubic (bicubic) | area
//   dims  1, 2 or 3 interpolated axes (x; x, y; x, y, z)
// Everything else is a run-time parameter: the per-axis kernel scale (which carries size,
// scale_factor and recompute_scale_factor, computed by the glue as SPEC §6 says),
// align_corners, nearest-exact, the longest area bin and the backward reach per axis. They
// only enter the per-axis tap tables, so they cost nothing per element.
//
// On the CPU, a gather is one scalar load per vector lane. The x axis, the one whose taps
// vary across lanes, therefore has closed-form versions for the common exact ratios (2x
// upsampling; 2:1 and 4:1 area), chosen at run time by `x_path` (interpolate_paths.h) and
// compiled as specialisations with dense or strided loads; the tables check the choice.
//
// Forward: nearest gathers all axes at once; the other kinds apply one axis at a time
// (separable). Which axis first matters for speed only: a pass along x gathers (its taps
// vary per lane), a pass along y or z reads whole rows. Upsampling kinds go x first (the x
// pass then runs on the fewer, input-sized rows); area, which almost always shrinks, goes x
// last (on the fewer, output-sized rows). Backward: the transposed passes in reverse order,
// each a gather through the inverse taps (interpolate_axis.h).
//
// Every float operation is strict (no fast-math): NaN and Inf flow through IEEE arithmetic
// exactly as in the reference (a zero weight times inf is NaN; an absent tap is skipped), and
// the tap coordinates repeat the reference's double operations bit for bit.
#include <algorithm>
#include <climits>

#include "Halide.h"
#include "interpolate_axis.h"

using namespace Halide;
using oplab_halide::InterpAxisTaps;
using oplab_halide::InterpKind;
using oplab_halide::InterpPass;
using oplab_halide::InterpVars;

namespace {

const std::map<std::string, InterpKind> kKinds = {{"nearest", InterpKind::Nearest},
                                                  {"linear", InterpKind::Linear},
                                                  {"cubic", InterpKind::Cubic},
                                                  {"area", InterpKind::Area}};

// Axes in the order the forward applies them.
std::vector<int> forward_order(InterpKind kind, int dims) {
  std::vector<int> order;
  for (int a = 0; a < dims; ++a) order.push_back(a);
  if (kind == InterpKind::Area) std::reverse(order.begin(), order.end());
  return order;
}

// Schedules shared by both directions. `out` is the pipeline output, `passes` the separable
// passes (the last one is inlined into `out`), `tables` the per-axis tap tables.
struct InterpSchedule {
  const InterpVars& v;
  int dims;
  bool row_intermediates;  // see cpu()

  // `path`, `paths`: the x axis' run-time path and the closed-form paths it may take.
  void cpu(Func out, const std::vector<InterpPass>& passes, const std::vector<Func>& tables, int vec, Expr path,
           const std::vector<int>& paths) const {
    Var xo("xo"), xi("xi");
    // Planes are independent: one task per plane, vectors along W. Tails are guarded, never
    // rounded up: a rounded-up pass would read past the input's rows.
    out.split(v.x, xo, xi, vec, TailStrategy::GuardWithIf).vectorize(xi).parallel(v.p);
    for (size_t i = 0; i < passes.size(); ++i) {
      InterpPass ps = passes[i];  // Func is a handle: scheduling a copy schedules the pass
      const bool last = i + 1 == passes.size();
      if (!last) {
        // An intermediate pass is a buffer that stays in cache: a plane per plane task, or,
        // when the output's own pass runs along x (it reads the intermediate's row y only),
        // the one row each output row needs, so rows are read and written as they stream.
        // (Measured: rows win where the x pass has several taps; nearest's is cheaper per plane.)
        const bool rows = row_intermediates && i + 2 == passes.size() && passes[i + 1].axis == 0;
        ps.g.compute_at(out, rows ? v.y : v.p).split(v.x, xo, xi, vec, TailStrategy::GuardWithIf).vectorize(xi);
      }
      // The running sum lives in registers, one vector of the consumer at a time. (Tried and
      // measured slower: blocks of several vectors with the taps loop outside, and along y/z
      // one row of sums with the taps loop outside the row.)
      if (ps.acc.defined()) ps.acc.compute_at(last ? out : ps.g, xi);
    }
    for (Func t : tables) t.compute_root();
    // One version of the x pass per closed-form path (dense or strided loads), besides the
    // table version (gathers). Specialisations come last: they copy the schedule given so far.
    bool x_pass_is_out = passes.empty();  // nearest: the output gathers every axis itself
    for (int id : paths) {
      Expr cond = path == id;
      for (size_t i = 0; i < passes.size(); ++i) {
        if (passes[i].axis != 0) continue;
        InterpPass ps = passes[i];
        if (ps.acc.defined()) ps.acc.update(0).specialize(cond);
        if (i + 1 == passes.size())
          x_pass_is_out = true;
        else
          ps.g.specialize(cond);
      }
      if (x_pass_is_out) out.specialize(cond);
    }
  }

  void gpu(Func out, const std::vector<InterpPass>& passes, const std::vector<Func>& tables) const {
    Var xi("xi"), yi("yi");
    for (size_t i = 0; i < passes.size(); ++i) {
      InterpPass ps = passes[i];
      const bool last = i + 1 == passes.size();
      if (!last) {
        ps.g.compute_root();
        tile(ps.g, xi, yi);
      }
      if (ps.acc.defined()) ps.acc.compute_at(last ? out : ps.g, xi);
    }
    tile(out, xi, yi);
    // The tables are tiny and depend on the sizes and scales only: they are built on the host
    // (the counting sorts of the inverse taps are serial scans) and copied to the device.
    for (Func t : tables) t.compute_root();
  }

  // One GPU thread per element: 2-D tiles over (x, y) with every (z, plane) a block row;
  // 1-D kernels tile (x, plane).
  void tile(Func f, Var xi, Var yi) const {
    Var xo("xo"), yo("yo"), zp("zp");
    if (dims == 1) {
      f.reorder(v.x, v.p, v.y, v.z).gpu_tile(v.x, v.p, xo, yo, xi, yi, 64, 4, TailStrategy::GuardWithIf);
    } else {
      f.fuse(v.z, v.p, zp).gpu_tile(v.x, v.y, xo, yo, xi, yi, 32, 8, TailStrategy::GuardWithIf).gpu_blocks(zp);
    }
  }
};

class InterpolateForward : public Generator<InterpolateForward> {
 public:
  GeneratorParam<InterpKind> kind{"kind", InterpKind::Linear, kKinds};
  GeneratorParam<int> dims{"dims", 2, 1, 3};

  Input<Buffer<float>> input{"input", 4};
  Input<double> scale_x{"scale_x"}, scale_y{"scale_y"}, scale_z{"scale_z"};
  Input<bool> align_corners{"align_corners"};
  Input<bool> exact{"exact"};                                         // nearest-exact
  Input<int> taps_x{"taps_x"}, taps_y{"taps_y"}, taps_z{"taps_z"};  // longest area bin
  Input<int> x_path{"x_path"};  // interpolate_paths.h (CPU kernels; the CUDA ones use the tables)
  // The output sizes (the tap tables need them before the output is defined; the output
  // buffer is required to have exactly these extents).
  Input<int> out_x{"out_x"}, out_y{"out_y"}, out_z{"out_z"};
  Output<Buffer<float>> output{"output", 4};

  InterpVars v;
  std::vector<InterpAxisTaps> axes;
  std::vector<InterpPass> passes;

  // Closed-form paths serve the x axis on the CPU, where its gathers are scalar loads; a GPU
  // gathers at no such cost.
  Expr x_path_expr(int a) { return a == 0 && !get_target().has_gpu_feature() ? Expr(x_path) : Expr(); }

  void generate() {
    const Expr scales[3] = {scale_x, scale_y, scale_z};
    const Expr taps[3] = {taps_x, taps_y, taps_z};
    const Expr outs[3] = {out_x, out_y, out_z};
    const char* names[3] = {"tx", "ty", "tz"};
    for (int a = 0; a < dims; ++a)
      axes.emplace_back(names[a], kind, input.dim(a).extent(), outs[a], scales[a], align_corners, exact, taps[a],
                        x_path_expr(a));

    Func in_f("in_f");
    in_f(v.x, v.y, v.z, v.p) = input(v.x, v.y, v.z, v.p);
    if (kind == InterpKind::Nearest) {
      // One gather: each output element copies the element its per-axis indices name.
      std::vector<Expr> args{v.x, v.y, v.z, v.p};
      for (int a = 0; a < dims; ++a) args[size_t(a)] = axes[size_t(a)].source(v.axis(a), 0);
      output(v.x, v.y, v.z, v.p) = in_f(args);
      return;
    }
    Func cur = in_f;
    for (int a : forward_order(kind, dims)) {
      passes.push_back(axes[size_t(a)].forward_pass("fwd_" + std::string(names[a]), cur, v, a));
      cur = passes.back().g;
    }
    output(v.x, v.y, v.z, v.p) = cur(v.x, v.y, v.z, v.p);
  }

  void schedule() {
    const Expr outs[3] = {out_x, out_y, out_z};
    for (int a = 0; a < dims; ++a) output.dim(a).set_bounds(0, outs[a]);
    std::vector<Func> tables;
    for (const auto& ax : axes)
      for (Func t : ax.forward_tables()) tables.push_back(t);
    InterpSchedule s{v, dims, kind != InterpKind::Nearest};
    if (get_target().has_gpu_feature())
      s.gpu(output, passes, tables);
    else
      s.cpu(output, passes, tables, natural_vector_size<float>(), x_path, axes[0].closed_paths());
  }
};

class InterpolateBackward : public Generator<InterpolateBackward> {
 public:
  GeneratorParam<InterpKind> kind{"kind", InterpKind::Linear, kKinds};
  GeneratorParam<int> dims{"dims", 2, 1, 3};

  Input<Buffer<float>> grad_output{"grad_output", 4};
  Input<double> scale_x{"scale_x"}, scale_y{"scale_y"}, scale_z{"scale_z"};
  Input<bool> align_corners{"align_corners"};
  Input<bool> exact{"exact"};
  // The most output positions that read one input position, per axis (the glue computes it
  // from the same formulas; the kernel checks it and fails rather than drop a term).
  Input<int> reach_x{"reach_x"}, reach_y{"reach_y"}, reach_z{"reach_z"};
  Input<int> x_path{"x_path"};  // interpolate_paths.h (CPU kernels; the CUDA ones use the tables)
  // The input sizes, i.e. the extents of grad_input (as out_* of the forward).
  Input<int> in_x{"in_x"}, in_y{"in_y"}, in_z{"in_z"};
  Output<Buffer<float>> grad_input{"grad_input", 4};

  InterpVars v;
  std::vector<InterpAxisTaps> axes;
  std::vector<InterpPass> passes;

  // Closed-form paths serve the x axis on the CPU, where its gathers are scalar loads; a GPU
  // gathers at no such cost.
  Expr x_path_expr(int a) { return a == 0 && !get_target().has_gpu_feature() ? Expr(x_path) : Expr(); }

  void generate() {
    const Expr scales[3] = {scale_x, scale_y, scale_z};
    const Expr reach[3] = {reach_x, reach_y, reach_z};
    const Expr ins[3] = {in_x, in_y, in_z};
    const char* names[3] = {"tx", "ty", "tz"};
    for (int a = 0; a < dims; ++a) {
      // The backward never needs the area tap count (it walks bins by their lengths).
      axes.emplace_back(names[a], kind, ins[a], grad_output.dim(a).extent(), scales[a], align_corners, exact,
                        Expr(INT_MAX), x_path_expr(a));
      axes.back().define_inverse(reach[a]);
    }
    Func g_f("g_f");
    g_f(v.x, v.y, v.z, v.p) = grad_output(v.x, v.y, v.z, v.p);
    std::vector<int> order = forward_order(kind, dims);
    std::reverse(order.begin(), order.end());
    Func cur = g_f;
    for (int a : order) {
      passes.push_back(axes[size_t(a)].backward_pass("bwd_" + std::string(names[a]), cur, v, a, reach[a]));
      cur = passes.back().g;
    }
    grad_input(v.x, v.y, v.z, v.p) = cur(v.x, v.y, v.z, v.p);
  }

  void schedule() {
    const Expr ins[3] = {in_x, in_y, in_z};
    for (int a = 0; a < dims; ++a) grad_input.dim(a).set_bounds(0, ins[a]);
    std::vector<Func> tables;
    for (const auto& ax : axes) {
      for (Func t : ax.forward_tables()) tables.push_back(t);
      for (Func t : ax.inverse_tables()) tables.push_back(t);
    }
    InterpSchedule s{v, dims, kind != InterpKind::Nearest};
    if (get_target().has_gpu_feature())
      s.gpu(grad_input, passes, tables);
    else
      s.cpu(grad_input, passes, tables, natural_vector_size<float>(), x_path, axes[0].closed_paths());
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(InterpolateForward, interpolate_forward)
HALIDE_REGISTER_GENERATOR(InterpolateBackward, interpolate_backward)
