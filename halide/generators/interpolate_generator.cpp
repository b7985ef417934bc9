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
// compiled as specialisations with dense or strided loads. The kernel checks the choice
// before any output is written, on every path: the sizes by a pipeline requirement, the taps
// by a walk comparing the closed form with the tables (InterpAxisTaps::fit_term; the
// backward compares the readers of each input), so a wrong path is an error naming it.
// The forward of linear and cubic also takes `y_path` and `z_path`: along y and z a tap is
// one row for the whole vector, so a closed form saves no loads there, but it tells bounds
// inference which rows an output row reads, so the earlier passes can be computed a few rows
// at a time as the output streams out (a sliding window) instead of a whole plane up front.
// Area's forward takes `y_path` for its r:1 forms: a constant bin length (measured below).
// Along x, exact 2x with align_corners=false has fixed weights as well (kXUpsample2Half).
//
// Forward: nearest gathers all axes at once; the other kinds apply one axis at a time
// (separable). Which axis first matters for speed only: a pass along x gathers (its taps
// vary per lane), a pass along y or z reads whole rows. Upsampling kinds go x first (the x
// pass then runs on the fewer, input-sized rows); area, which almost always shrinks, goes x
// last (on the fewer, output-sized rows). Backward: the transposed passes in reverse order,
// each a gather through the inverse taps (interpolate_axis.h); nearest 2-D at exactly 2x on
// both axes has a one-pass CPU backward of its own (InterpolateBackwardNearestX2, below).
//
// Every float operation is strict (no fast-math): NaN and Inf flow through IEEE arithmetic
// exactly as in the reference (a zero weight times inf is NaN; an absent tap is skipped), and
// the tap coordinates repeat the reference's double operations bit for bit.
//
// Measured (CPU forward, 2 threads, on a 2-core machine shared with other work, so every
// figure spans a wide range): against float32 cv::resize (one [H, W] plane per call, output
// allocated once, 2 threads) and a 2-thread memcpy moving the same bytes, the three
// alternating run by run, medians of 9 in each of two runs:
//   mode (standard shape)              OpenCV ms / ours ms    memcpy ms / ours ms
//   bilinear x2 [8,256,64,64]          2.00, 2.27             51%, 70%
//   nearest x2 [8,256,64,64]           3.82, 2.86             87%, 83%
//   bicubic x2 [8,128,64,64]           5.93, 3.40             41%, 48%
//   area 128->32 [8,64,128,128]        2.49, 2.02             48%, 59%
// Earlier runs the same way gave bilinear 1.66-1.95x. (The bench's opencv peer works on
// CV_64F data into a fresh output per call, which makes it tens of times slower: not this
// comparison.) Bilinear x2's inner loops (assembly): the y pass is 4 instructions per 16
// outputs, the x pass 24 per 16 (its per-output weights are strided loads, 4 permutes; the
// interleave 3 more), while nearest, 3 per 16, reaches 83-87% of memcpy. Tried and measured
// slower: output rows in pairs (split by 2, unrolled: 0.88-0.98x; with both rows inside one
// x loop, 0.61-0.71x).
//
// Fixed weights and bin lengths (later runs, kernels called directly with one path and then
// the other on the same data, alternating with float32 cv::resize and a 2-thread memcpy of
// the same bytes, medians of 15 on the shared machine, load average 4-8, so wide spreads):
//   bilinear x2, align_corners=false: with the weights fixed (x_path kXUpsample2Half) the x
//     pass is 10 instructions per 16 (3 multiplies, as 3/4 a[i] serves both output lanes, 2
//     adds, 3 for the interleave, the store) instead of 24, with the same output bit for bit,
//     and no faster beyond the noise: 0.84-1.07x in four runs. Not bound by instructions:
//     at 51-66% of the memcpy it writes 4 bytes for each byte read, and nearest x2, 3 per 16
//     on the same bytes, reaches 75-86%; what is left over nearest is the intermediate rows
//     (written by the x pass, read twice by the y pass), not measured apart. OpenCV / ours
//     1.44-1.94x in the same runs: short of 2x.
//   bicubic x2: the x pass drops from 46 instructions per 16 to 19: 0.83-0.95x the time of
//     the tables' weights in four runs; 38-63% of the memcpy, OpenCV / ours 2.7-3.4x.
//   trilinear x2: the same x path, 0.86-1.40x in three runs (noise); 38-85% of the memcpy.
//   area 128->32: with the tables the y pass spent about 55 instructions per 16 sums (per
//     tap a table load, a clamp and a row offset, the tap loop of run-time length, a divide);
//     on the r:1 path along y as well (y_path) it is 6 (4 adds from memory, a multiply by
//     1/4, the exact reciprocal, the store) and the x pass 29 (4 stride-4 loads as permutes):
//     0.35-0.41x the time in two runs, 75-156% of the memcpy (it reads 16 bytes per byte
//     written), OpenCV / ours 4.9-6.3x.
//
// Rings (later runs, the same way: the previous kernels against these, float32 cv::resize and
// a 2-thread memcpy of the same bytes, medians of 31-81, load average 4-8, so first quartiles
// are given beside the medians). The sliding window along y (z for trilinear) kept a whole
// plane of the pass before it; it now keeps a ring of 4 rows (linear) or 8 (cubic) on the 2x
// paths (the tables' paths keep the whole axis), with the output the same bit for bit:
//   bilinear x2 1.12-1.27x faster in four runs of six (medians of the per-run ratio; 1.02 and
//   1.04 in the other two); with align_corners=true (its 2x path, weights from the tables)
//   1.26x in one; bicubic x2 1.22-1.24x in two of three (0.99 in the third);
//   trilinear x2 unchanged within the noise (0.90-0.99). Also tried, no gain beyond the noise:
//   outputs 64-byte aligned instead of 16 bytes past (1.02); parallel tasks of 8 planes
//   (1.01-1.04); trilinear in strips of 8 rows so that its ring of y-pass slices stays in L1
//   (0.90-0.97, slower).
// What bounds each mode now (% of the memcpy, median and first quartile): Halide 14 stores
// through the cache, so every output line is read before it is written (in + 2 out bytes move,
// against the memcpy's in + out). A copy loop with cached stores ran at 110-124% of the memcpy,
// one with non-temporal stores at 120-153%; nearest x2, the bilinear bytes with 3 instructions
// per 16, is a cached-store kernel's ceiling: 67-100%.
//   bilinear x2: 52-76%, 1.14-1.37x nearest x2's time (first quartiles, three runs); OpenCV /
//     ours 1.69-2.05x (five runs; the previous kernel 1.46-1.73x). A steady 2x needs about the
//     speed of nearest x2 (OpenCV's bilinear / our nearest: 1.95x in the 2026-11-25b record),
//     the ceiling itself. A hand-written bilinear x2 (C++, AVX-512) with non-temporal stores
//     ran at 0.55-0.70x the speed of the same code with cached stores on this machine: no
//     evident way past the ceiling here.
//   bicubic x2: 37-77%; nearest at its shape takes 0.34-0.45x its time, so memory does not
//     bound it: its instructions (x pass 19 per 16, y pass 4 taps) are the likely bound, not
//     measured apart; OpenCV / ours 3.6-4.4x.
//   trilinear x2: 28-59%; nearest 3-D at its shape takes 0.18-0.29x its time: not memory
//     either; not measured further.
//   area 128->32: 62-90% (it reads 16 bytes per byte written: the read side of the copy).
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

