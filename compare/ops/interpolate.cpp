// interpolate in the comparison layer (compare/op_compare.h): 2 (linear), 4 (cubic) or the
// area window's taps per axis; the float32 decisions hang on the scale factor, which the flip
// check nudges.
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

const OpCompareRegistrar kRegistrar{"interpolate", {terms, nudge, nullptr, nullptr, driving}};

}  // namespace

}  // namespace oplab::compare
