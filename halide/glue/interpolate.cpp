// interpolate on the Halide kernels (generators/interpolate_generator.cpp): the tensors as
// 4-D (W, H, D, N*C) float32 buffers, the per-axis kernel scale of SPEC §6 (core/params.h
// computes it from size / scale_factor / recompute / align_corners), two per-axis bounds the
// kernels need as loop extents: the longest area bin (forward) and the reach, the most output
// positions that read one input position (backward), and each axis' closed-form path
// (exact 2x upsampling, 2:1 and 4:1 area). The kernels check all of them against their own
// tap tables and fail rather than compute with a wrong one.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "core/params.h"
#include "halide/generators/interpolate_paths.h"
#include "halide/glue/interpolate_antialias.h"
#include "halide/glue/interpolate_plan.h"
#include "halide/halide_glue.h"
#include "halide/ops_glue.h"
#include "interp_area1_bwd_cpu.h"
#include "interp_area1_bwd_cuda.h"
#include "interp_area1_bwd_opencl.h"
#include "interp_area1_fwd_cpu.h"
#include "interp_area1_fwd_cuda.h"
#include "interp_area1_fwd_opencl.h"
#include "interp_area2_bwd_cpu.h"
#include "interp_area2_bwd_cuda.h"
#include "interp_area2_bwd_opencl.h"
#include "interp_area2_fwd_cpu.h"
#include "interp_area2_fwd_cuda.h"
#include "interp_area2_fwd_opencl.h"
#include "interp_area3_bwd_cpu.h"
#include "interp_area3_bwd_cuda.h"
#include "interp_area3_bwd_opencl.h"
#include "interp_area3_fwd_cpu.h"
#include "interp_area3_fwd_cuda.h"
#include "interp_area3_fwd_opencl.h"
#include "interp_cubic2_bwd_cpu.h"
#include "interp_cubic2_bwd_cuda.h"
#include "interp_cubic2_bwd_opencl.h"
#include "interp_cubic2_fwd_cpu.h"
#include "interp_cubic2_fwd_cuda.h"
#include "interp_cubic2_fwd_opencl.h"
#include "interp_linear1_bwd_cpu.h"
#include "interp_linear1_bwd_cuda.h"
#include "interp_linear1_bwd_opencl.h"
#include "interp_linear1_fwd_cpu.h"
#include "interp_linear1_fwd_cuda.h"
#include "interp_linear1_fwd_opencl.h"
#include "interp_linear2_bwd_cpu.h"
#include "interp_linear2_bwd_cuda.h"
#include "interp_linear2_bwd_opencl.h"
#include "interp_linear2_fwd_cpu.h"
#include "interp_linear2_fwd_cuda.h"
#include "interp_linear2_fwd_opencl.h"
#include "interp_linear3_bwd_cpu.h"
#include "interp_linear3_bwd_cuda.h"
#include "interp_linear3_bwd_opencl.h"
#include "interp_linear3_fwd_cpu.h"
#include "interp_linear3_fwd_cuda.h"
#include "interp_linear3_fwd_opencl.h"
#include "interp_nearest1_bwd_cpu.h"
#include "interp_nearest1_bwd_cuda.h"
#include "interp_nearest1_bwd_opencl.h"
#include "interp_nearest1_fwd_cpu.h"
#include "interp_nearest1_fwd_cuda.h"
#include "interp_nearest1_fwd_opencl.h"
#include "interp_nearest2_bwd_cpu.h"
#include "interp_nearest2_bwd_cuda.h"
#include "interp_nearest2_bwd_opencl.h"
#include "interp_nearest2_fwd_cpu.h"
#include "interp_nearest2_fwd_cuda.h"
#include "interp_nearest2_fwd_opencl.h"
#include "interp_nearest2x2_bwd_cpu.h"
#include "interp_nearest3_bwd_cpu.h"
#include "interp_nearest3_bwd_cuda.h"
#include "interp_nearest3_bwd_opencl.h"
#include "interp_nearest3_fwd_cpu.h"
#include "interp_nearest3_fwd_cuda.h"
#include "interp_nearest3_fwd_opencl.h"

