// interpolate in the comparison layer (compare/op_compare.h): 2 (linear), 4 (cubic) or the
// area window's taps per axis; its decisions hang on the scale factor, which the flip check
// nudges for a backend of undeclared precision. The kernels take the reference's scale and
// source coordinates in double and the nearest index from a float32 scale and product, as the
// reference (and PyTorch) does (halide/generators/interpolate_axis.h): no kernel rounding.
#include <algorithm>
#include <cmath>

#include "compare/op_compare.h"
#include "core/params.h"

namespace oplab::compare {

namespace {

double terms(const Case& c) {
  const auto p = parse_interpolate(c);
  double n = 1;
  for (const auto& a : p.axes)
    n *= p.mode == InterpMode::Bicubic ? 4.0 : p.mode == InterpMode::Area ? std::ceil(double(a.in) / double(a.out)) + 1 : 2.0;
  return n + 4;
}

void nudge(Case& c, double ra, double, double) {
  if (!c.params.contains("scale_factor") || c.params.at("scale_factor").is_null()) return;
  json& sf = c.params["scale_factor"];
  if (sf.is_array())
    for (auto& v : sf) v = nudged(v.get<double>(), ra);
  else
    sf = nudged(sf.get<double>(), ra);
}

DrivingParameter driving(const Case& c) {
  DrivingParameter d{"scale (out/in)", 0};
  for (const auto& a : parse_interpolate(c).axes) d.value = std::max(d.value, double(a.out) / double(a.in));
  return d;
}

// Per axis and output position: the nearest index, or the floor of the linear or cubic source
// coordinate (reference/interpolate.cpp); area's bins are exact integers and decide nothing.
void decisions(const Case& c, Decisions& d) {
  const auto p = parse_interpolate(c);
  for (const auto& a : p.axes) {
    if (a.in <= 0) continue;
    for (int64_t dst = 0; dst < a.out; ++dst) switch (p.mode) {
        case InterpMode::Nearest:
        case InterpMode::NearestExact: {
          const float scale = interp_nearest_scale(a);
          const float pos = p.mode == InterpMode::NearestExact ? float(double(dst) + 0.5) * scale : float(dst) * scale;
          d.add(FlipKind::NearestIndex, std::min(int64_t(std::floor(pos)), a.in - 1));
          break;
        }
        case InterpMode::Linear:
        case InterpMode::Bilinear:
        case InterpMode::Trilinear:
        case InterpMode::Bicubic: {
          const double scale = interp_area_scale(a, p.align_corners);
          double src = p.align_corners ? scale * double(dst) : scale * (double(dst) + 0.5) - 0.5;
          // Linear modes clamp a negative source to 0 and the index to in - 1; cubic does neither.
          if (p.mode == InterpMode::Bicubic) d.add(FlipKind::Floor, int64_t(std::floor(src)));
          else d.add(FlipKind::Floor, std::min(int64_t(std::floor(std::max(src, 0.0))), a.in - 1));
          break;
        }
        case InterpMode::Area: break;
      }
  }
}

// Flip budget (a fraction of cases, README "Accuracy of the float32 kernels"): the kernels take
// every decision from the parameters exactly as the reference does, and rounding the input
// values moves none of them, so a flip here is a finding: none allowed.
constexpr double kFlipBudget = 0.0;

const OpCompareRegistrar kRegistrar{"interpolate", {terms, nudge, nullptr, nullptr, driving, decisions,
                                                    FlipKind::InputRounding, kFlipBudget}};

}  // namespace

}  // namespace oplab::compare
