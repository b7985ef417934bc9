// deform_roi_pool's forward in the layout and storage of the Cambricon MLU design (seed 002,
// "DeformRoiPoolForward"): the feature map and the output channels-last (NHWC), stored in
// float16 (GeneratorParam half) or float32, every sum formed in float32 and the output rounded
// to the storage type once. Same semantics as the NCHW kernels (SPEC §5, deform_roi_geometry.h);
// the geometry is formed in double from the stored values, as there.
//
// Halide dimension order is the reverse of NHWC: input (c, x, y, n), output (c, pw, ph, k);
// offset (pw, ph, j, k) in the storage type; rois (field, k) in float32 whatever the storage:
// their batch-index column is an integer, which float16 holds exactly only up to 2048 (the
// coordinates arrive already rounded to the storage type, so nothing else changes).
//
// What channels-last changes: a sample's four corners are each C consecutive values, so a block
// of 16 channels is one dense vector load per corner straight from the input, with no copy (the
// NCHW kernels first copy the map into channel blocks, roi_sampling.h, schedule_blocked_copy),
// and on the GPU a warp's loads are consecutive channels. On the CPU it does not pay: at the
// standard shape this kernel took 1.8x the NCHW kernel's time in float32 (bench record
// 2026-11-28c). The access patterns suggest why (the record says what was profiled): a step
// reads its window of all 256 channels (1 KB a pixel), where an NCHW task keeps one
// 16-channel block of the map (7.8 MB) in cache for every roi. Halide 14 converts
// float16 in integer arithmetic on x86 (no F16C instructions), which costs more than the
// halved bytes save here.
#include "Halide.h"
#include "deform_roi_geometry.h"
#include "half_bits.h"
#include "roi_sampling.h"

using namespace Halide;
using namespace oplab_halide;

namespace {

class DeformRoiPoolNhwcForward : public Generator<DeformRoiPoolNhwcForward> {
 public:
  GeneratorParam<bool> has_offset{"has_offset", true};
  GeneratorParam<bool> half{"half", false};  // float16 storage (else float32)
  Input<double> spatial_scale{"spatial_scale"};
  Input<int> sampling_ratio{"sampling_ratio"};
  Input<double> gamma{"gamma"};
  Input<int> pooled_h{"pooled_h"}, pooled_w{"pooled_w"};
  Input<int> max_grid{"max_grid"};  // the largest gy, gx of any roi (the glue computes it)
  Input<Buffer<float>> rois{"rois", 2};
  Input<Buffer<int32_t>> order{"order", 1};  // the rois in cache order (CPU only: RoiOrder)
  // Typed by `half`, so added in configure(): input [N, H, W, C], offset [K, 2, PH, PW] (with
  // has_offset only), output [K, PH, PW, C].
  Input<Buffer<>>* input = nullptr;
  Input<Buffer<>>* offset = nullptr;
  Output<Buffer<>>* output = nullptr;

  // On OpenCL without cl_khr_fp16 (the build's OpenCL target), float16 is stored as its bits
  // (half_bits.h); the glue passes the same bytes typed uint16.
  bool half_as_bits() const {
    const Target t = get_target();
    return half && t.has_feature(Target::OpenCL) && !t.has_feature(Target::CLHalf);
  }
  Type storage_type() const { return !half ? Float(32) : half_as_bits() ? UInt(16) : Float(16); }
  Expr widen(Expr v) const { return half_as_bits() ? half_bits_to_float(v) : cast<float>(v); }
  // Rounded to float16 in integer arithmetic on every target: Halide's own float32 -> float16
  // cast on the CPU turned a NaN into Inf (a fuzz case with a NaN pixel, halide-cpu-f16).
  Expr narrow(Expr v) const {
    if (!half) return v;
    return half_as_bits() ? float_to_half_bits(v) : reinterpret(Float(16), float_to_half_bits(v));
  }

  void configure() {
    const Type storage = storage_type();
    input = add_input<Buffer<>>("input", storage, 4);
    if (has_offset) offset = add_input<Buffer<>>("offset", storage, 4);
    output = add_output<Buffer<>>("output", storage, 4);
  }

  DeformGeometry g;
  RoiOrder ord;
  Var c{"c"}, co{"co"}, ci{"ci"};
  Func acc{"acc"}, res{"res"}, in{"in_f32"};
  RDom r;
  bool cpu = true;

