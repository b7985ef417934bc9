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
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = nudged_normalised(t.data[i], i % 2 ? rb : ra);
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

// The magnitude case's alternating signs (compare/float_compare.cpp), on value [N, S, M, Dh]
// read as each level's H_l x W_l map: every other row (alternate 1) or column (2) of every
// level negated. Why that states the location gradient's terms at their true size: one
// location element belongs to one point, and its x gradient is
//   a * W * sum_d gout_d * ((1 - ly) (v01_d - v00_d) + ly (v11_d - v10_d)),
// the y gradient the same with rows for columns. In the magnitude case a, gout and |v| are
// >= 0 and ly, lx lie in [0, 1]; with columns of alternating sign, v01 and v00 (and v11 and
// v10) sit in adjacent columns, so each difference is -s (|v01| + |v00|), with s the sign of
// column x0, the same for both rows and every channel (a corner outside reads 0 and adds 0).
// Every term of the sum then has the one sign -s, and the gradient is exactly the sum of the
// magnitudes of its terms; with |v| alone the differences cancel and understate it.
void alternate_signs(Case& c, int alternate) {
  const auto p = parse_ms_deform_attn(c);
  Tensor& v = c.inputs.at("value");
  const int64_t row = p.M * p.Dh;  // elements of one value row (one pixel of one level)
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t l = 0; l < p.L; ++l) {
      const int64_t H = p.H[size_t(l)], W = p.W[size_t(l)], start = p.start[size_t(l)];
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x) {
          // Validation makes the levels tile value exactly; the test only keeps the write
          // inside value whatever case reaches here.
          if ((alternate == 1 ? y : x) % 2 == 0 || start + y * W + x >= p.S) continue;
          double* r = v.data.data() + size_t((n * p.S + start + y * W + x) * row);
          for (int64_t k = 0; k < row; ++k) r[k] = -r[k];
        }
    }
}

// Flip budget (a fraction of cases, README "Accuracy of the float32 kernels"): a case has many
// sampling points and the generator aims many locations at pixel centres and cut-offs; in the
// quarter of cases whose locations are not float32 values (fuzz/ops/ms_deform_attn.cpp), their
// rounding puts some point on the other side of one: 12.0% to 16.6% of cases on halide-cpu over
// seeds 1-8 of 500 (range cut-off and floor about evenly). The budget, 25%, is that plus half.
constexpr double kFlipBudget = 0.25;

const OpCompareRegistrar kRegistrar{"ms_deform_attn", {terms, nudge, nullptr, nullptr, driving, decisions,
                                                       FlipKind::InputRounding, kFlipBudget, alternate_signs}};

}  // namespace

}  // namespace oplab::compare