// Applies the separable passes along the axes of `order` in turn, each reading the result of
// the one before (the first reads `first`), into `passes`; returns the last one's result.
// pass(a, in) is the pass along axis a reading `in`.
template <class Pass>
Func chain_passes(Func first, const std::vector<int>& order, std::vector<InterpPass>& passes, Pass pass) {
  Func cur = first;
  for (int a : order) {
    passes.push_back(pass(a, cur));
    cur = passes.back().g;
  }
  return cur;
}

// The tap tables of every axis: the forward ones, and with `inverse` the backward's inverse
// taps too.
std::vector<Func> tap_tables(const std::vector<InterpAxisTaps>& axes, bool inverse) {
  std::vector<Func> tables;
  for (const auto& ax : axes) {
    for (Func t : ax.forward_tables()) tables.push_back(t);
    if (inverse)
      for (Func t : ax.inverse_tables()) tables.push_back(t);
  }
  return tables;
}

// Requires, before any work, that the sizes of every axis fit its chosen closed-form path
// (InterpAxisTaps::sizes_fit); the tables check the taps index by index.
template <class Gen>
void require_paths_fit(Gen& gen, const std::vector<InterpAxisTaps>& axes) {
  for (const auto& ax : axes)
    if (ax.path().defined())
      gen.add_requirement(ax.sizes_fit(), ax.name() + ":", ax.path_name(), "=", ax.path(), "does not fit the sizes",
                          ax.in(), "->", ax.out());
}