namespace oplab::halide_glue {

namespace {

enum class Kind { Nearest, Linear, Cubic, Area };

Kind kind_of(InterpMode m) {
  switch (m) {
    case InterpMode::Nearest:
    case InterpMode::NearestExact: return Kind::Nearest;
    case InterpMode::Linear:
    case InterpMode::Bilinear:
    case InterpMode::Trilinear: return Kind::Linear;
    case InterpMode::Bicubic: return Kind::Cubic;
    case InterpMode::Area: return Kind::Area;
  }
  throw std::logic_error("interpolate: unknown mode");
}

// Every kernel, forward or backward, of every kind and rank has this signature (the generators
// share their parameter lists across kinds and ranks).
using ForwardFn = int (*)(const void*, halide_buffer_t*, double, double, double, bool, bool, int, int, int, int, int, int,
                          int, int, int, halide_buffer_t*);
using BackwardFn = ForwardFn;

struct Kernels {
  const char* name;  // its kernel path (kInterpPaths)
  Kind kind;
  int dims;
  ForwardFn fwd_cpu, fwd_cuda, fwd_opencl;
  BackwardFn bwd_cpu, bwd_cuda, bwd_opencl;
  // CPU, 2x on x and y (both paths kXUpsample2): the backward in one pass (nearest 2-D).
  BackwardFn bwd_cpu_x2 = nullptr;
};

const Kernels kKernels[] = {
    {"nearest 1-D", Kind::Nearest, 1, interp_nearest1_fwd_cpu, interp_nearest1_fwd_cuda, interp_nearest1_fwd_opencl, interp_nearest1_bwd_cpu, interp_nearest1_bwd_cuda, interp_nearest1_bwd_opencl},
    {"nearest 2-D", Kind::Nearest, 2, interp_nearest2_fwd_cpu, interp_nearest2_fwd_cuda, interp_nearest2_fwd_opencl, interp_nearest2_bwd_cpu, interp_nearest2_bwd_cuda, interp_nearest2_bwd_opencl, interp_nearest2x2_bwd_cpu},
    {"nearest 3-D", Kind::Nearest, 3, interp_nearest3_fwd_cpu, interp_nearest3_fwd_cuda, interp_nearest3_fwd_opencl, interp_nearest3_bwd_cpu, interp_nearest3_bwd_cuda, interp_nearest3_bwd_opencl},
    {"linear 1-D", Kind::Linear, 1, interp_linear1_fwd_cpu, interp_linear1_fwd_cuda, interp_linear1_fwd_opencl, interp_linear1_bwd_cpu, interp_linear1_bwd_cuda, interp_linear1_bwd_opencl},
    {"linear 2-D", Kind::Linear, 2, interp_linear2_fwd_cpu, interp_linear2_fwd_cuda, interp_linear2_fwd_opencl, interp_linear2_bwd_cpu, interp_linear2_bwd_cuda, interp_linear2_bwd_opencl},
    {"linear 3-D", Kind::Linear, 3, interp_linear3_fwd_cpu, interp_linear3_fwd_cuda, interp_linear3_fwd_opencl, interp_linear3_bwd_cpu, interp_linear3_bwd_cuda, interp_linear3_bwd_opencl},
    {"cubic 2-D", Kind::Cubic, 2, interp_cubic2_fwd_cpu, interp_cubic2_fwd_cuda, interp_cubic2_fwd_opencl, interp_cubic2_bwd_cpu, interp_cubic2_bwd_cuda, interp_cubic2_bwd_opencl},
    {"area 1-D", Kind::Area, 1, interp_area1_fwd_cpu, interp_area1_fwd_cuda, interp_area1_fwd_opencl, interp_area1_bwd_cpu, interp_area1_bwd_cuda, interp_area1_bwd_opencl},
    {"area 2-D", Kind::Area, 2, interp_area2_fwd_cpu, interp_area2_fwd_cuda, interp_area2_fwd_opencl, interp_area2_bwd_cpu, interp_area2_bwd_cuda, interp_area2_bwd_opencl},
    {"area 3-D", Kind::Area, 3, interp_area3_fwd_cpu, interp_area3_fwd_cuda, interp_area3_fwd_opencl, interp_area3_bwd_cpu, interp_area3_bwd_cuda, interp_area3_bwd_opencl},
};

const Kernels& kernels_for(Kind kind, int dims) {
  for (const auto& k : kKernels)
    if (k.kind == kind && k.dims == dims) return k;
  throw std::logic_error("interpolate: no Halide kernel for this mode and rank");
}

// The first and last source index that output position d of one axis reads, by the formulas
// of SPEC §6 in the operations the kernels use (so the bounds below are the kernels' own).
struct TapSpan {
  int64_t first, last;
};

TapSpan tap_span(Kind kind, bool exact, const InterpAxis& a, bool align_corners, int64_t d) {
  switch (kind) {
    case Kind::Nearest: {
      const float scale = interp_nearest_scale(a);
      const float pos = (float(d) + (exact ? 0.5f : 0.0f)) * scale;
      const int64_t i = std::min(int64_t(std::floor(double(pos))), a.in - 1);
      return {i, i};
    }
    case Kind::Linear:
    case Kind::Cubic: {
      const double scale = interp_area_scale(a, align_corners);
      double src = align_corners ? scale * double(d) : scale * (double(d) + 0.5) - 0.5;
      if (kind == Kind::Linear) {
        src = std::max(src, 0.0);
        const int64_t i0 = std::min(int64_t(std::floor(src)), a.in - 1);
        return {i0, i0 + (i0 < a.in - 1 ? 1 : 0)};
      }
      const int64_t i = int64_t(std::floor(src));
      return {std::clamp<int64_t>(i - 1, 0, a.in - 1), std::clamp<int64_t>(i + 2, 0, a.in - 1)};
    }
    case Kind::Area: {
      const int64_t start = (d * a.in) / a.out, end = ((d + 1) * a.in + a.out - 1) / a.out;
      return {start, end - 1};
    }
  }
  return {0, 0};
}

// Longest area bin of an axis (the forward's tap count).
int area_taps(const InterpAxis& a) {
  int64_t most = 1;
  for (int64_t d = 0; d < a.out; ++d) {
    const TapSpan s = tap_span(Kind::Area, false, a, false, d);
    most = std::max(most, s.last - s.first + 1);
  }
  return int(most);
}

// The most output positions whose taps cover one input position (the backward's loop extent).
int reach(Kind kind, bool exact, const InterpAxis& a, bool align_corners) {
  std::vector<int64_t> delta(size_t(a.in) + 1, 0);
  for (int64_t d = 0; d < a.out; ++d) {
    const TapSpan s = tap_span(kind, exact, a, align_corners, d);
    ++delta[size_t(s.first)];
    --delta[size_t(s.last) + 1];
  }
  int64_t covered = 0, most = 1;
  for (int64_t s = 0; s < a.in; ++s) most = std::max(most, covered += delta[size_t(s)]);
  return int(most);
}

// Parameters of one kernel call, per kernel axis (x = W, y = H, z = D).
struct Call {
  const Kernels* k = nullptr;
  std::array<double, 3> scale{0, 0, 0};
  std::array<int, 3> taps{1, 1, 1}, reach{1, 1, 1};
  std::array<int, 3> in{1, 1, 1}, out{1, 1, 1};
  int planes = 0;
  bool align = false, exact = false;
  // Per kernel axis (x, y, z); the kernels use y and z only in the forward of linear and cubic.
  std::array<int, 3> path{oplab_interp::kXTables, oplab_interp::kXTables, oplab_interp::kXTables};
};

// Whether the 2x closed form of linear or cubic (interpolate_axis.h: i = floor((d-1)/2), taps
// from i, linear's clamped at 0) names every tap the tables would, by the tables' own double
// operations. Only the indices must agree (the weights always come from the tables), so this
// covers align_corners=true as well, whose x2 scale (in-1)/(2in-1) floors like (d-1)/2 except
// where a rounding or the border says otherwise (then the tables serve).
bool upsample2_fits(Kind kind, const InterpAxis& a, bool align_corners) {
  if (a.out != 2 * a.in) return false;
  const double scale = interp_area_scale(a, align_corners);
  const int64_t last = a.in - 1;
  for (int64_t d = 0; d < a.out; ++d) {
    const double src = align_corners ? scale * double(d) : scale * (double(d) + 0.5) - 0.5;
    const int64_t half = d == 0 ? -1 : (d - 1) / 2;  // floor((d-1)/2)
    if (kind == Kind::Linear) {
      // i1 follows from i0 the same way in both (i0 + 1, clamped to in-1).
      if (std::min(int64_t(std::floor(std::max(src, 0.0))), last) != std::max<int64_t>(half, 0)) return false;
    } else {
      const int64_t i = int64_t(std::floor(src));
      for (int64_t k = 0; k < 4; ++k)
        if (std::clamp<int64_t>(i - 1 + k, 0, last) != std::clamp<int64_t>(half - 1 + k, 0, last)) return false;
    }
  }
  return true;
}

// An axis' closed-form path when its taps have one (interpolate_paths.h); the kernels
// verify the choice against their tables. `x`: the kernels' x axis (W), the only one with
// fixed-weight forms (along y and z a weight is one scalar per row).
int choose_path(Kind kind, const InterpAxis& a, bool align_corners, bool x) {
  using namespace oplab_interp;
  switch (kind) {
    case Kind::Nearest:
      return interp_nearest_scale(a) == 0.5f && a.out == 2 * a.in ? kXUpsample2 : kXTables;
    case Kind::Linear:
    case Kind::Cubic:
      if (!upsample2_fits(kind, a, align_corners)) return kXTables;
      return x && !align_corners && interp_area_scale(a, false) == 0.5 ? kXUpsample2Half : kXUpsample2;
    case Kind::Area:
      return a.in == 2 * a.out ? kXPool2 : a.in == 4 * a.out ? kXPool4 : kXTables;
  }
  return kXTables;
}

Call plan(const InterpParams& p) {
  Call c;
  const Kind kind = kind_of(p.mode);
  const int dims = int(p.axes.size());
  c.k = &kernels_for(kind, dims);
  c.align = p.align_corners;
  c.exact = p.mode == InterpMode::NearestExact;
  c.planes = to_int32(p.N * p.C, "N*C planes");
  for (int a = 0; a < dims; ++a) {
    const InterpAxis& ax = p.axes[size_t(dims - 1 - a)];  // axes are (D,) H, W; kernel axes W, H, D
    c.in[size_t(a)] = to_int32(ax.in, "an input size");
    c.out[size_t(a)] = to_int32(ax.out, "an output size");
    if (kind == Kind::Nearest) c.scale[size_t(a)] = double(interp_nearest_scale(ax));
    if (kind == Kind::Linear || kind == Kind::Cubic) c.scale[size_t(a)] = interp_area_scale(ax, p.align_corners);
    if (kind == Kind::Area) c.taps[size_t(a)] = area_taps(ax);
    c.reach[size_t(a)] = reach(kind, c.exact, ax, p.align_corners);
    c.path[size_t(a)] = choose_path(kind, ax, p.align_corners, a == 0);
  }
  return c;
}

// Whether a CPU backward runs the kernel's one-pass form (Kernels::bwd_cpu_x2): 2x on x and y.
bool one_pass_x2(const Call& c) {
  return c.k->bwd_cpu_x2 && c.path[0] == oplab_interp::kXUpsample2 && c.path[1] == oplab_interp::kXUpsample2;
}

// A tensor as the kernels' 4-D (x, y, z, plane) buffer.
Halide::Runtime::Buffer<float> buffer4(TensorF& t, const std::array<int, 3>& xyz, int planes) {
  (void)view(t);  // view() installs the error handler that fills CallContext
  return host_buffer(t.data.data(), {xyz[0], xyz[1], xyz[2], planes});
}

// One evaluation: the case's tensors in float32 and the kernels' buffers over them.
struct Prepared {
  Call k;
  HalideDevice device = HalideDevice::Cpu;
  TensorF input, output, grad_output, grad_input;
  Halide::Runtime::Buffer<float> in_b, out_b, go_b, gi_b;

