// Seeded bug `bug-grid-f16-unnormalize`: a float32 grid_sample (2-D, bilinear, zeros padding)
// whose unnormalisation runs in float16. Written as torch's vectorised CPU kernel writes it
// (GridSamplerKernel.cpp, ComputeLocationBase): c = (g + 1) * scale, minus 0.5 without
// align_corners, with scale = (S - 1)/2 (align_corners) or S/2; here the scale is rounded to
// half and so is every step of the unnormalise (the grid value as read, g + 1, the product
// and the shift). The corners, the bilinear weights ((ix_se - ix) * (iy_se - iy), ...) and
// the sum over the in-bounds corners are float32 as in torch's kernel.
//
// The mistake it models: the coordinate helper run in the storage type instead of the
// accumulate type. torch's CUDA grid_sample did exactly this for half inputs
// (grid_sampler_compute_source_index in scalar_t = half: pytorch/pytorch#89836 and #96429,
// fixed by upcasting to opmath_t in #90427 and #96586), and a float32 kernel gets it when its
// unnormalise is shared with, or copied from, such a half path.
//
// Rounding the scale alone would be harmless: (S - 1)/2 and S/2 are integers or half-integers,
// exact in float16 for every axis under 2048 pixels, so that bug could never be caught on the
// harness's images. What breaks is the coordinate: g + 1 in half has 11 significant bits, so
// c moves by up to about 2^-11 of its size (a float32 kernel: a few 2^-24), 2^13 times
// float32's unit roundoff. The output moves by that many pixels times the difference of
// neighbouring pixels, against a float32 bound of 8 * 2^-24 * (4 + 2C + 4) of its terms (C the
// coordinate scale); the slope term (the reference moved by 4 float32 ulps) and the flip
// search (32 ulps) explain only moves some 2^8 times smaller. Measured on 300 random float32
// cases (axes up to 7, grid values in [-0.6, 0.6]): 299 fail, the first failing element 1.9 to
// 1515 times the 8x bound (median 65); the same kernel unnormalising in float32 passes every
// one (its error a few float32 roundings). Grid values whose c is exact in half (0, +-1,
// quarters on small axes) pass. The campaign's catch, shrunk: one pixel of 0.25 read at g = 3.1e-5
// (align_corners false), where g + 1 rounds to 1: 0.25 against 0.2499961, 2.3 times its bound.
//
// grid_sample forward only: bilinear, zeros padding, 4-D input, both align_corners; other
// modes, paddings and 5-D inputs are declined.
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

// The bug: the unnormalised coordinate of grid value g on an axis of S pixels, in float16.
float unnormalise_half(float g, int64_t S, bool align_corners) {
  const float scale = to_half_rounded(align_corners ? static_cast<float>(S - 1) / 2 : static_cast<float>(S) / 2);
  const float c = to_half_rounded(to_half_rounded(to_half_rounded(g) + 1.0f) * scale);
  return align_corners ? c : to_half_rounded(c - 0.5f);
}

// Adds pixel (y, x) of a plane times w to acc where the pixel is inside the image (zeros
// padding: nothing outside, as torch's within_bounds_2d). The test is on the float corner, so
// a corner far outside never reaches an integer conversion.
void add_corner(float& acc, const double* plane, int64_t H, int64_t W, float y, float x, float w) {
  if (!(y >= 0 && y <= static_cast<float>(H - 1) && x >= 0 && x <= static_cast<float>(W - 1))) return;
  acc += static_cast<float>(plane[int64_t(y) * W + int64_t(x)]) * w;
}

Tensor forward(const GridSampleParams& p, const Tensor& input, const Tensor& grid) {
  Tensor out(p.output_shape());
  const int64_t P = p.Ho * p.Wo, plane = p.H * p.W;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t pos = 0; pos < P; ++pos) {
      const double* g = grid.data.data() + (n * P + pos) * 2;
      // A NaN or Inf grid value samples nothing (SPEC §12).
      const bool finite = std::isfinite(g[0]) && std::isfinite(g[1]);
      const float ix = unnormalise_half(static_cast<float>(g[0]), p.W, p.align_corners);
      const float iy = unnormalise_half(static_cast<float>(g[1]), p.H, p.align_corners);
      // torch's corners and weights, in float32.
      const float ix_nw = std::floor(ix), iy_nw = std::floor(iy);
      const float ix_se = ix_nw + 1, iy_se = iy_nw + 1;
      const float nw = (ix_se - ix) * (iy_se - iy), ne = (ix - ix_nw) * (iy_se - iy);
      const float sw = (ix_se - ix) * (iy - iy_nw), se = (ix - ix_nw) * (iy - iy_nw);
      for (int64_t c = 0; c < p.C; ++c) {
        const double* x = input.data.data() + (n * p.C + c) * plane;
        float acc = 0.0f;
        if (finite) {
          add_corner(acc, x, p.H, p.W, iy_nw, ix_nw, nw);
          add_corner(acc, x, p.H, p.W, iy_nw, ix_se, ne);
          add_corner(acc, x, p.H, p.W, iy_se, ix_nw, sw);
          add_corner(acc, x, p.H, p.W, iy_se, ix_se, se);
        }
        out.data[size_t((n * p.C + c) * P + pos)] = double(acc);
      }
    }
  return out;
}

class BugGridF16Unnormalize : public Backend {
 public:
  std::string name() const override { return "bug-grid-f16-unnormalize"; }
  BackendRole role() const override { return BackendRole::SeededBug; }
  // A kernel people ship: float32 throughout, its geometry formed in float32 (SPEC §15).
  DType dtype(const std::string&) const override { return DType::Float32; }
  bool computes_grads(const std::string&) const override { return false; }
  std::string description() const override {
    return "seeded bug: float32 grid_sample (bilinear, zeros, 2-D, forward) whose unnormalisation "
           "(g + 1) * scale runs in float16";
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op != "grid_sample") return std::string("a seeded grid_sample bug only");
    const GridSampleParams p = parse_grid_sample(c);
    if (p.nd != 2) return std::string("4-D input only");
    if (p.mode != GridMode::Bilinear) return std::string("bilinear only, not ") + grid_mode_name(p.mode);
    if (p.padding != GridPadding::Zeros) return std::string("zeros padding only, not ") + grid_padding_name(p.padding);
    return std::nullopt;
  }
  Result run(const Case& c, const ValidParams& vp) override {
    Result r;
    r.outputs["output"] = forward(vp.as<GridSampleParams>(), c.in("input"), c.in("grid"));
    return r;
  }
};

std::unique_ptr<Backend> make() { return std::make_unique<BugGridF16Unnormalize>(); }

}  // namespace

static const oplab::BackendRegistrar r(133, make);

}  // namespace oplab