// One axis' versions for the CPU schedule: the condition of each closed form's version and
// the condition that names the tables (undefined: the axis has no closed form). `fold`, when
// defined: the rows (slices) of the pass before this axis' pass to keep while the window
// slides along it (InterpSchedule::cpu).
struct InterpAxisPaths {
  std::vector<Expr> closed;
  Expr tables;
  Expr fold;
};

// Schedules shared by both directions. `out` is the pipeline output, `passes` the separable
// passes (the last one is inlined into `out`), `tables` the per-axis tap tables.
struct InterpSchedule {
  const InterpVars& v;
  int dims;

  // Either direction: `out` has exactly the extents `sizes` (kernel inputs: the tap tables
  // need them before `out` is defined), and it, its passes and the tables are scheduled for
  // the target: on the CPU with the versions that paths() gives per axis.
  template <class Out, class Paths>
  void apply(Out& out, const Expr (&sizes)[3], const std::vector<InterpPass>& passes, const std::vector<Func>& tables,
             const Target& target, Paths paths) const {
    for (int a = 0; a < dims; ++a) out.dim(a).set_bounds(0, sizes[a]);
    if (target.has_gpu_feature())
      gpu(out, passes, tables);
    else
      cpu(out, passes, tables, target.natural_vector_size<float>(), paths());
  }

