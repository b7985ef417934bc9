#pragma once
// deform_roi_pool's geometry (SPEC §5), shared by its NCHW generator
// (deform_roi_pool_generator.cpp) and the NHWC one of the MLU design
// (deform_roi_pool_nhwc_generator.cpp): an always-aligned box, its bins each translated by a
// learned offset, and per-sample tap tables shared by every channel.
#include "Halide.h"
#include "roi_sampling.h"

namespace oplab_halide {

// The per-roi scalars and per-sample tables (RoiSampleTables, roi_sampling.h), here with a
// table per bin (ph, pw) since each bin moves by its own offset, and the box's extents in
// double (the offsets scale with them).
struct DeformGeometry : RoiSampleTables {
  Halide::Var i{"i"}, pw{"pw"}, ph{"ph"}, k{"k"}, f{"f"};
  // (f, k) -> rw (0), rh (1) in double: a Func of its own as `info` is (a plain Func rather
  // than a Tuple, for the same reason).
  Halide::Func extent{"roi_extent"};
  Halide::Func rw{"rw"}, rh{"rh"};  // its fields (inline)
  // yt, xt: (i, pw, ph, k) -> taps_tuple of sample i of bin (ph, pw)

  // offset: nullptr for the variant without offsets. N: batch size.
  void define(const Halide::Func& rois, const Halide::Func* offset, Halide::Expr scale, Halide::Expr sampling_ratio,
              Halide::Expr gamma, Halide::Expr PH, Halide::Expr PW, Halide::Expr H, Halide::Expr W, Halide::Expr N) {
    using namespace Halide;
    // Geometry in double (roi_sampling.h says why); scale and gamma are doubles.
    // Always aligned (half-pixel shift), no minimum size: boxes may be empty or reversed.
    RoiBox b = roi_box(rois, k, scale, aligned_box_rule());
    Expr sx = b.sx, sy = b.sy;
    extent(f, k) = strict_float(select(f == 0, b.rw, b.rh));
    define_info(f, k, rois, roi_grid_size(sampling_ratio, b.rh, PH), roi_grid_size(sampling_ratio, b.rw, PW), N);
    rw(k) = extent(0, k);
    rh(k) = extent(1, k);
    Expr bin_h = rh(k) / cast<double>(PH), bin_w = rw(k) / cast<double>(PW);
    // The bin's translation is relative to the box size, scaled by gamma. A NaN/Inf offset
    // makes the samples non-finite, which the bilinear rule counts as out of range.
    if (offset) {
      sx = sx + gamma * rw(k) * cast<double>((*offset)(pw, ph, 0, k));
      sy = sy + gamma * rh(k) * cast<double>((*offset)(pw, ph, 1, k));
    }
    Expr y = roi_sample_at(roi_bin_start(sy, ph, bin_h), bin_h, i, gy(k));
    Expr x = roi_sample_at(roi_bin_start(sx, pw, bin_w), bin_w, i, gx(k));
    yt(i, pw, ph, k) = taps_tuple(roi_axis_taps(y, H));
    xt(i, pw, ph, k) = taps_tuple(roi_axis_taps(x, W));
  }

  void schedule_cpu() {
    using namespace Halide;
    schedule_tables_cpu(f);
    extent.compute_root().bound(f, 0, 2).unroll(f);
  }

  void schedule_gpu() {
    using namespace Halide;
    schedule_tables_gpu(f, k);
    Var tb{"tb"}, ti{"ti"};
    extent.compute_root().bound(f, 0, 2).unroll(f).gpu_tile(k, tb, ti, 64, TailStrategy::GuardWithIf);
  }
};

}  // namespace oplab_halide
