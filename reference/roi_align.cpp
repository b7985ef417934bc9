// roi_align reference, forward and backward (SPEC §4), avg and max pooling.
// avg follows torchvision's roi_align; max follows mmcv's RoIAlign max mode, with the
// project's rules for NaN and for bins without samples.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "reference/reference.h"
#include "reference/roi_bilinear.h"
#include "reference/roi_geometry.h"
#include "reference/roi_outputs.h"
#include "reference/roi_ref_entry.h"

namespace oplab::ref {
namespace {

// The box of one roi and its sampling grid (reference/roi_geometry.h): aligned boxes are
// shifted by half a pixel and may be empty or reversed; legacy boxes are at least one pixel.
RoiBox align_box(const RoiAlignParams& p, const Tensor& rois, int64_t r) {
  return roi_box(rois, r, p.spatial_scale, p.aligned ? kAlignedBox : kLegacyBox, p.PH, p.PW, p.sampling_ratio);
}

// Sample (iy, ix) of bin (ph, pw).
double sample_y(const RoiBox& b, int64_t ph, int64_t iy) {
  return roi_sample(roi_bin_start(b.sy, ph, b.bin_h), b.bin_h, iy, b.gh);
}
double sample_x(const RoiBox& b, int64_t pw, int64_t ix) {
  return roi_sample(roi_bin_start(b.sx, pw, b.bin_w), b.bin_w, ix, b.gw);
}

// Max mode of one bin: the value and the winning sample.
// Out-of-range samples take part with value 0 (mmcv). The winner is the first non-NaN sample,
// replaced only by a strictly greater later one, so NaN never wins; a bin whose samples are
// all NaN outputs NaN and has no winner. A bin with no samples outputs 0 (mmcv: -10000 on
// CPU, -FLT_MAX on CUDA; SPEC §8 divergence).
struct MaxBin {
  double value = 0.0;
  bool has_winner = false;
  RoiBilinear winner;
};

MaxBin max_bin(const RoiBox& b, const double* plane, int64_t H, int64_t W, int64_t ph, int64_t pw) {
  MaxBin m;
  bool any_sample = false;
  for (int64_t iy = 0; iy < b.gh; ++iy) {
    const double y = sample_y(b, ph, iy);
    for (int64_t ix = 0; ix < b.gw; ++ix) {
      const double x = sample_x(b, pw, ix);
      const RoiBilinear bl = roi_bilinear(y, x, H, W);
      const double v = roi_bilinear_value(plane, W, bl);
      any_sample = true;
      if (std::isnan(v)) continue;
      if (!m.has_winner || v > m.value) {
        m.value = v;
        m.winner = bl;
        m.has_winner = true;
      }
    }
  }
  if (any_sample && !m.has_winner) m.value = std::numeric_limits<double>::quiet_NaN();
  return m;
}

}  // namespace

Tensor roi_align_forward(const RoiAlignParams& p, const Tensor& input, const Tensor& rois) {
  Tensor out(p.output_shape());
  const int64_t H = p.H, W = p.W;
  auto box = [&](int64_t r) { return align_box(p, rois, r); };
  for_each_roi_output(p, box, [&](int64_t r, int64_t c, int64_t ph, int64_t pw, const RoiBox& b, int64_t plane_off) {
    const double* plane = input.data.data() + plane_off;
    if (p.mode == PoolMode::Max) {
      out.at(r, c, ph, pw) = max_bin(b, plane, H, W, ph, pw).value;
      return;
    }
    double sum = 0.0;
    for (int64_t iy = 0; iy < b.gh; ++iy) {
      const double y = sample_y(b, ph, iy);
      for (int64_t ix = 0; ix < b.gw; ++ix) {
        sum += roi_bilinear_value(plane, W, roi_bilinear(y, sample_x(b, pw, ix), H, W));
      }
    }
    out.at(r, c, ph, pw) = sum / double(b.count());
  });
  return out;
}

Tensor roi_align_backward(const RoiAlignParams& p, const Tensor& input, const Tensor& rois,
                          const Tensor& grad_output) {
  Tensor grad(Shape{p.N, p.C, p.H, p.W});
  const int64_t H = p.H, W = p.W;
  auto box = [&](int64_t r) { return align_box(p, rois, r); };
  for_each_roi_output(p, box, [&](int64_t r, int64_t c, int64_t ph, int64_t pw, const RoiBox& b, int64_t plane_off) {
    const double* plane = input.data.data() + plane_off;
    double* gplane = grad.data.data() + plane_off;
    const double g = grad_output.at(r, c, ph, pw);
    if (p.mode == PoolMode::Max) {
      // Only the winning sample gets gradient, with its weights undivided; an
      // out-of-range winner (value 0) passes nothing on.
      const MaxBin m = max_bin(b, plane, H, W, ph, pw);
      if (m.has_winner) roi_bilinear_scatter(gplane, W, m.winner, g);
      return;
    }
    for (int64_t iy = 0; iy < b.gh; ++iy) {
      const double y = sample_y(b, ph, iy);
      for (int64_t ix = 0; ix < b.gw; ++ix) {
        roi_bilinear_scatter(gplane, W, roi_bilinear(y, sample_x(b, pw, ix), H, W), g, double(b.count()));
      }
    }
  });
  return grad;
}

void roi_align_max_grad_range(const RoiAlignParams& p, const Tensor& input, const Tensor& rois,
                              const Tensor& grad_output, double tolerance, Tensor& lo, Tensor& hi) {
  lo = Tensor(Shape{p.N, p.C, p.H, p.W});
  hi = lo;
  const int64_t H = p.H, W = p.W;
  std::vector<RoiBilinear> tied;
  std::vector<double> share;  // one bin's contribution to each element (scratch, one plane)
  auto box = [&](int64_t r) { return align_box(p, rois, r); };
  for_each_roi_output(p, box, [&](int64_t r, int64_t c, int64_t ph, int64_t pw, const RoiBox& b, int64_t plane_off) {
    const double* plane = input.data.data() + plane_off;
    double* lo_plane = lo.data.data() + plane_off;
    double* hi_plane = hi.data.data() + plane_off;
    const MaxBin m = max_bin(b, plane, H, W, ph, pw);
    if (!m.has_winner) return;
    // The near-tied samples: within tolerance x their magnitude of the maximum.
    tied.clear();
    for (int64_t iy = 0; iy < b.gh; ++iy)
      for (int64_t ix = 0; ix < b.gw; ++ix) {
        const RoiBilinear bl = roi_bilinear(sample_y(b, ph, iy), sample_x(b, pw, ix), H, W);
        const double v = roi_bilinear_value(plane, W, bl);
        double mag = std::fabs(v);
        if (bl.in_range)
          mag = std::max({mag, std::fabs(plane[bl.y0 * W + bl.x0]), std::fabs(plane[bl.y0 * W + bl.x1]),
                          std::fabs(plane[bl.y1 * W + bl.x0]), std::fabs(plane[bl.y1 * W + bl.x1])});
        if (!std::isnan(v) && v >= m.value - tolerance * mag) tied.push_back(bl);
      }
    // Each element's least and greatest share over the choice of winner (0 where a
    // winner does not touch it).
    const double g = grad_output.at(r, c, ph, pw);
    std::vector<std::pair<int64_t, std::vector<double>>> touched;
    for (size_t t = 0; t < tied.size(); ++t) {
      share.assign(size_t(H * W), 0.0);
      roi_bilinear_scatter(share.data(), W, tied[t], g);
      for (int64_t e = 0; e < H * W; ++e) {
        if (share[e] == 0.0) continue;
        auto it = std::find_if(touched.begin(), touched.end(), [e](const auto& x) { return x.first == e; });
        if (it == touched.end()) {
          touched.push_back({e, std::vector<double>(tied.size(), 0.0)});
          it = touched.end() - 1;
        }
        it->second[t] = share[e];
      }
    }
    for (const auto& [e, shares] : touched) {
      lo_plane[e] += *std::min_element(shares.begin(), shares.end());
      hi_plane[e] += *std::max_element(shares.begin(), shares.end());
    }
  });
}

// ---- the `ref` backend's entry for this op ----
namespace {

const RefOpRegistrar kRegistrar{"roi_align",
                                {run_input_rois_op<RoiAlignParams, roi_align_forward, roi_align_backward>}};

}  // namespace

}  // namespace oplab::ref