  // `paths`: per axis, the versions it may take.
  void cpu(Func out, const std::vector<InterpPass>& passes, const std::vector<Func>& tables, int vec,
           const std::vector<InterpAxisPaths>& paths) const {
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
        // (Measured: rows win for every kind now that the backward's x pass of nearest x2 has
        // strided loads; before, with gathers, nearest's was cheaper per plane.)
        const bool rows = i + 2 == passes.size() && passes[i + 1].axis == 0;
        // Passes that go x, y, z (the forward of the upsampling kinds) slide instead: the
        // output's pass along b computes, per step along b, the few new rows (2-D) or slices
        // (3-D) of the pass before it, so the intermediate is written and read while hot and
        // the computing overlaps the output's stores. With a table along b its bounds are the
        // whole axis, and the window is computed once, at the first step: the plane schedule.
        // (Measured: bilinear x2 forward 12% faster than a plane per task.)
        // Where the axis says how many rows the window spans (`fold`), only those are kept,
        // as a ring, instead of a whole plane of the pass before (32 KiB at the bilinear x2
        // bench shape, all of L1). The ring is stored at the loop just outside the sliding
        // one: Halide folds storage only there, and a 2-D kernel has its unit z loop between
        // the plane loop and y. (Measured: file comment, "Rings".)
        const int b = passes[i + 1].axis;
        const Expr fold = size_t(b) < paths.size() ? paths[size_t(b)].fold : Expr();
        if (b > ps.axis && i + 2 == passes.size() && fold.defined())
          ps.g.store_at(out, b == 1 ? v.z : v.p).compute_at(out, v.axis(b)).fold_storage(v.axis(b), fold);
        else if (b > ps.axis && i + 2 == passes.size())
          ps.g.store_at(out, v.p).compute_at(out, v.axis(b));
        else if (b > ps.axis && i + 3 == passes.size() && passes[i + 2].axis > b)
          ps.g.compute_at(passes[i + 1].g, v.axis(passes[i + 2].axis));  // one slice per slice of its consumer
        else
          ps.g.compute_at(out, rows ? v.y : v.p);
        ps.g.split(v.x, xo, xi, vec, TailStrategy::GuardWithIf).vectorize(xi);
      }
      // Padded rows (closed forms along x): one row per row of the pass that reads them, the
      // dense middle of each class vectorised, its clamped ends scalar.
      if (ps.pad.defined()) {
        ps.pad.compute_at(last ? out : ps.g, v.y);
        std::vector<bool> mid(size_t(ps.pad.num_update_definitions()), false);
        for (const auto& [u, r] : ps.pad_mids) {
          RVar ro("ro"), ri("ri");
          ps.pad.update(u).split(r, ro, ri, vec, TailStrategy::GuardWithIf).vectorize(ri);
          mid[size_t(u)] = true;
        }
        for (size_t u = 0; u < mid.size(); ++u)
          if (!mid[u]) ps.pad.update(int(u)).unscheduled();
      }
      // The running sum lives in registers, one vector of the consumer at a time. (Tried and
      // measured slower: blocks of several vectors with the taps loop outside, and along y/z
      // one row of sums with the taps loop outside the row.)
      if (ps.acc.defined()) ps.acc.compute_at(last ? out : ps.g, xi);
    }
    for (Func t : tables) t.compute_root();
    // One version of each pass per closed-form path of its axis (along x: dense or strided
    // loads instead of gathers), besides the table version. The output has one version per
    // combination of the axes' paths, as its loops hold the sliding windows of the passes
    // before it; where several axes have closed forms, the tables are a named choice too, so
    // that every version knows each axis' taps (a window whose bounds might be either would be
    // recomputed at every step). Specialisations come last: they copy the schedule given so far.
    int closed_axes = 0;
    for (const auto& ap : paths) closed_axes += ap.closed.empty() ? 0 : 1;
    std::vector<Expr> out_conds{Expr()};  // undefined: no condition yet
    for (size_t a = 0; a < paths.size(); ++a) {
      if (paths[a].closed.empty()) continue;
      std::vector<Expr> conds;
      for (const Expr& cond : paths[a].closed) {
        for (size_t i = 0; i < passes.size(); ++i) {
          if (passes[i].axis != int(a)) continue;
          InterpPass ps = passes[i];
          if (ps.acc.defined()) ps.acc.update(0).specialize(cond);
          if (i + 1 < passes.size()) ps.g.specialize(cond);
        }
        for (const Expr& c : out_conds) conds.push_back(c.defined() ? (c && cond) : cond);
      }
      const Expr& tables = paths[a].tables;
      for (const Expr& c : out_conds) {
        if (closed_axes > 1)
          conds.push_back(c.defined() ? (c && tables) : tables);
        else if (c.defined())
          conds.push_back(c);
      }
      out_conds = conds;
    }
    for (const Expr& c : out_conds)
      if (c.defined()) out.specialize(c);
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
  Input<int> y_path{"y_path"}, z_path{"z_path"};  // the same, along y and z (linear, cubic; area's y)
  // The output sizes (the tap tables need them before the output is defined; the output
  // buffer is required to have exactly these extents).
  Input<int> out_x{"out_x"}, out_y{"out_y"}, out_z{"out_z"};
  Output<Buffer<float>> output{"output", 4};

  InterpVars v;
  std::vector<InterpAxisTaps> axes;
  std::vector<InterpPass> passes;

  // Closed-form paths serve the CPU: along x, where its gathers are scalar loads; along y and
  // z, for the bounds of the sliding windows of linear and cubic, and along y for area's
  // constant bin length (file comment). A GPU
  // gathers at no such cost and computes every pass whole.
  Expr path_expr(int a) {
    if (get_target().has_gpu_feature()) return Expr();
    if (a == 0) return x_path;
    if (kind == InterpKind::Area && a == 1) return y_path;  // a constant bin length (forward_pass)
    if (kind != InterpKind::Linear && kind != InterpKind::Cubic) return Expr();
    return a == 1 ? Expr(y_path) : Expr(z_path);
  }

  // The rows of the previous pass that the sliding window of linear or cubic along a y or z
  // axis keeps: on a closed form, a 2x upsampling, each output row reads 2 (linear) or 4
  // (cubic) consecutive rows, so a ring of 4 or 8 (Halide checks at run time that it holds
  // them); through the tables the window is the whole input axis, computed at the first step.
  Expr window_rows(const InterpAxisTaps& ax, const Expr& tables) const {
    if (!tables.defined() || kind == InterpKind::Area) return Expr();
    return select(tables, ax.in(), kind == InterpKind::Cubic ? 8 : 4);
  }

  void generate() {
    const Expr scales[3] = {scale_x, scale_y, scale_z};
    const Expr taps[3] = {taps_x, taps_y, taps_z};
    const Expr outs[3] = {out_x, out_y, out_z};
    const char* names[3] = {"tx", "ty", "tz"};
    for (int a = 0; a < dims; ++a)
      axes.emplace_back(names[a], kind, input.dim(a).extent(), outs[a], scales[a], align_corners, exact, taps[a],
                        path_expr(a), a == 0);

    Func in_f("in_f");
    in_f(v.x, v.y, v.z, v.p) = input(v.x, v.y, v.z, v.p);
    if (kind == InterpKind::Nearest) {
      // One gather: each output element copies the element its per-axis indices name.
      std::vector<Expr> args{v.x, v.y, v.z, v.p};
      for (int a = 0; a < dims; ++a) args[size_t(a)] = axes[size_t(a)].source(v.axis(a), 0);
      output(v.x, v.y, v.z, v.p) = in_f(args);
      return;
    }
    Func cur = chain_passes(in_f, forward_order(kind, dims), passes, [&](int a, Func in) {
      return axes[size_t(a)].forward_pass("fwd_" + std::string(names[a]), in, v, a);
    });
    output(v.x, v.y, v.z, v.p) = cur(v.x, v.y, v.z, v.p);
  }

  void schedule() {
    require_paths_fit(*this, axes);
    const Expr outs[3] = {out_x, out_y, out_z};
    InterpSchedule{v, dims}.apply(output, outs, passes, tap_tables(axes, false), get_target(), [&] {
      std::vector<InterpAxisPaths> paths;
      for (const auto& ax : axes) {
        const Expr tables = ax.path().defined() ? ax.path() == oplab_interp::kXTables : Expr();
        paths.push_back({ax.closed_conditions(), tables, window_rows(ax, tables)});
      }
      return paths;
    });
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
  Input<int> y_path{"y_path"}, z_path{"z_path"};  // unused: the forward's signature (the glue shares it)
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
    Func cur = chain_passes(g_f, order, passes, [&](int a, Func in) {
      return axes[size_t(a)].backward_pass("bwd_" + std::string(names[a]), in, v, a, reach[a]);
    });
    grad_input(v.x, v.y, v.z, v.p) = cur(v.x, v.y, v.z, v.p);
  }

  void schedule() {
    require_paths_fit(*this, axes);
    const Expr ins[3] = {in_x, in_y, in_z};
    InterpSchedule{v, dims}.apply(grad_input, ins, passes, tap_tables(axes, true), get_target(), [&] {
      return std::vector<InterpAxisPaths>{{axes[0].closed_conditions(reach_x), Expr()}};
    });
  }
};

