// Kinks of deform_conv2d (SPEC §2). The output is multilinear in input, weight, mask and bias
// (affine with the bias), so those have none. In the offset, each Δy (Δx) element moves one
// sample row y (column x) at rate 1, and the zero-padded bilinear rule switches pieces at
// every integer from -1 to H (-1 to W): floor(y) changes there, and the cut-offs y <= -1,
// y >= H are integers too.
#include <cmath>

#include "core/params.h"
#include "gradcheck/kinks_ops.h"
#include "reference/deform_conv2d_points.h"

namespace oplab::gradcheck {

namespace {

// Calls f(y_index, x_index, base_y, base_x) for every sample (reference/deform_conv2d_points.h):
// the flat indices of its Δy and Δx offset elements and the coordinate before the offset.
template <class F>
void for_each_sample(const DeformConvParams& p, const Tensor& off, F f) {
  ref::for_each_dcn_point(p, [&](const ref::DcnPoint& q) {
    const int64_t iy = ((q.n * off.dim(1) + q.dy_chan) * p.Ho + q.oy) * p.Wo + q.ox;
    const int64_t ix = iy + p.Ho * p.Wo;  // the next channel: Δx
    f(iy, ix, q.oy * p.sh - p.ph + q.i * p.dh, q.ox * p.sw - p.pw + q.j * p.dw);
  });
}

}  // namespace

OpKinks deform_conv2d_kinks() {
  OpKinks k;
  k.affine = [](const Case&, const std::string& input) { return input != "offset"; };
  k.sources = [](const Case& c, const std::string& input, const KinkVisitor& visit) {
    if (input != "offset") return;
    const DeformConvParams p = parse_deform_conv2d(c);
    const Tensor& off = c.in("offset");
    for_each_sample(p, off, [&](int64_t iy, int64_t ix, int64_t by, int64_t bx) {
      const double dy = off.data[size_t(iy)], dx = off.data[size_t(ix)];
      // A non-finite offset puts the sample out of range for good: constant, no kink.
      if (!std::isfinite(dy) || !std::isfinite(dx)) return;
      visit(zero_padded_axis(double(by) + dy, p.H, {{iy, 1.0}}, true));
      visit(zero_padded_axis(double(bx) + dx, p.W, {{ix, 1.0}}, false));
    });
  };
  return k;
}

const OpKinksRegistrar kDeformConv2DKinks{"deform_conv2d", deform_conv2d_kinks()};

}  // namespace oplab::gradcheck
