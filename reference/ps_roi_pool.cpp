// ps_roi_pool reference, forward and backward (SPEC §11): position-sensitive average pooling of
// R-FCN, after torchvision.ops.ps_roi_pool. Output (k, c, ph, pw) is the mean of the integer
// pixel bin (ph, pw) of input channel (c*PH + ph)*PW + pw.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "reference/ref_backend.h"
#include "reference/reference.h"

namespace oplab::ref {
namespace {

// One bin's pixels: rows [h0, h1), columns [w0, w1); empty when h1 <= h0 or w1 <= w0.
struct PoolBin {
  int64_t h0 = 0, h1 = 0, w0 = 0, w1 = 0;
  bool empty() const { return h1 <= h0 || w1 <= w0; }
  double area() const { return double(h1 - h0) * double(w1 - w0); }
};

// An index clamped into [0, hi]. NaN (only from a box so large that its scaled corners
// overflow, which torchvision leaves undefined) goes to 0. With hi = -1 (an empty image axis)
// every index is -1 and every bin empty.
int64_t clamp_index(double v, int64_t hi) {
  if (!(v >= 0.0)) v = 0.0;
  if (v > double(hi)) v = double(hi);
  return int64_t(v);
}

// Bins along one axis of a box whose corners, scaled, are a and b: start = round(a), end =
// round(b) (C round, half away from zero), extent max(end - start, 1) (no +1, unlike roi_pool),
// bin p = [floor(p * bin) + start, ceil((p + 1) * bin) + start), both ends clamped into
// [0, size - 1] as torchvision's forward kernels do, so the last row / column of the image is
// never read (R-FCN's original kernel clamps into [0, size]).
void axis_bin(double a, double b, int64_t pooled, int64_t p, int64_t size, int64_t& lo, int64_t& hi) {
  const double start = std::round(a), end = std::round(b);
  double extent = end - start;
  if (!(extent >= 1.0)) extent = 1.0;  // also catches inf - inf
  const double bin = extent / double(pooled);
  lo = clamp_index(std::floor(double(p) * bin) + start, size - 1);
  hi = clamp_index(std::ceil(double(p + 1) * bin) + start, size - 1);
}

PoolBin pool_bin(const PsRoiParams& p, const Tensor& rois, int64_t r, int64_t ph, int64_t pw) {
  const double s = p.spatial_scale;
  PoolBin bin;
  axis_bin(rois.at(r, 2) * s, rois.at(r, 4) * s, p.PH, ph, p.H, bin.h0, bin.h1);
  axis_bin(rois.at(r, 1) * s, rois.at(r, 3) * s, p.PW, pw, p.W, bin.w0, bin.w1);
  return bin;
}

}  // namespace

Tensor ps_roi_pool_forward(const PsRoiParams& p, const Tensor& input, const Tensor& rois) {
  Tensor out(p.output_shape());
  for (int64_t r = 0; r < p.K; ++r) {
    const int64_t n = int64_t(rois.at(r, 0));  // validated: an integer in [0, N)
    for (int64_t c = 0; c < p.Co; ++c)
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw) {
          const PoolBin bin = pool_bin(p, rois, r, ph, pw);
          if (bin.empty()) continue;  // an empty bin outputs 0
          const double* plane = input.data.data() + (n * p.C + p.input_channel(c, ph, pw)) * p.H * p.W;
          double sum = 0.0;
          for (int64_t h = bin.h0; h < bin.h1; ++h)
            for (int64_t w = bin.w0; w < bin.w1; ++w) sum += plane[h * p.W + w];
          out.at(r, c, ph, pw) = sum / bin.area();
        }
  }
  return out;
}

Tensor ps_roi_pool_backward(const PsRoiParams& p, const Tensor& input, const Tensor& rois,
                            const Tensor& grad_output) {
  Tensor grad(Shape{p.N, p.C, p.H, p.W});
  for (int64_t r = 0; r < p.K; ++r) {
    const int64_t n = int64_t(rois.at(r, 0));
    for (int64_t c = 0; c < p.Co; ++c)
      for (int64_t ph = 0; ph < p.PH; ++ph)
        for (int64_t pw = 0; pw < p.PW; ++pw) {
          // The transpose of the forward: gout / area to every pixel of the same bin.
          const PoolBin bin = pool_bin(p, rois, r, ph, pw);
          if (bin.empty()) continue;
          double* gplane = grad.data.data() + (n * p.C + p.input_channel(c, ph, pw)) * p.H * p.W;
          const double g = grad_output.at(r, c, ph, pw) / bin.area();
          for (int64_t h = bin.h0; h < bin.h1; ++h)
            for (int64_t w = bin.w0; w < bin.w1; ++w) gplane[h * p.W + w] += g;
        }
  }
  return grad;
}

// ---- the `ref` backend's entry for this op ----
namespace {

Result run(const Case& c) {
  const auto p = parse_ps_roi_pool(c);
  Result r;
  r.outputs["output"] = ps_roi_pool_forward(p, c.in("input"), c.in("rois"));
  if (c.grad_output) r.grads["input"] = ps_roi_pool_backward(p, c.in("input"), c.in("rois"), *c.grad_output);
  return r;
}

const RefOpRegistrar kRegistrar{"ps_roi_pool", {run}};

}  // namespace

}  // namespace oplab::ref