// The backward of nearest 2-D at exactly 2x along x and y (both axes on kXUpsample2), CPU:
// input (x, y) gathers its four readers (2x, 2y), (2x, 2y+1), (2x+1, 2y), (2x+1, 2y+1) in one
// pass. InterpolateBackward gets there in two, a y pass into a row buffer through the inverse
// tables (per vector a loop over the readers, a table load and a branch each) and an x pass
// over it; this one reads each vector of grad_output once, with two dense loads and a shuffle
// per stride-2 run, and writes grad_input. The sum is the two passes' own, (g(2x, 2y) +
// g(2x, 2y+1)) + (g(2x+1, 2y) + g(2x+1, 2y+1)), so the values are the same (a zero's sign
// aside: the passes start their sums from +0). The glue calls it only when it chose
// kXUpsample2 on both axes; the kernel fails unless both paths say so and the tables agree
// (the forward tables' walk, fit_term), so a wrong choice is an error, never a wrong sum. The
// reaches are not read: with the taps 2x's, every input has exactly its two readers per axis.
// Same signature as interpolate_backward (the glue's BackwardFn).
// Measured (docs/bench/drivers/interp_nearest_backward.cpp: both kernels alternately on
// [128 planes, 128x128] -> 64x64, medians of 41, the caches flushed before each call as the
// benchmark's peers leave them): one thread 0.63-0.67 ms against 0.96-0.97 for the two passes,
// two threads 0.28-0.34 against 0.48-0.50; in cache 0.11-0.12 against 0.27-0.29. A plain C++
// loop of the same reads, flushed: 0.54.
class InterpolateBackwardNearestX2 : public Generator<InterpolateBackwardNearestX2> {
 public:
  Input<Buffer<float>> grad_output{"grad_output", 4};
  Input<double> scale_x{"scale_x"}, scale_y{"scale_y"}, scale_z{"scale_z"};
  Input<bool> align_corners{"align_corners"};
  Input<bool> exact{"exact"};
  Input<int> reach_x{"reach_x"}, reach_y{"reach_y"}, reach_z{"reach_z"};  // not read (above)
  Input<int> x_path{"x_path"}, y_path{"y_path"}, z_path{"z_path"};
  Input<int> in_x{"in_x"}, in_y{"in_y"}, in_z{"in_z"};
  Output<Buffer<float>> grad_input{"grad_input", 4};

