// deform_conv2d in the comparison layer (compare/op_compare.h): C/G * kh * kw taps of four
// corners per output; offsets are its coordinates; the kernels form each sampling point as
// float(tap) + float(offset) and take its range test and floor in float32
// (halide/generators/deform_conv2d_sampling.h), which the flip check emulates.
#include <algorithm>
#include <cmath>

#include "core/geometry_rounding.h"
#include "compare/op_compare.h"
#include "core/params.h"

namespace oplab::compare {

namespace {

double terms(const Case& c) {
  const auto p = parse_deform_conv2d(c);
  return double(p.C / p.G * p.kh * p.kw) * 4 + 2;
}

void nudge(Case& c, double ra, double rb, double) { nudge_offset(c, ra, rb); }

// The sampling point float32 forms, float(tap) + float(offset), expressed back as an offset
// from the tap (exact in double): emulating it decides floors and cut-offs the kernel's way
// for every sample at once, where a nudge of all offsets would also move samples that did
// not flip.
void kernel_rounding(Case& f) {
  const auto p = parse_deform_conv2d(f);
  Tensor& off = f.inputs.at("offset");
  const int64_t K = p.kh * p.kw;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t ch = 0; ch < off.dim(1); ++ch) {
      const int64_t k = (ch / 2) % K, i = k / p.kw, j = k % p.kw;
      for (int64_t oy = 0; oy < p.Ho; ++oy)
        for (int64_t ox = 0; ox < p.Wo; ++ox) {
          const double tap = ch % 2 ? double(ox * p.sw - p.pw + j * p.dw) : double(oy * p.sh - p.ph + i * p.dh);
          double& v = off.at(n, ch, oy, ox);
          if (std::isfinite(v)) v = double(float(tap) + float(v)) - tap;
        }
    }
}

DrivingParameter driving(const Case& c) {
  DrivingParameter d{"max |offset| (px)", 0};
  for (double v : c.in("offset").data)
    if (std::isfinite(v)) d.value = std::max(d.value, std::fabs(v));
  return d;
}

// Every sampling point's range test (-1, H) x (-1, W) and floor, per axis, as the reference
// forms it (reference/deform_conv2d.cpp: tap + offset, in the geometry's type). The floor is logged from one
// pixel beyond the range on, where the offset gradient still reads the corners; a non-finite
// offset is out of range and has no floor.
void decisions(const Case& c, Decisions& d) {
  const auto p = parse_deform_conv2d(c);
  const Tensor& off = c.in("offset");
  const int64_t K = p.kh * p.kw;
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t ch = 0; ch < off.dim(1); ++ch) {
      const int64_t k = (ch / 2) % K, i = k / p.kw, j = k % p.kw;
      const bool along_x = ch % 2;
      const double size = double(along_x ? p.W : p.H);
      for (int64_t oy = 0; oy < p.Ho; ++oy)
        for (int64_t ox = 0; ox < p.Wo; ++ox) {
          const double tap = along_x ? double(ox * p.sw - p.pw + j * p.dw) : double(oy * p.sh - p.ph + i * p.dh);
          const double v = geom(tap + off.at(n, ch, oy, ox));
          const bool finite = std::isfinite(v);
          d.add(FlipKind::RangeCutoff, finite && v > -1.0 && v < size);
          d.add(FlipKind::Floor, finite ? int64_t(std::clamp(std::floor(v), -2.0, size)) : INT64_MIN);
        }
    }
}

// Flip budget (a fraction of cases, README "Accuracy of the float32 kernels"): the generators
// aim many offsets at a cut-off or an integer, two in three of those a hair (1e-9) off it
// (fuzz/gen_values.cpp), and a case has dozens of sampling points, so the kernels' float32
// point (emulated exactly) puts one of them on the other side of a cut-off or a floor in about
// a third of the cases: 31% to 37% on halide-cpu over seeds 1-8 of 500 cases. The budget, 45%,
// is that plus a fifth: large, because the generators want these cases, yet a kernel that
// doubled them would exceed it.
constexpr double kFlipBudget = 0.45;

const OpCompareRegistrar kRegistrar{"deform_conv2d", {terms, nudge, kernel_rounding, nullptr, driving, decisions,
                                                      FlipKind::InputRounding, kFlipBudget}};

}  // namespace

}  // namespace oplab::compare
