// Seeded bug `bug-roialign-f16-accumulate`: a float32 RoIAlign (avg) that adds each bin's
// samples in float16: the running sum is rounded to the nearest half after every add. Boxes,
// bins, sample positions, bilinear weights, each sample's value and the final division by the
// count are all float32, as in torchvision's CPU kernel (roi_align_kernel.cpp); only the
// accumulator has the wrong type.
//
// The mistake it models: an accumulator typed as the storage type. torchvision's CPU RoIAlign
// is templated on its element type and sums in it (`T output_val = 0.`), so in float16 it adds
// every sample in half (peer/torchvision_backend.cpp records it: a 64x64 map of ones pooled
// into one bin gives 0.5, the sum stalling at 2048); MIOpen's float16 average pooling had the
// same half accumulator (ROCm/MIOpen#2109). A float32 kernel gets it when its accumulator type
// comes from a half instantiation it shares code with (an `acc_t` pinned to `at::Half` in a
// mixed-precision port) while the kernel itself stays float32 and declares float32.
//
// Why a correct float32 kernel cannot show it: each add rounds to half's 11-bit significand,
// a relative error up to 2^-11 of the partial sum, 2^13 times float32's unit roundoff (a
// float32 sum of n terms is off by at most gamma_n ~ n * 2^-24 of the sum of |terms|). The
// harness's float32 bound, 8 * 2^-24 * (n + 2C + 4) of the element's terms (C the coordinate
// scale), stays below that for boxes under a few hundred pixels, so a bin whose sum is not a
// float16 value fails. Measured on 300 random float32 cases (maps up to 7x7, boxes starting on
// the map): 255 fail, the first failing element 1.3 to 37 times the 8x bound (median 7); of
// the 45 that pass, 37 read only zeros (bins off the map) and 8 have long adaptive sums whose
// bound grows with n (their half error up to 7.7 times the float32 estimate, inside the 8x).
// The same kernel with a float32 accumulator passes every one (its error a few float32
// roundings). The default campaign catches it at its first roi_align case (by linearity);
// the differential alone at its fifth, shrunk to one sample on a 1x2 map: 0.00390625 (a
// float16 value) against 0.00390816, 51 times its bound.
//
// roi_align avg forward only; max mode and the other ops are declined.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

#include "core/backend.h"
#include "core/geometry_rounding.h"
#include "core/params.h"

namespace oplab {
namespace {

// x rounded to the nearest float16 value (ties to even), as a float (core/geometry_rounding.h).
float to_half_rounded(float x) { return static_cast<float>(round_to_type(x, DType::Float16)); }

float f32(double v) { return static_cast<float>(v); }

// ceil(extent / pooled) in float, as torchvision's adaptive grid, saturated so that the
// conversion is defined; NaN gives 0 (no samples).
int64_t grid_size(int64_t sampling_ratio, float extent, int64_t pooled) {
  if (sampling_ratio > 0) return sampling_ratio;
  const float g = std::ceil(extent / static_cast<float>(pooled));
  if (!(g == g)) return 0;
  const float lim = 2147483520.0f;  // the largest float below 2^31
  return int64_t(std::clamp(g, -lim, lim));
}

// The value of the sample at (y, x) on an H x W plane, float32 bilinear (SPEC §4, torchvision's
// bilinear_interpolate): 0 out of range (NaN included), the coordinate clamped at 0 and at the
// last row / column.
float bilinear(const double* plane, int64_t H, int64_t W, float y, float x) {
  if (H <= 0 || W <= 0) return 0.0f;
  if (!(y >= -1.0f && y <= static_cast<float>(H) && x >= -1.0f && x <= static_cast<float>(W))) return 0.0f;
  if (y <= 0) y = 0;
  if (x <= 0) x = 0;
  int64_t y0 = int64_t(y), x0 = int64_t(x), y1, x1;
  if (y0 >= H - 1) {
    y0 = y1 = H - 1;
    y = static_cast<float>(y0);
  } else {
    y1 = y0 + 1;
  }
  if (x0 >= W - 1) {
    x0 = x1 = W - 1;
    x = static_cast<float>(x0);
  } else {
    x1 = x0 + 1;
  }
  const float ly = y - static_cast<float>(y0), lx = x - static_cast<float>(x0);
  const float hy = 1.0f - ly, hx = 1.0f - lx;
  const float w1 = hy * hx, w2 = hy * lx, w3 = ly * hx, w4 = ly * lx;
  return w1 * f32(plane[y0 * W + x0]) + w2 * f32(plane[y0 * W + x1]) + w3 * f32(plane[y1 * W + x0]) +
         w4 * f32(plane[y1 * W + x1]);
}

Tensor forward(const RoiAlignParams& p, const Tensor& input, const Tensor& rois) {
  Tensor out(p.output_shape());
  const float scale = f32(p.spatial_scale), off = p.aligned ? 0.5f : 0.0f;
  for (int64_t r = 0; r < p.K; ++r) {
    const int64_t n = int64_t(rois.at(r, 0));  // validated: an integer in [0, N)
    const float sx = f32(rois.at(r, 1)) * scale - off, sy = f32(rois.at(r, 2)) * scale - off;
    const float ex = f32(rois.at(r, 3)) * scale - off, ey = f32(rois.at(r, 4)) * scale - off;
    float rw = ex - sx, rh = ey - sy;
    if (!p.aligned) rw = std::max(rw, 1.0f), rh = std::max(rh, 1.0f);
    const float bin_h = rh / static_cast<float>(p.PH), bin_w = rw / static_cast<float>(p.PW);
    const int64_t gh = grid_size(p.sampling_ratio, rh, p.PH), gw = grid_size(p.sampling_ratio, rw, p.PW);
    const float count = static_cast<float>(std::max<int64_t>(gh * gw, 1));
    for (int64_t c = 0; c < p.C; ++c) {
      const double* plane = input.data.data() + (n * p.C + c) * p.H * p.W;
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw) {
          float sum = 0.0f;
          for (int64_t iy = 0; iy < gh; ++iy) {
            const float y = sy + static_cast<float>(ph) * bin_h +
                            static_cast<float>(iy + .5f) * bin_h / static_cast<float>(gh);
            for (int64_t ix = 0; ix < gw; ++ix) {
              const float x = sx + static_cast<float>(pw) * bin_w +
                              static_cast<float>(ix + .5f) * bin_w / static_cast<float>(gw);
              sum = to_half_rounded(sum + bilinear(plane, p.H, p.W, y, x));  // the bug: a float16 accumulator
            }
          }
          out.at(r, c, ph, pw) = double(sum / count);
        }
    }
  }
  return out;
}

class BugRoiAlignF16Accumulate : public Backend {
 public:
  std::string name() const override { return "bug-roialign-f16-accumulate"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  // A kernel people ship: float32 throughout, its geometry formed in float32 (SPEC §15).
  DType dtype(const std::string&) const override { return DType::Float32; }
  bool computes_grads(const std::string&) const override { return false; }
  std::string description() const override {
    return "seeded bug: float32 roi_align (avg, forward) whose bin sums are accumulated in float16 "
           "(the running sum rounded to half after every sample)";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "roi_align") return std::string("a seeded roi_align bug only");
    if (parse_roi_align(c).mode != PoolMode::Avg) return std::string("roi_align avg only (the bug is in its sum)");
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    Result r;
    r.outputs["output"] = forward(vp.as<RoiAlignParams>(), c.in("input"), c.in("rois"));
    return r;
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugRoiAlignF16Accumulate>(); }

}  // namespace

static const oplab::BackendRegistrar r(118, make);

}  // namespace oplab
