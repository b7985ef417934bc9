// deform_conv2d in the comparison layer (compare/op_compare.h): C/G * kh * kw taps of four
// corners per output; offsets are its coordinates; the kernels form each sampling point as
// float(tap) + float(offset), which the flip check emulates.
#include <algorithm>
#include <cmath>

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

const OpCompareRegistrar kRegistrar{"deform_conv2d", {terms, nudge, kernel_rounding, nullptr, driving}};

}  // namespace

}  // namespace oplab::compare
