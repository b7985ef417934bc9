// ms_deform_attn in the comparison layer (compare/op_compare.h): every output sums L * P
// bilinear samples of four corners, each weighted by its attention weight; the sampling
// locations are its coordinates (normalised: the float32 bound's pixel scale comes from
// spatial_shapes, also marked a coordinate input). Its discrete decisions are those of
// deform_conv2d's rule at each sampling point: the range cut-offs at -1 and H_l (W_l) and the
// floor of the pixel coordinate. Its kernels read the locations as float32 and form the pixel
// coordinate loc * size - 0.5 and its floor in double with the reference's operations, so
// they have no kernel rounding of their own: the float32 rounding of the inputs explains a flip.
#include <algorithm>
#include <cmath>

#include "compare/op_compare.h"
#include "core/params.h"
#include "reference/ms_deform_attn_points.h"

namespace oplab::compare {

namespace {

double terms(const Case& c) {
  const auto p = parse_ms_deform_attn(c);
  return double(p.L * p.P) * 4 + 2;
}

// Locations: x (even elements) by ra, y (odd elements) by rb.
void nudge(Case& c, double ra, double rb, double) {
  Tensor& t = c.inputs.at("sampling_locations");
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = nudged(t.data[i], i % 2 ? rb : ra);
}

// Samples per output: what float32 error grows with (notebooks-cpp/nb_msda_cost_error.cpp).
DrivingParameter driving(const Case& c) {
  const auto p = parse_ms_deform_attn(c);
  return {"levels x points (L*P)", double(p.L * p.P)};
}

// Every point's range test and the floors of its two pixel coordinates, logged from one pixel
// beyond the range on, where the location gradient still reads corners (as deform_conv2d's);
// a non-finite location samples nothing and has no floor.
void decisions(const Case& c, Decisions& d) {
  const auto p = parse_ms_deform_attn(c);
  ref::for_each_msda_point(p, c.in("sampling_locations"), [&](const ref::MsdaPoint& s) {
    const double H = double(p.H[size_t(s.l)]), W = double(p.W[size_t(s.l)]);
    const bool finite = s.finite && std::isfinite(s.x) && std::isfinite(s.y);
    d.add(FlipKind::RangeCutoff, finite && s.y > -1.0 && s.y < H && s.x > -1.0 && s.x < W);
    d.add(FlipKind::Floor, finite ? int64_t(std::clamp(std::floor(s.y), -2.0, H)) : INT64_MIN);
    d.add(FlipKind::Floor, finite ? int64_t(std::clamp(std::floor(s.x), -2.0, W)) : INT64_MIN);
  });
}

// Flip budget (a fraction of cases, README "Accuracy of the float32 kernels"): a case has many
// sampling points and the generator aims many locations at pixel centres and cut-offs; in the
// quarter of cases whose locations are not float32 values (fuzz/ops/ms_deform_attn.cpp), their
// rounding puts some point on the other side of one: 12.0% to 16.6% of cases on halide-cpu over
// seeds 1-8 of 500 (range cut-off and floor about evenly). The budget, 25%, is that plus half.
constexpr double kFlipBudget = 0.25;

const OpCompareRegistrar kRegistrar{"ms_deform_attn", {terms, nudge, nullptr, nullptr, driving, decisions,
                                                       FlipKind::InputRounding, kFlipBudget}};

}  // namespace

}  // namespace oplab::compare
