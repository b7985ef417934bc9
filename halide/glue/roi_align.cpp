// roi_align on the Halide kernels: float32 copies of the tensors, the largest sampling grid
// of any roi (the kernels' reduction extent), and the call.
#include <cmath>

#include "core/params.h"
#include "halide/halide_glue.h"
#include "halide/ops_glue.h"
#include "roi_align_avg_fwd_cpu.h"
#include "roi_align_avg_fwd_cuda.h"
#include "roi_align_max_fwd_cpu.h"
#include "roi_align_max_fwd_cuda.h"

namespace oplab::halide_glue {

namespace {

// Upper bound of the per-roi grid (the kernel's own float computation decides the exact
// grid; a larger bound only costs skipped iterations).
int max_grid(const RoiAlignParams& p, const Tensor& rois) {
  if (p.sampling_ratio > 0) return int(p.sampling_ratio);
  double g = 0;
  for (int64_t k = 0; k < p.K; ++k) {
    double rw = (rois.at(k, 3) - rois.at(k, 1)) * p.spatial_scale, rh = (rois.at(k, 4) - rois.at(k, 2)) * p.spatial_scale;
    if (!p.aligned) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    g = std::max({g, std::ceil(rh / double(p.PH)), std::ceil(rw / double(p.PW))});
  }
  return int(std::min(g + 1, 1e9));
}

Result run_roi_align(const Case& c, HalideDevice device) {
  const RoiAlignParams p = parse_roi_align(c);
  TensorF input = to_float(c.in("input")), rois = to_float(c.in("rois"));
  TensorF out(p.output_shape());
  if (out.numel() > 0 && p.H > 0 && p.W > 0) {
    auto in_b = view(input), rois_b = view(rois), out_b = view(out);
    CallContext ctx;
    const bool cuda = device == HalideDevice::Cuda;
    const float scale = float(p.spatial_scale);
    const int sr = int(p.sampling_ratio), grid = max_grid(p, c.in("rois"));
    const int ph = int(p.PH), pw = int(p.PW);
    int status;
    if (p.mode == PoolMode::Avg)
      status = cuda ? roi_align_avg_fwd_cuda(&ctx, in_b, rois_b, scale, sr, p.aligned, ph, pw, grid, out_b)
                    : roi_align_avg_fwd_cpu(&ctx, in_b, rois_b, scale, sr, p.aligned, ph, pw, grid, out_b);
    else
      status = cuda ? roi_align_max_fwd_cuda(&ctx, in_b, rois_b, scale, sr, p.aligned, ph, pw, grid, out_b)
                    : roi_align_max_fwd_cpu(&ctx, in_b, rois_b, scale, sr, p.aligned, ph, pw, grid, out_b);
    check(status, ctx, "roi_align forward");
    finish(device, out_b);
    release(in_b);
    release(rois_b);
  }
  Result r;
  r.outputs["output"] = to_double(out);
  return r;
}

std::optional<std::string> unsupported(const Case& c) {
  if (c.grad_output) return std::string("no Halide backward for roi_align yet");
  return std::nullopt;
}

const HalideOpRegistrar registrar({"roi_align", run_roi_align, unsupported});

}  // namespace

}  // namespace oplab::halide_glue