  void generate() {
    Expr C = input->dim(0).extent(), W = input->dim(1).extent(), H = input->dim(2).extent(),
         N = input->dim(3).extent();
    Var x{"x"}, y{"y"}, n{"n"};
    // Every value widened to float32 as it is read (exact), lanes past the last channel
    // clamped onto it so that a vector never reads past the tensor (their results are never
    // stored).
    in(c, x, y, n) = widen((*input)(min(c, C - 1), x, y, n));
    // On the CPU the rois (and their offsets) in cache order (RoiOrder): k below is then the
    // step, not the roi, as in the NCHW kernel.
    cpu = !get_target().has_gpu_feature();
    Expr K = rois.dim(1).extent();
    Func off{"offset_f32"};
    Var opw, oph, oj, os;
    if (cpu) {
      ord.define(rois, order, K);
      if (offset) off(opw, oph, oj, os) = widen((*offset)(opw, oph, oj, ord.roi(os)));
    } else if (offset) {
      off(opw, oph, oj, os) = widen((*offset)(opw, oph, oj, os));
    }
    g.define(cpu ? ord.rois : Func(rois), offset ? &off : nullptr, spatial_scale, sampling_ratio, gamma, pooled_h,
             pooled_w, H, W, N);
    Var pw = g.pw, ph = g.ph, k = g.k;
    r = g.grid(k, max_grid);
    AxisTaps ty = taps_of(g.yt(r.y, pw, ph, k)), tx = taps_of(g.xt(r.x, pw, ph, k));
    acc(c, pw, ph, k) = 0.0f;
    acc(c, pw, ph, k) += roi_bilinear_sample(ty, tx, [&](Expr xx, Expr yy) { return in(c, xx, yy, g.batch(k)); });
    if (cpu) {
      // Every step's results (in the storage type), then the output at each roi's own index.
      res(c, pw, ph, k) = narrow(acc(c, pw, ph, k) / g.count(k));
      (*output)(c, pw, ph, k) = res(c, pw, ph, ord.step(k));
    } else {
      (*output)(c, pw, ph, k) = narrow(acc(c, pw, ph, k) / g.count(k));
    }
  }

  void schedule() {
    promise_zero_mins(*input), promise_zero_mins(rois), promise_zero_mins(order), promise_zero_mins(*output);
    if (offset) promise_zero_mins(*offset);
    Func out = *output;
    Var k = g.k;
    if (get_target().has_gpu_feature()) {
      // A thread per output element, channels fastest: a warp's loads of a corner are
      // consecutive channels (coalesced), where NCHW's are a plane apart.
      schedule_roi_forward_gpu(out, acc, g);
      return;
    }
    // A task per step (the rois in cache order: consecutive rois read overlapping windows of
    // the map while they are in cache; in input order 1000 random boxes at the standard shape
    // took 1.3x as long, measured); per bin, blocks of 16 channels accumulated in registers
    // over the bin's samples (dense loads, widened in the vector). A map of fewer than 16
    // channels takes one vector, its extra lanes on the clamped last channel. The steps'
    // results go to a buffer of the output's size, copied out at the rois' indices.
    g.schedule_cpu();
    ord.schedule_cpu();
    Expr C = input->dim(0).extent();
    Var rc = res.args()[0], rpw = res.args()[1], rph = res.args()[2], rk = res.args()[3];
    res.compute_root();
    res.specialize(C >= kLanes).split(rc, co, ci, kLanes, TailStrategy::ShiftInwards).reorder(ci, co, rpw, rph, rk).vectorize(ci).parallel(rk);
    res.split(rc, co, ci, kLanes, TailStrategy::GuardWithIf).reorder(ci, co, rpw, rph, rk).vectorize(ci).parallel(rk);
    // (RoundUp: a narrow map's accumulator is a full vector too; its extra lanes read the
    // clamped last channel and are never stored.)
    acc.compute_at(res, co).vectorize(c, kLanes, TailStrategy::RoundUp);
    acc.update().reorder(c, r.x, r.y).vectorize(c, kLanes, TailStrategy::RoundUp);
    out.vectorize(c, kLanes, TailStrategy::GuardWithIf).parallel(k);
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(DeformRoiPoolNhwcForward, deform_roi_pool_nhwc_forward)
