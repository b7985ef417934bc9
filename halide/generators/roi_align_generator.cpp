// roi_align in float32 (SPEC §4): forward (avg or max, a generator parameter) and the
// backward of each. Halide dimension order is the reverse of NCHW: input (x, y, c, n),
// rois (field, k), output (pw, ph, c, k).
//
// Sampling positions and bilinear weights depend on the roi and the bin, never on the
// channel: they are computed once per roi into small tables (yt, xt) and shared by every
// channel, the trick of torchvision's pre_calc.
#include "Halide.h"
#include "roi_sampling.h"

using namespace Halide;
using oplab_halide::roi_axis_taps;

namespace {

// Everything about roi k that the forward and the backward share.
struct RoiGeometry {
  Var i{"i"}, p{"p"}, k{"k"};
  Func batch{"batch"}, gy{"gy"}, gx{"gx"}, count{"count"};
  Func yt{"yt"}, xt{"xt"};  // (i, p, k) -> Tuple(valid, i0, i1, w0, w1) for sample i of bin p

  void define(const Func& rois, Expr scale, Expr sampling_ratio, Expr aligned, Expr PH, Expr PW, Expr H, Expr W) {
    Expr off = select(aligned, 0.5f, 0.0f);
    Expr sx = rois(1, k) * scale - off, sy = rois(2, k) * scale - off;
    Expr rw = rois(3, k) * scale - off - sx, rh = rois(4, k) * scale - off - sy;
    rw = select(aligned, rw, max(rw, 1.0f));
    rh = select(aligned, rh, max(rh, 1.0f));
    Expr bin_h = rh / cast<float>(PH), bin_w = rw / cast<float>(PW);
    batch(k) = cast<int>(rois(0, k));
    gy(k) = select(sampling_ratio > 0, sampling_ratio, cast<int>(ceil(rh / cast<float>(PH))));
    gx(k) = select(sampling_ratio > 0, sampling_ratio, cast<int>(ceil(rw / cast<float>(PW))));
    count(k) = cast<float>(max(gy(k) * gx(k), 1));
    Expr y = sy + cast<float>(p) * bin_h + (cast<float>(i) + 0.5f) * bin_h / cast<float>(gy(k));
    Expr x = sx + cast<float>(p) * bin_w + (cast<float>(i) + 0.5f) * bin_w / cast<float>(gx(k));
    auto ty = roi_axis_taps(y, H), tx = roi_axis_taps(x, W);
    yt(i, p, k) = Tuple(ty.valid, ty.i0, ty.i1, ty.w0, ty.w1);
    xt(i, p, k) = Tuple(tx.valid, tx.i0, tx.i1, tx.w0, tx.w1);
  }
};

class RoiAlignForward : public Generator<RoiAlignForward> {
 public:
  GeneratorParam<bool> max_mode{"max_mode", false};
  Input<Buffer<float>> input{"input", 4};
  Input<Buffer<float>> rois{"rois", 2};
  Input<float> spatial_scale{"spatial_scale"};
  Input<int> sampling_ratio{"sampling_ratio"};
  Input<bool> aligned{"aligned"};
  Input<int> pooled_h{"pooled_h"}, pooled_w{"pooled_w"};
  Input<int> max_grid{"max_grid"};  // the largest gy, gx of any roi (the glue computes it)
  Output<Buffer<float>> output{"output", 4};

  Var pw{"pw"}, ph{"ph"}, c{"c"}, k{"k"};
  RoiGeometry g;
  Func value{"value"}, acc{"acc"};

  void generate() {
    Expr H = input.dim(1).extent(), W = input.dim(0).extent(), N = input.dim(3).extent();
    Expr PW = pooled_w, PH = pooled_h;
    g.define(rois, spatial_scale, sampling_ratio, aligned, PH, PW, H, W);

    RDom r(0, max_grid, 0, max_grid, "r");
    r.where(r.x < g.gy(k) && r.y < g.gx(k));
    Tuple ty = g.yt(r.x, ph, k), tx = g.xt(r.y, pw, k);
    Expr n = clamp(g.batch(k), 0, N - 1);
    Expr v = ty[3] * tx[3] * input(tx[1], ty[1], c, n) + ty[3] * tx[4] * input(tx[2], ty[1], c, n) +
             ty[4] * tx[3] * input(tx[1], ty[2], c, n) + ty[4] * tx[4] * input(tx[2], ty[2], c, n);
    Expr sample = select(ty[0] && tx[0], v, 0.0f);

    if (!max_mode) {
      acc(pw, ph, c, k) = 0.0f;
      acc(pw, ph, c, k) += sample;
      output(pw, ph, c, k) = acc(pw, ph, c, k) / g.count(k);
    } else {
      // First non-NaN sample wins, replaced only by a strictly greater one. The running best
      // starts as NaN, which no sample ever is once taken: still NaN at the end means no
      // sample won (only NaN samples); no samples at all gives 0 (docs/semantics.md).
      acc(pw, ph, c, k) = cast<float>(NAN);
      Expr best = acc(pw, ph, c, k);
      acc(pw, ph, c, k) = select(!is_nan(sample) && (is_nan(best) || sample > best), sample, best);
      Expr any_sample = g.gy(k) > 0 && g.gx(k) > 0;
      output(pw, ph, c, k) = select(any_sample, acc(pw, ph, c, k), 0.0f);
    }
  }

  void schedule() {
    if (get_target().has_gpu_feature()) {
      Var t{"t"}, tb{"tb"}, ti{"ti"};
      output.fuse(pw, ph, t).fuse(t, c, t).gpu_tile(t, tb, ti, 128);
      acc.compute_at(output, ti);
    } else {
      // One roi per task; its sampling tables are built once and shared by every channel.
      output.reorder(pw, ph, c, k).parallel(k);
      g.yt.compute_at(output, k);
      g.xt.compute_at(output, k);
      acc.compute_at(output, c);
    }
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(RoiAlignForward, roi_align_forward)
