// interpolate with antialias (SPEC §16) on the Halide kernels: the tap tables of each axis,
// built here in double and rounded to float once, and their transposes for the backward
// (generators/interpolate_antialias_generator.cpp says how the kernel reads them).
#include "halide/glue/interpolate_antialias.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "halide/generators/kernel_widths.h"
#include "halide/halide_glue.h"
#include "halide/ops_glue.h"
#include "interp_antialias_cpu.h"
#include "interp_antialias_cuda.h"
#include "interp_antialias_opencl.h"

namespace oplab::halide_glue {

namespace {

using Taps = std::vector<std::vector<std::pair<int64_t, double>>>;  // [position] -> (index, weight)

// SPEC §16's filters: the triangle, and Keys' cubic with a = -0.5.
double filter(InterpMode mode, double x) {
  const double t = std::fabs(x), a = -0.5;
  if (mode == InterpMode::Bilinear) return t < 1 ? 1 - t : 0;
  if (t < 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

// The taps of every output position of one axis (SPEC §16), in double.
Taps forward_taps(InterpMode mode, const InterpAxis& a) {
  const double scale = interp_area_scale(a, false), support = interp_antialias_support(mode, scale);
  const double inv = scale >= 1 ? 1 / scale : 1;
  Taps taps(size_t(a.out));
  for (int64_t o = 0; o < a.out; ++o) {
    const double centre = scale * (double(o) + 0.5);
    const int64_t lo = std::max<int64_t>(int64_t(centre - support + 0.5), 0);
    const int64_t hi = std::min<int64_t>(int64_t(centre + support + 0.5), a.in);
    double total = 0;
    for (int64_t i = lo; i < hi; ++i) {
      const double w = filter(mode, (double(i) - centre + 0.5) * inv);
      taps[size_t(o)].push_back({i, w});
      total += w;
    }
    if (total != 0)
      for (auto& t : taps[size_t(o)]) t.second /= total;
  }
  return taps;
}

// The transpose: for each input position, the outputs that read it and with what weight.
Taps transposed(const Taps& taps, int64_t in) {
  Taps t(static_cast<size_t>(in));
  for (size_t o = 0; o < taps.size(); ++o)
    for (const auto& [i, w] : taps[o]) t[size_t(i)].push_back({int64_t(o), w});
  return t;
}

// One axis' tables as the kernel reads them: (position, k), position innermost; index -1 and
// weight 0 past a position's own taps. `banded` (the CPU's x axis): tap k of a position reads
// input band[position / kAntialiasBand] + k, the same span for every position of a band,
// with index -1 where that input is not one of the position's taps (the generator says why),
// and there the weight -0.0f, the kernel's mark of an absent tap: it tests the weight it has
// loaded rather than load the index too. A tap's own weight of -0.0f is stored as +0.0f
// (its product is a zero or a NaN either way; only a zero's sign could differ).
constexpr float kAbsentTap = -0.0f;

struct Table {
  std::vector<int32_t> index, band{0};
  std::vector<float> weight;
  int positions = 0, taps = 1;
  Halide::Runtime::Buffer<int32_t> index_b, band_b;
  Halide::Runtime::Buffer<float> weight_b;

  Table(const Taps& t, int64_t sources, bool banded) : positions(to_int32(int64_t(t.size()), "an axis size")) {
    if (banded) band_starts(t, sources);
    else
      for (const auto& row : t) taps = std::max(taps, int(row.size()));
    index.assign(size_t(positions) * size_t(taps), -1);
    weight.assign(index.size(), banded ? kAbsentTap : 0.0f);
    for (size_t o = 0; o < t.size(); ++o)
      for (size_t k = 0; k < t[o].size(); ++k) {
        const int64_t slot = banded ? t[o][k].first - band[o / kBand] : int64_t(k);
        index[size_t(slot) * size_t(positions) + o] = int32_t(t[o][k].first);
        // A -0.0f weight is stored +0.0f (banded tables: not the absent mark).
        const float w = float(t[o][k].second);
        weight[size_t(slot) * size_t(positions) + o] = w == 0.0f ? 0.0f : w;
      }
    index_b = host_buffer(index.data(), {positions, taps});
    weight_b = host_buffer(weight.data(), {positions, taps});
    band_b = host_buffer(band.data(), {int(band.size())});
  }
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;
  ~Table() {
    index_b.device_free();
    weight_b.device_free();
    band_b.device_free();
  }

 private:
  static constexpr size_t kBand = oplab_widths::kAntialiasBand;

  // Each band's span of inputs (a position's taps are consecutive inputs); `taps` is the widest,
  // and a band starts early enough that all its `taps` reads are inputs.
  void band_starts(const Taps& t, int64_t sources) {
    std::vector<std::pair<int64_t, int64_t>> span((t.size() + kBand - 1) / kBand, {sources, 0});
    for (size_t o = 0; o < t.size(); ++o)
      for (const auto& [i, w] : t[o]) {
        auto& [lo, hi] = span[o / kBand];
        lo = std::min(lo, i);
        hi = std::max(hi, i + 1);
      }
    for (const auto& [lo, hi] : span) taps = std::max<int64_t>(taps, hi - lo);
    band.clear();
    for (const auto& [lo, hi] : span) band.push_back(int32_t(hi > lo ? std::min(lo, sources - taps) : 0));
  }
};

// One evaluation: the case's tensors in float32, the tables both ways, the kernels' buffers.
struct Call {
  HalideDevice device;
  int planes, in_w, in_h, out_w, out_h;
  Table fx, fy;                              // forward: output position -> input taps
  std::unique_ptr<Table> bx, by;             // backward: input position -> output taps
  TensorF input, output, grad_output, grad_input;
  Halide::Runtime::Buffer<float> in_b, out_b, go_b, gi_b;

  Call(const Case& c, const InterpParams& p, HalideDevice d, bool with_backward)
      : device(d),
        planes(to_int32(p.N * p.C, "N*C planes")),
        in_w(to_int32(p.axes[1].in, "an input size")),
        in_h(to_int32(p.axes[0].in, "an input size")),
        out_w(to_int32(p.axes[1].out, "an output size")),
        out_h(to_int32(p.axes[0].out, "an output size")),
        fx(forward_taps(p.mode, p.axes[1]), p.axes[1].in, !on_gpu(d)),
        fy(forward_taps(p.mode, p.axes[0]), p.axes[0].in, false) {
    input = to_float(c.in("input"));
    output = TensorF(p.output_shape());
    if (with_backward) {
      bx = std::make_unique<Table>(transposed(forward_taps(p.mode, p.axes[1]), p.axes[1].in), p.axes[1].out, !on_gpu(d));
      by = std::make_unique<Table>(transposed(forward_taps(p.mode, p.axes[0]), p.axes[0].in), p.axes[0].out, false);
      grad_output = to_float(*c.grad_output);
      grad_input = TensorF(input.shape);
    }
    if (planes == 0) return;  // N = 0 or C = 0: nothing to compute
    (void)view(input);        // installs the error handler that fills CallContext
    in_b = host_buffer(input.data.data(), {in_w, in_h, planes});
    out_b = host_buffer(output.data.data(), {out_w, out_h, planes});
    if (with_backward) {
      go_b = host_buffer(grad_output.data.data(), {out_w, out_h, planes});
      gi_b = host_buffer(grad_input.data.data(), {in_w, in_h, planes});
    }
  }
  ~Call() {
    for (auto* b : {&in_b, &out_b, &go_b, &gi_b})
      if (b->data()) release(*b);
  }

  void run(Halide::Runtime::Buffer<float>& from, Table& tx, Table& ty, Halide::Runtime::Buffer<float>& to, const char* what) {
    if (planes == 0) return;
    CallContext ctx;
    auto fn = OPLAB_KERNEL(interp_antialias, device);
    check(fn(&ctx, from, tx.index_b, tx.weight_b, ty.index_b, ty.weight_b, tx.band_b, to), ctx, what);
  }
  void forward() { run(in_b, fx, fy, out_b, "interpolate antialias forward"); }
  void backward() { run(go_b, *bx, *by, gi_b, "interpolate antialias backward"); }
  void sync(Halide::Runtime::Buffer<float>& b) {
    if (on_gpu(device) && b.data() && b.device_sync() != 0)
      throw std::runtime_error(std::string(halide_backend_name(device)) + ": device sync failed");
  }
  void fetch(Halide::Runtime::Buffer<float>& b) {
    if (b.data()) finish(device, b);
  }
};

}  // namespace

Result run_interpolate_antialias(const Case& c, const InterpParams& p, HalideDevice device) {
  Call call(c, p, device, c.grad_output.has_value());
  call.forward();
  call.fetch(call.out_b);
  Result r;
  r.outputs["output"] = to_double(call.output);
  if (c.grad_output) {
    call.backward();
    call.fetch(call.gi_b);
    r.grads["input"] = to_double(call.grad_input);
  }
  return r;
}

std::function<void()> prepare_interpolate_antialias(const Case& c, const InterpParams& p, HalideDevice device, bool backward) {
  auto call = std::make_shared<Call>(c, p, device, backward);
  if (backward)
    return [call] {
      call->backward();
      call->sync(call->gi_b);
    };
  return [call] {
    call->forward();
    call->sync(call->out_b);
  };
}

}  // namespace oplab::halide_glue