  InterpVars v;
  std::vector<InterpAxisTaps> axes;

  void generate() {
    const Expr scales[2] = {scale_x, scale_y}, ins[2] = {in_x, in_y}, paths[2] = {x_path, y_path};
    const char* names[2] = {"tx", "ty"};
    for (int a = 0; a < 2; ++a)
      axes.emplace_back(names[a], InterpKind::Nearest, ins[a], grad_output.dim(a).extent(), scales[a], align_corners,
                        exact, Expr(INT_MAX), paths[a]);
    // The readers 2s and 2s + 1 of s, promised inside grad_output: the requirement that the
    // sizes fit (require_paths_fit: out = 2 in) runs before any read, and bounds inference
    // then checks the promised range, so on sizes that do not fit the error names the path.
    // (Clamped instead, with likely(), the last row of every plane fell out of the steady
    // state: 25% slower in cache.) fit_term() is 0 once the axis' tables agree with the form,
    // and every read depends on it.
    auto reader = [&](int a, Expr s, int j) {
      Expr last = grad_output.dim(a).extent() - 1;
      return unsafe_promise_clamped(2 * s + j, 0, last) + axes[size_t(a)].fit_term();
    };
    Expr X0 = reader(0, v.x, 0), X1 = reader(0, v.x, 1), Y0 = reader(1, v.y, 0), Y1 = reader(1, v.y, 1);
    auto g = [&](Expr x, Expr y) { return grad_output(x, y, v.z, v.p); };
    grad_input(v.x, v.y, v.z, v.p) = (g(X0, Y0) + g(X0, Y1)) + (g(X1, Y0) + g(X1, Y1));
  }

  void schedule() {
    using oplab_interp::kXUpsample2;
    add_requirement(x_path == kXUpsample2 && y_path == kXUpsample2, "nearest x2 backward kernel: x_path =", x_path,
                    "y_path =", y_path, "(it serves only", int(kXUpsample2), "on both)");
    require_paths_fit(*this, axes);
    grad_input.dim(0).set_bounds(0, in_x);
    grad_input.dim(1).set_bounds(0, in_y);
    Var xo("xo"), xi("xi");
    grad_input.split(v.x, xo, xi, natural_vector_size<float>(), TailStrategy::GuardWithIf).vectorize(xi).parallel(v.p);
    for (const auto& ax : axes)
      for (Func t : ax.forward_tables()) t.compute_root();
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(InterpolateForward, interpolate_forward)
HALIDE_REGISTER_GENERATOR(InterpolateBackward, interpolate_backward)
HALIDE_REGISTER_GENERATOR(InterpolateBackwardNearestX2, interpolate_backward_nearest_x2)