  Prepared(const Case& c, const InterpParams& p, HalideDevice d, bool with_backward) : device(d) {
    k = plan(p);
    input = to_float(c.in("input"));
    output = TensorF(p.output_shape());
    if (with_backward) {
      grad_output = to_float(*c.grad_output);
      grad_input = TensorF(input.shape);
    }
    // N = 0 or C = 0: nothing to compute (spatial sizes are positive by validation).
    if (k.planes == 0) return;
    in_b = buffer4(input, k.in, k.planes);
    out_b = buffer4(output, k.out, k.planes);
    if (with_backward) {
      go_b = buffer4(grad_output, k.out, k.planes);
      gi_b = buffer4(grad_input, k.in, k.planes);
    }
  }
  ~Prepared() {
    for (auto* b : {&in_b, &out_b, &go_b, &gi_b})
      if (b->data()) release(*b);
  }

  // The kernel calls. Results stay where the kernel wrote them (on the GPU for CUDA) until
  // fetch(); inputs are copied to the GPU by the first call only.
  void forward() {
    run(pick_kernel(device, k.k->fwd_cpu, k.k->fwd_cuda, k.k->fwd_opencl), in_b, k.taps, k.path, k.out, out_b,
        "forward");
  }
  void backward() {
    // The backward has no fixed-weight forms (its weights come from the inverse tables): the
    // same taps are its kXUpsample2.
    std::array<int, 3> path = k.path;
    for (int& p : path)
      if (p == oplab_interp::kXUpsample2Half) p = oplab_interp::kXUpsample2;
    const BackwardFn cpu = one_pass_x2(k) ? k.k->bwd_cpu_x2 : k.k->bwd_cpu;
    run(pick_kernel(device, cpu, k.k->bwd_cuda, k.k->bwd_opencl), go_b, k.reach, path, k.in, gi_b, "backward");
  }
  // Both directions take (from, scales, align_corners, exact, a per-axis bound, paths, the sizes
  // of `to`, to): the bound is the forward's longest area bin and the backward's reach.
  void run(ForwardFn fn, Halide::Runtime::Buffer<float>& from, const std::array<int, 3>& bound,
           const std::array<int, 3>& path, const std::array<int, 3>& sizes, Halide::Runtime::Buffer<float>& to,
           const char* direction) {
    if (k.planes == 0) return;
    CallContext ctx;
    check(fn(&ctx, from, k.scale[0], k.scale[1], k.scale[2], k.align, k.exact, bound[0], bound[1], bound[2], path[0],
             path[1], path[2], sizes[0], sizes[1], sizes[2], to),
          ctx, std::string("interpolate ") + direction);
  }
  // Waits for the GPU (timing) without copying anything back.
  void sync(Halide::Runtime::Buffer<float>& b) {
    if (on_gpu(device) && b.data() && b.device_sync() != 0)
      throw std::runtime_error(std::string(halide_backend_name(device)) + ": device sync failed");
  }
  void fetch(Halide::Runtime::Buffer<float>& b) {
    if (b.data()) finish(device, b);
  }
};

// The kernel paths (HalideOp::paths): the kernel of each mode and rank (nearest-exact runs
// nearest's), antialias's, and on the CPU each closed form along each axis where a kernel
// reads it (interpolate_paths.h): per axis, not per combination of axes, which the kernels
// specialise on as well.
constexpr const char* kAntialias = "antialias";
constexpr const char* kNearestX2 = "forward x: closed-form 2x (nearest)";
constexpr const char* kLinearX2 = "forward x: closed-form 2x (linear)";
constexpr const char* kLinearX2Half = "forward x: closed-form 2x with fixed weights (linear)";
constexpr const char* kLinearY2 = "forward y: closed-form 2x (linear)";
constexpr const char* kLinearZ2 = "forward z: closed-form 2x (linear)";
constexpr const char* kCubicX2 = "forward x: closed-form 2x (cubic)";
constexpr const char* kCubicX2Half = "forward x: closed-form 2x with fixed weights (cubic)";
constexpr const char* kCubicY2 = "forward y: closed-form 2x (cubic)";
constexpr const char* kAreaX2 = "forward x: pools of 2 (area)";
constexpr const char* kAreaX4 = "forward x: pools of 4 (area)";
constexpr const char* kAreaY2 = "forward y: pools of 2 (area)";
constexpr const char* kAreaY4 = "forward y: pools of 4 (area)";
constexpr const char* kBackNearestX2 = "backward x: closed-form 2x (nearest)";
constexpr const char* kBackNearestXY2 = "backward x and y: closed-form 2x in one pass (nearest 2-D)";
constexpr const char* kBackLinearX2 = "backward x: closed-form 2x (linear)";
constexpr const char* kBackCubicX2 = "backward x: closed-form 2x (cubic)";
constexpr const char* kBackAreaX2 = "backward x: pools of 2 (area)";
constexpr const char* kBackAreaX4 = "backward x: pools of 4 (area)";

std::vector<KernelPath> interp_paths() {
  std::vector<KernelPath> paths = {{kNoKernelCall}, {kAntialias}};
  for (const Kernels& k : kKernels) paths.push_back({k.name});
  for (const char* p : {kNearestX2, kLinearX2, kLinearX2Half, kLinearY2, kLinearZ2, kCubicX2, kCubicX2Half, kCubicY2,
                        kAreaX2, kAreaX4, kAreaY2, kAreaY4, kBackNearestX2, kBackNearestXY2, kBackLinearX2, kBackCubicX2, kBackAreaX2,
                        kBackAreaX4})
    paths.push_back({p, PathOn::Cpu});
  return paths;
}

// The closed forms a call's CPU kernels run (the forward's per axis it reads; the backward's
// along x at the form's usual reach).
void note_closed_forms(const Call& c, bool backward, PathLog& log) {
  using namespace oplab_interp;
  const Kind kind = c.k->kind;
  const int x = c.path[0], y = c.path[1], z = c.path[2];
  switch (kind) {
    case Kind::Nearest:
      if (x == kXUpsample2) log.take(kNearestX2);
      if (backward && one_pass_x2(c))
        log.take(kBackNearestXY2);
      else if (backward && x == kXUpsample2 && c.reach[0] == kClosedReachNearest)
        log.take(kBackNearestX2);
      break;
    case Kind::Linear:
    case Kind::Cubic: {
      const bool linear = kind == Kind::Linear;
      if (x == kXUpsample2) log.take(linear ? kLinearX2 : kCubicX2);
      if (x == kXUpsample2Half) log.take(linear ? kLinearX2Half : kCubicX2Half);
      if (c.k->dims >= 2 && y == kXUpsample2) log.take(linear ? kLinearY2 : kCubicY2);
      if (linear && c.k->dims == 3 && z == kXUpsample2) log.take(kLinearZ2);
      const bool closed_x = x == kXUpsample2 || x == kXUpsample2Half;
      if (backward && closed_x && c.reach[0] == (linear ? kClosedReachLinear : kClosedReachCubic))
        log.take(linear ? kBackLinearX2 : kBackCubicX2);
      break;
    }
    case Kind::Area:
      if (x == kXPool2) log.take(kAreaX2);
      if (x == kXPool4) log.take(kAreaX4);
      if (c.k->dims >= 2 && y == kXPool2) log.take(kAreaY2);
      if (c.k->dims >= 2 && y == kXPool4) log.take(kAreaY4);
      if (backward && c.reach[0] == kClosedReachArea) {
        if (x == kXPool2) log.take(kBackAreaX2);
        if (x == kXPool4) log.take(kBackAreaX4);
      }
      break;
  }
}

Result run_interpolate(const Case& c, const ValidParams& vp, HalideDevice device) {
  const InterpParams& p = vp.as<InterpParams>();
  PathLog paths;
  if (p.N * p.C == 0) paths.take(kNoKernelCall);
  if (p.antialias) {
    Result r = run_interpolate_antialias(c, p, device);
    if (p.N * p.C > 0) paths.take(kAntialias);
    r.kernel_paths = paths.list();
    return r;
  }
  Prepared e(c, p, device, c.grad_output.has_value());
  if (e.k.planes > 0) {
    paths.take(e.k.k->name);
    if (device == HalideDevice::Cpu) note_closed_forms(e.k, c.grad_output.has_value(), paths);
  }
  e.forward();
  e.fetch(e.out_b);
  Result r;
  r.kernel_paths = paths.list();
  r.outputs["output"] = to_double(e.output);
  if (c.grad_output) {
    e.backward();
    e.fetch(e.gi_b);
    r.grads["input"] = to_double(e.grad_input);
  }
  return r;
}

std::function<void()> prepare(const Case& c, const ValidParams& vp, HalideDevice device, bool backward) {
  if (vp.as<InterpParams>().antialias) return prepare_interpolate_antialias(c, vp.as<InterpParams>(), device, backward);
  auto e = std::make_shared<Prepared>(c, vp.as<InterpParams>(), device, backward);
  if (backward)
    return [e] {
      e->backward();
      e->sync(e->gi_b);
    };
  return [e] {
    e->forward();
    e->sync(e->out_b);
  };
}

// Every mode and rank of SPEC §6 and antialias (§16) has kernels.
std::optional<std::string> unsupported(const Case&) { return std::nullopt; }

const HalideOpRegistrar registrar({"interpolate", run_interpolate, unsupported, prepare, interp_paths()});

}  // namespace

std::array<int, 3> interpolate_forward_paths(const InterpParams& p) { return plan(p).path; }

}  // namespace oplab::halide_glue
