// interpolate: mode, sizes, scale factors (SPEC §6) and the SPEC §7 checks.
#include <algorithm>
#include <cmath>

#include "core/echo.h"
#include "core/limits.h"
#include "core/op_desc.h"
#include "core/ops/checks.h"
#include "core/params.h"

namespace oplab {

using namespace checks;

const char* interp_mode_name(InterpMode m) {
  switch (m) {
    case InterpMode::Nearest: return "nearest";
    case InterpMode::NearestExact: return "nearest-exact";
    case InterpMode::Linear: return "linear";
    case InterpMode::Bilinear: return "bilinear";
    case InterpMode::Bicubic: return "bicubic";
    case InterpMode::Trilinear: return "trilinear";
    case InterpMode::Area: return "area";
  }
  return "?";
}

double interp_area_scale(const InterpAxis& a, bool align_corners) {
  if (align_corners) return a.out > 1 ? double(a.in - 1) / double(a.out - 1) : 0.0;
  if (a.scale_factor) return 1.0 / *a.scale_factor;
  return double(a.in) / double(a.out);
}

float interp_nearest_scale(const InterpAxis& a) {
  // PyTorch computes this scale in float32 (1/sf rounded to float, or in/out in float).
  if (a.scale_factor) return static_cast<float>(1.0 / *a.scale_factor);
  return static_cast<float>(a.in) / static_cast<float>(a.out);
}

double interp_antialias_support(InterpMode mode, double scale) {
  return (mode == InterpMode::Bicubic ? 2.0 : 1.0) * std::max(scale, 1.0);
}

int64_t interp_antialias_max_taps(InterpMode mode, const InterpAxis& a) {
  // Taps run from int(centre - support + 0.5) to int(centre + support + 0.5), exclusive: at
  // most ceil(2 * support) + 1 of them, and never more than the axis has.
  const double support = interp_antialias_support(mode, interp_area_scale(a, false));
  return std::min<int64_t>(a.in, int64_t(std::ceil(2.0 * support)) + 1);
}

namespace {

InterpMode parse_mode(const Case& c, int nd) {
  const std::string m = text(c, "mode", "nearest");
  struct Entry { const char* name; InterpMode mode; int rank; };  // rank 0: any of 1-3 spatial dims
  static const Entry table[] = {
      {"nearest", InterpMode::Nearest, 0},   {"nearest-exact", InterpMode::NearestExact, 0},
      {"linear", InterpMode::Linear, 1},     {"bilinear", InterpMode::Bilinear, 2},
      {"bicubic", InterpMode::Bicubic, 2},   {"trilinear", InterpMode::Trilinear, 3},
      {"area", InterpMode::Area, 0}};
  for (const auto& e : table) {
    if (m != e.name) continue;
    if (e.rank != 0 && e.rank != nd)
      fail(c.op, "mode \"" + m + "\" needs a " + std::to_string(e.rank + 2) + "-D input, got " +
                     std::to_string(nd + 2) + "-D shape " + shape_str(c.in("input").shape));
    return e.mode;
  }
  fail(c.op, "mode=\"" + echo(m) + "\" is not one of nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area");
}

bool is_interpolating(InterpMode m) {
  return m == InterpMode::Linear || m == InterpMode::Bilinear || m == InterpMode::Bicubic || m == InterpMode::Trilinear;
}

// `size` or `scale_factor`: a scalar or one entry per spatial dim.
std::vector<json> per_axis(const Case& c, const std::string& key, int nd) {
  const json& v = c.params.at(key);
  if (!v.is_array()) return std::vector<json>(size_t(nd), v);
  if (int(v.size()) != nd)
    fail(c.op, key + "=" + echo_json(v) + " must have one entry per spatial dim (" + std::to_string(nd) + ")");
  return std::vector<json>(v.begin(), v.end());
}

}  // namespace

InterpParams parse_interpolate(const Case& c) {
  const std::string& op = c.op;
  only_params(c, {"mode", "size", "scale_factor", "align_corners", "recompute_scale_factor", "antialias"});
  only_inputs(c, {"input"}, {});
  const Tensor& x = c.in("input");
  if (x.rank() < 3 || x.rank() > 5)
    fail(op, "input must have rank 3, 4 or 5 (N, C and 1-3 spatial dims), got shape " + shape_str(x.shape));
  check_elements(op, "input", x.shape);
  const int nd = x.rank() - 2;

  InterpParams p;
  p.mode = parse_mode(c, nd);
  p.N = x.dim(0), p.C = x.dim(1);

  const json ac = c.params.value("align_corners", json());
  if (!ac.is_null()) {
    if (!ac.is_boolean()) fail(op, "align_corners=" + echo_json(ac) + " must be true, false or null");
    if (!is_interpolating(p.mode))
      fail(op, "align_corners=" + echo_json(ac) + " is only allowed with linear, bilinear, bicubic or trilinear, not mode \"" +
                   interp_mode_name(p.mode) + "\"");
    p.align_corners = ac.get<bool>();
  }
  const json aa = c.params.value("antialias", json());
  if (!aa.is_null()) {
    if (!aa.is_boolean()) fail(op, "antialias=" + echo_json(aa) + " must be true, false or null");
    p.antialias = aa.get<bool>();
    // SPEC §16: torch has antialias for 2-D bilinear and bicubic only (its 1-D linear and 3-D
    // trilinear raise); the spec, like Pillow, defines the half-pixel grid only.
    if (p.antialias && p.mode != InterpMode::Bilinear && p.mode != InterpMode::Bicubic)
      fail(op, "antialias=true is only defined for bilinear and bicubic (2-D), not mode \"" +
                   std::string(interp_mode_name(p.mode)) + "\"");
    if (p.antialias && p.align_corners)
      fail(op, "antialias=true needs align_corners false or null (SPEC §16 defines the half-pixel grid only)");
  }
  const json rc = c.params.value("recompute_scale_factor", json());
  if (!rc.is_null() && !rc.is_boolean()) fail(op, "recompute_scale_factor=" + echo_json(rc) + " must be true, false or null");
  const bool recompute = rc.is_boolean() && rc.get<bool>();

  const bool has_size = c.params.contains("size") && !c.params.at("size").is_null();
  const bool has_sf = c.params.contains("scale_factor") && !c.params.at("scale_factor").is_null();
  if (has_size == has_sf) fail(op, "exactly one of size and scale_factor must be given");
  if (has_size && recompute) fail(op, "recompute_scale_factor=true needs scale_factor, not size");

  for (int i = 0; i < nd; ++i) {
    InterpAxis a;
    a.in = x.dim(2 + i);
    if (a.in <= 0) fail(op, "input spatial size " + shape_str(x.shape) + " must be positive");
    p.axes.push_back(a);
  }
  if (has_size) {
    const auto sizes = per_axis(c, "size", nd);
    for (int i = 0; i < nd; ++i) {
      if (!sizes[size_t(i)].is_number_integer() || sizes[size_t(i)].get<int64_t>() <= 0)
        fail(op, "size=" + echo_json(c.params.at("size")) + " must be positive integers");
      p.axes[size_t(i)].out = sizes[size_t(i)].get<int64_t>();
    }
  } else {
    const auto sfs = per_axis(c, "scale_factor", nd);
    for (int i = 0; i < nd; ++i) {
      const json& s = sfs[size_t(i)];
      const double sf = s.is_number() ? s.get<double>() : NAN;
      if (!std::isfinite(sf) || sf <= 0)
        fail(op, "scale_factor=" + echo_json(c.params.at("scale_factor")) + " must be finite positive numbers");
      InterpAxis& a = p.axes[size_t(i)];
      // Output size is floor(in * sf) computed in double, as PyTorch does.
      const double out = std::floor(double(a.in) * sf);
      if (out > double(kMaxElements))
        fail(op, "scale_factor=" + num_str(sf) + " gives an output size beyond the int32 index of the kernels");
      a.out = int64_t(out);
      if (a.out <= 0)
        fail(op, "scale_factor=" + num_str(sf) + " gives output size " + std::to_string(a.out) + " for input size " +
                     std::to_string(a.in) + "; it must be positive");
      // area always recomputes its bins from the sizes; recompute=true drops sf too.
      if (!recompute && p.mode != InterpMode::Area) a.scale_factor = sf;
    }
  }
  check_grad_output(c, p.output_shape());

  // Resource policy (core/limits.h): every output element reads the product of its axes' taps
  // (nearest 1, linear 2, cubic 4, area the longest bin); every axis builds a table of its
  // output positions (bounded by the limit on a dimension).
  ResourceUse use = case_tensors(c, p.output_shape());
  double taps = 1;
  for (const InterpAxis& a : p.axes) {
    if (p.antialias) {
      taps *= double(interp_antialias_max_taps(p.mode, a));
      continue;
    }
    switch (p.mode) {
      case InterpMode::Nearest:
      case InterpMode::NearestExact: break;
      case InterpMode::Linear:
      case InterpMode::Bilinear:
      case InterpMode::Trilinear: taps *= 2; break;
      case InterpMode::Bicubic: taps *= 4; break;
      case InterpMode::Area: taps *= std::min(std::ceil(double(a.in) / double(a.out)) + 1.0, double(a.in)); break;
    }
  }
  use.work = double(shape_span(p.output_shape())) * taps;
  use.work_what = "output elements x " + num_str(taps) + " taps";
  enforce_resource_limits(op, use);
  return p;
}

namespace {
const OpRegistrar kInterpolate{
    "interpolate",
    {"interpolate", 40, {{"input", true, true}},
     typed_parser(parse_interpolate)}};
}  // namespace

}  // namespace oplab
