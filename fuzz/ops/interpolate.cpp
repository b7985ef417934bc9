// interpolate in the fuzz layer (fuzz/op_fuzz.h). Cases: every mode at every rank PyTorch supports, size or scale_factor (scalar or
// per axis), recompute_scale_factor, align_corners; scale factors that are non-integer, < 1,
// or put in*sf within 1e-13 of an integer (the output size's floor on a knife edge); output
// sizes that divide the input (nearest and nearest-exact land on .5 ties and lattice points)
// or are 1; odd and prime input sizes; for nearest and nearest-exact, axes where the float32
// source index differs from the double one (fuzz/ops/interpolate_nearest.h).
#include <cmath>

#include "core/params.h"
#include "fuzz/case_edit.h"
#include "fuzz/gen_values.h"
#include "fuzz/op_fuzz.h"
#include "fuzz/ops/interpolate_nearest.h"

namespace oplab::fuzz {

namespace {

// One axis of a nearest mode whose float32 index differs from the double one: its input size
// replaces the axis' extent. Listed last among the choices below, so shrinking leaves it for a
// plain axis when the failure does not need it, and within the table it shrinks to in = 2.
const NearestF32Axis& pick_f32_axis(const std::vector<NearestF32Axis>& table) {
  return table[*weighted_index(std::vector<int>(table.size(), 1))];
}

// A scale factor for an axis of length `in`; a non-null `f32_table` offers the scale factors
// whose float32 index differs from the double one (and sets `took` when one is drawn).
double pick_scale_factor(int64_t& in, const std::vector<NearestF32Axis>* f32_table, bool& took) {
  switch (pick_one<int>({{5, 0}, {2, 1}, {2, 2}, {f32_table ? 2 : 0, 3}})) {
    case 0:
      return pick_of<double>({2.0, 0.5, 1.5, 2.1, 3.0, 1.0, 1.1, 0.3, 1.0 / 3.0, 0.75, 3.7, 1.25});
    case 1: {  // in*sf within a hair of an integer: the floor of the output size is on a knife edge
      const double target = double(pick_dim(1, 3 * in));
      return target / double(in) + pick_one<double>({{1, 0.0}, {1, 1e-13}, {1, -1e-13}});
    }
    case 2:  // smooth, between 0.25 and 4
      return 0.25 + std::abs(pick_real(3.75));
    default: {
      const NearestF32Axis& a = pick_f32_axis(*f32_table);
      in = a.in, took = true;
      return *a.scale_factor;
    }
  }
}

// An output size for an axis of length `in`; `f32_table` and `took` as for pick_scale_factor.
int64_t pick_size(int64_t& in, int nd, const std::vector<NearestF32Axis>* f32_table, bool& took) {
  switch (pick_one<int>({{6, 0}, {2, 1}, {1, 2}, {f32_table ? 2 : 0, 3}})) {
    case 0: return pick_dim(1, nd == 3 ? 6 : 12);
    case 1: {  // a divisor or a multiple of the input: nearest's source index lands on ties
      const int64_t k = pick_dim(2, 3);
      return pick_one<int>({{1, 0}, {1, 1}}) ? std::max<int64_t>(1, in / k) : in * k;
    }
    case 2: return 1;
    default: {
      const NearestF32Axis& a = pick_f32_axis(*f32_table);
      in = a.in, took = true;
      return a.out;
    }
  }
}

// antialias (SPEC §16), bilinear or bicubic on [N, C, H, W]: per axis an input extent and its
// output, drawn where the filter's support and its cut at the edges matter -- plain sizes,
// downscales of 2 to 32 (the support spans many pixels), extreme ones (1000 -> 1), scales near
// 1 from either side (support 1 or 2 against just above it), upscales (where bilinear equals
// plain bilinear and bicubic does not), output 1; as sizes or as (non-integer) scale factors.
Case antialias_case(const std::string& mode) {
  Case c;
  c.op = "interpolate";
  c.params = json{{"mode", mode}, {"antialias", true}, {"align_corners", pick_of<json>({json(nullptr), json(false)})}};
  Shape shape{pick_one<int64_t>({{8, 1}, {2, 2}, {1, 0}}), pick_dim(1, 2)};
  const bool by_size = *rc::gen::arbitrary<bool>();
  json outs = json::array();
  bool extreme = false;  // one extreme axis at most: 1000 x 1000 would be a large case
  for (int i = 0; i < 2; ++i) {
    int64_t in = 0;
    double sf = 0;
    switch (pick_one<int>({{3, 0}, {3, 1}, {extreme ? 0 : 1, 2}, {2, 3}, {1, 4}, {1, 5}})) {
      case 0: in = pick_extent(1, 9), sf = double(pick_dim(1, 9)) / double(std::max<int64_t>(in, 1)); break;
      case 1: in = pick_dim(8, 64), sf = 1.0 / pick_of<double>({2.0, 3.0, 2.5, 4.0, 7.3, 16.0, 32.0}); break;
      case 2: in = pick_of<int64_t>({100, 257, 1000}), sf = pick_of<double>({1.0, 2.0, 3.0}) / double(in), extreme = true; break;
      case 3: in = pick_dim(3, 24), sf = pick_of<double>({0.9, 0.97, 0.99, 1.01, 1.03, 1.1, 0.5 + 1e-3}); break;
      case 4: in = pick_extent(1, 6), sf = pick_of<double>({1.5, 2.0, 3.3, 4.0}); break;
      default: in = pick_dim(1, 30), sf = 1.0 / double(std::max<int64_t>(in, 1)); break;  // output 1
    }
    if (in > 0 && std::floor(double(in) * sf) < 1) sf = 1.0 / double(in);
    shape.push_back(in);
    if (by_size) outs.push_back(std::max<int64_t>(1, int64_t(std::floor(double(in) * sf + 1e-9))));
    else outs.push_back(sf);
  }
  c.params[by_size ? "size" : "scale_factor"] = outs;
  if (!by_size) c.params["recompute_scale_factor"] = pick_of<json>({json(nullptr), json(false), json(true)});
  c.inputs["input"] = pick_tensor(shape);
  return c;
}

// sometimes_redrawn's variant (gen_values.h): sizes whose every axis has a closed form in the
// CPU kernels (halide/generators/interpolate_paths.h), which the usual draws meet a few times
// in a thousand cases: out = 2 in for nearest, linear and cubic (in 5 or 6, long enough for the
// backward's usual reach; or 1, where cubic with align_corners fits), in = 2 out or 4 out for
// area; sizes given as `size`, so that the scale is exactly 1/2 (the fixed-weight forms), or
// for linear and cubic now and then as a factor a hair above 2 (the closed taps with the
// tables' weights).
Case closed_form_case(int nd) {
  Case c;
  c.op = "interpolate";
  // The modes with more closed forms (linear and cubic: x, y, z, fixed weights, the backward's)
  // twice as often as nearest and area.
  const std::string interp = nd == 1 ? "linear" : nd == 2 ? "bilinear" : "trilinear";
  const std::string mode = pick_of<std::string>({interp, nd == 2 ? "bicubic" : interp, "nearest", "area"});
  const bool interpolating = mode == interp || mode == "bicubic", area = mode == "area";
  Shape shape{pick_one<int64_t>({{3, 1}, {1, 2}}), pick_dim(1, 2)};
  json size = json::array();
  for (int i = 0; i < nd; ++i) {
    if (area) {
      const int64_t out = pick_dim(1, nd == 3 ? 2 : 3), factor = pick_of<int64_t>({2, 4});
      shape.push_back(out * factor), size.push_back(out);
    } else {
      const int64_t in = nd == 3 ? pick_one<int64_t>({{1, 1}, {1, 5}}) : pick_one<int64_t>({{1, 1}, {1, 5}, {1, 6}});
      shape.push_back(in), size.push_back(2 * in);
    }
  }
  c.params = json{{"mode", mode}};
  if (interpolating) c.params["align_corners"] = pick_of<json>({json(false), json(nullptr), json(true)});
  if (interpolating && pick_one<int>({{3, 0}, {1, 1}}) == 1) {
    c.params["scale_factor"] = 2.0 + std::ldexp(1.0, -40);  // floor(in * sf) = 2 in; 1/sf is not 1/2
    c.params["recompute_scale_factor"] = false;
  } else {
    c.params["size"] = size;
  }
  c.inputs["input"] = pick_tensor(shape);
  return c;
}

rc::Gen<Case> gen() {
  return sometimes_redrawn({9, 1}, [](int closed_forms) {
    Case c;
    c.op = "interpolate";
    const int nd = pick_one<int>({{3, 2}, {2, 1}, {1, 3}});
    std::vector<std::string> modes{"nearest", "nearest-exact", "area"};
    if (nd == 1) modes.push_back("linear");
    if (nd == 2) modes.insert(modes.end(), {"bilinear", "bicubic"});
    if (nd == 3) modes.push_back("trilinear");
    const std::string mode = pick_of(modes);
    const bool interpolating = mode == "linear" || mode == "bilinear" || mode == "bicubic" || mode == "trilinear";
    if (closed_forms) return closed_form_case(nd);

    Shape shape{pick_one<int64_t>({{8, 1}, {2, 2}, {1, 0}}), pick_dim(1, 2)};
    for (int i = 0; i < nd; ++i) shape.push_back(pick_extent(1, nd == 3 ? 4 : 7));
    c.params = json{{"mode", mode}};
    if (interpolating) c.params["align_corners"] = pick_of<json>({json(nullptr), json(false), json(true)});

    const bool scalar = *rc::gen::arbitrary<bool>();
    // nearest and nearest-exact: one axis at most may come from the float32 tables, and then
    // the sizes or factors stay per axis (a scalar would give every axis that axis' output, up
    // to 128, and a 3-D case of 128^3).
    const bool nearest = mode == "nearest" || mode == "nearest-exact", exact = mode == "nearest-exact";
    bool f32_axis = false;
    auto offer = [&](const std::vector<NearestF32Axis>& table) { return nearest && !f32_axis ? &table : nullptr; };
    if (pick_one<int>({{1, 0}, {1, 1}}) == 0) {  // size
      json size = json::array();
      for (int i = 0; i < nd; ++i)
        size.push_back(pick_size(shape[size_t(2 + i)], nd, offer(nearest_f32_sizes(exact)), f32_axis));
      c.params["size"] = scalar && !f32_axis ? size[0] : size;
    } else {  // scale_factor (the output size floor(in*sf) must stay positive)
      json sf = json::array();
      for (int i = 0; i < nd; ++i) {
        double s = pick_scale_factor(shape[size_t(2 + i)], offer(nearest_f32_scale_factors(exact)), f32_axis);
        if (std::floor(double(shape[size_t(2 + i)]) * s) < 1) s = 1.0;
        sf.push_back(s);
      }
      // Beside a float32 axis, another axis with out == in or out == 2*in takes its factor
      // exactly (1 or 2): PyTorch's CPU kernels would take their index shortcuts there whatever
      // the factor, and on float64 input the peer's two departures on one case could not be
      // told apart from the reference's (peer/divergences.cpp).
      if (f32_axis)
        for (int i = 0; i < nd; ++i) {
          const int64_t in = shape[size_t(2 + i)], out = int64_t(std::floor(double(in) * sf[size_t(i)].get<double>()));
          if (out == in) sf[size_t(i)] = 1.0;
          if (out == 2 * in) sf[size_t(i)] = 2.0;
        }
      if (scalar && !f32_axis) {
        double s = sf[0].get<double>();
        for (int i = 0; i < nd; ++i)
          if (std::floor(double(shape[size_t(2 + i)]) * s) < 1) s = 1.0;
        c.params["scale_factor"] = s;
      } else {
        c.params["scale_factor"] = sf;
      }
      // recompute=true would replace the table's 1/sf by in/out (which agrees in float32).
      c.params["recompute_scale_factor"] = f32_axis ? pick_of<json>({json(nullptr), json(false)})
                                                    : pick_of<json>({json(nullptr), json(false), json(true)});
    }
    c.inputs["input"] = pick_tensor(shape);
    // Two 2-D bilinear or bicubic cases in three are antialiased, drawn afresh (SPEC §16). The
    // choice is the last pick, so every other case is the one the same seed always drew (the
    // seeded bugs' stated catch counts, tests/test_fuzz_bugs.cpp), and shrinking an antialias
    // case tries the plain one first.
    if (nd == 2 && (mode == "bilinear" || mode == "bicubic") && pick_one<int>({{1, 0}, {2, 1}}) == 1)
      return antialias_case(mode);
    // The output shape comes from the op description (validation computes it).
    return c;
  });
}


std::vector<Mutation> mutations() {
  return {
      [](Case& c) {  // both size and scale_factor
        c.params["size"] = 2;
        c.params["scale_factor"] = 2.0;
        c.params.erase("recompute_scale_factor");
      },
      [](Case& c) {  // neither
        c.params.erase("size");
        c.params.erase("scale_factor");
      },
      [](Case& c) {  // align_corners with a mode that has none
        c.params["mode"] = *rc::gen::element(std::string("nearest"), std::string("area"), std::string("nearest-exact"));
        c.params["align_corners"] = *rc::gen::arbitrary<bool>();
      },
      [](Case& c) {  // a mode for another rank
        const int nd = c.in("input").rank() - 2;
        c.params["mode"] = nd == 2 ? "trilinear" : "bilinear";
        c.params.erase("align_corners");
      },
      [](Case& c) { c.params["mode"] = "cubic"; },
      [](Case& c) {  // non-positive size
        c.params.erase("scale_factor");
        c.params.erase("recompute_scale_factor");
        c.params["size"] = *rc::gen::element(0, -3);
      },
      [](Case& c) {  // non-positive or too small scale factor
        c.params.erase("size");
        c.params["scale_factor"] = *rc::gen::element(0.0, -2.0, 1e-9);
      },
      [](Case& c) {  // antialias with a mode that has none, or with align_corners, or not a bool
        switch (*rc::gen::inRange(0, 3)) {
          case 0: c.params["mode"] = *rc::gen::element(std::string("nearest"), std::string("area")); break;
          case 1: c.params["align_corners"] = true; break;
          default: c.params["antialias"] = *rc::gen::element(json("yes"), json(1)); return;
        }
        c.params["antialias"] = true;
      },
      [](Case& c) {  // recompute_scale_factor=true with size
        c.params.erase("scale_factor");
        c.params["size"] = 3;
        c.params["recompute_scale_factor"] = true;
      },
  };
}

void features(const Case& c, std::set<std::string>& f) {
  const InterpParams p = parse_interpolate(c);
  f.insert(std::string(interp_mode_name(p.mode)) + " " + std::to_string(p.axes.size()) + "-D");
  if (p.antialias) {
    f.insert(std::string("antialias ") + interp_mode_name(p.mode));
    for (const InterpAxis& a : p.axes) {
      const double s = interp_area_scale(a, false);
      if (s >= 8) f.insert("antialias downscale of 8 or more");
      else if (s > 1 && s < 1.25) f.insert("antialias scale just above 1");
      if (s < 1) f.insert("antialias upscale");
      // The support reaches past an edge: the weights kept are renormalised.
      if (a.in > 1 && interp_antialias_support(p.mode, s) * 2 >= double(a.in)) f.insert("antialias support cut at both edges");
    }
  }
  if (p.N == 0) f.insert("N=0");
  const json& ac = c.params.value("align_corners", json());
  if (!ac.is_null()) f.insert(ac.get<bool>() ? "align_corners=true" : "align_corners=false");
  const bool has_sf = c.params.contains("scale_factor") && !c.params.at("scale_factor").is_null();
  f.insert(has_sf ? "scale_factor" : "size");
  if (has_sf) {
    const json& rc = c.params.value("recompute_scale_factor", json());
    f.insert(rc.is_null() ? "recompute=null" : rc.get<bool>() ? "recompute=true" : "recompute=false");
  }
  if (p.mode == InterpMode::Nearest || p.mode == InterpMode::NearestExact) {
    // Where the source position (float32, as the kernel computes it) is an exact integer:
    // nearest-exact rounds a .5 tie there, nearest floors a lattice point.
    const bool exact = p.mode == InterpMode::NearestExact;
    for (const InterpAxis& a : p.axes) {
      const float scale = interp_nearest_scale(a);
      for (int64_t dst = 1; dst < a.out; ++dst) {
        const float pos = exact ? float(double(dst) + 0.5) * scale : float(dst) * scale;
        if (pos == std::floor(pos) && pos < float(a.in)) f.insert("nearest source index on a tie");
      }
      if (nearest_index_disagreement(a, exact) >= 0) f.insert("nearest index differs in float32 and double");
    }
  }
  // The linear and cubic modes' weights only matter where they are not trivial: an axis of one
  // pixel reads it with weights summing to 1, and align_corners with in == out (scale 1) or
  // out == 1 (scale 0) reads whole pixels.
  if (p.mode == InterpMode::Bicubic)
    for (const InterpAxis& a : p.axes) {
      const double scale = interp_area_scale(a, p.align_corners);
      for (int64_t dst = 0; dst < a.out && a.in > 1; ++dst) {
        const double src = p.align_corners ? scale * double(dst) : scale * (double(dst) + 0.5) - 0.5;
        if (src != std::floor(src)) {
          f.insert("bicubic weights between pixels");
          break;
        }
      }
    }
  if (p.align_corners)
    for (const InterpAxis& a : p.axes)
      if (a.in > 1 && a.out > 1 && a.in != a.out) f.insert("align_corners scale (in-1)/(out-1) not 0 or 1");
  // Without align_corners an output of one reads the centre (2x2 -> 1x1 bilinear is 2.5, SPEC
  // §8; older PyTorch used scale 0 and read pixel 0).
  const bool interpolating = p.mode == InterpMode::Linear || p.mode == InterpMode::Bilinear ||
                             p.mode == InterpMode::Bicubic || p.mode == InterpMode::Trilinear;
  if (interpolating && !p.align_corners)
    for (const InterpAxis& a : p.axes)
      if (a.in > 1 && a.out == 1) f.insert("linear or cubic axis of several pixels to size 1");
  const json& sfj = c.params.value("scale_factor", json());
  for (size_t i = 0; i < p.axes.size(); ++i) {
    const InterpAxis& a = p.axes[i];
    if (a.out == 1) f.insert("output size 1");
    if (a.out < a.in) f.insert("downsampling");
    if (a.out == a.in) f.insert("same size");
    if (has_sf) {
      const double sf = sfj.is_array() ? sfj[i].get<double>() : sfj.get<double>();
      if (sf != std::floor(sf)) f.insert("non-integer scale factor");
      if (sf < 1) f.insert("scale factor < 1");
      const double prod = double(a.in) * sf;
      if (prod != std::round(prod) && std::fabs(prod - std::round(prod)) < 1e-12) f.insert("in*sf within 1e-12 of an integer");
    }
  }
}

using Perm = std::vector<int64_t>;

Tensor permute2(const Tensor& t, const Perm& p0, const Perm& p1) { return permute_dim(permute_dim(t, 0, p0), 1, p1); }

Permuted permute(const Case& c) {
  const Tensor& x = c.in("input");
  const Perm pn = rotate_all(x.dim(0)), pc = rotate_all(x.dim(1));
  Permuted out{c, nullptr};
  out.c.inputs["input"] = permute2(x, pn, pc);
  if (c.grad_output) out.c.grad_output = permute2(*c.grad_output, pn, pc);
  out.map = [pn, pc](const std::string&, const Tensor& t) { return permute2(t, pn, pc); };
  return out;
}

const OpFuzzRegistrar kRegistrar{"interpolate", {gen, mutations, features, permute, always_linear, {"input"}}};

}  // namespace

}  // namespace oplab::fuzz
