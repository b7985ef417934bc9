// ms_deform_attn in the fuzz layer (fuzz/op_fuzz.h). Cases: 1 to 4 levels of 1 to 6 pixels a
// side (a level of size 1 often), 1 to 4 points, 1 to 3 heads, Dh 1 to 4, batches of 1 to 3
// (an odd batch: kernels that split the batch into steps) and sometimes none. Locations are
// aimed, per axis, at what decides a bilinear sample: exactly 0 and 1 (the map's outer edges,
// pixel coordinate -0.5 and size - 0.5), pixel centres (k + 0.5) / size (the floor switches),
// the cut-offs at pixel -1 and size, half a pixel outside, and outside [0, 1] altogether;
// the edges a hair (1e-9) off too; rarely NaN or +-Inf, which samples nothing (the peer
// declines those cases: its grid_sample gives NaN there).
// Linear in value and in attention_weights; batches and queries may be permuted.
#include <cmath>
#include <utility>
#include <vector>

#include "core/msda_levels.h"
#include "core/params.h"
#include "fuzz/case_edit.h"
#include "fuzz/gen_values.h"
#include "fuzz/op_fuzz.h"
#include "reference/ms_deform_attn_points.h"
#include "reference/zero_pad_bilinear.h"

namespace oplab::fuzz {

namespace {

// A normalised location along an axis of `size` pixels.
double pick_location(int64_t size) {
  const double n = double(size);
  switch (pick_one<int>({{4, 0}, {3, 1}, {2, 2}, {2, 3}, {1, 4}})) {
    case 0: return 0.5 + pick_real(0.5);  // smooth, inside
    case 1: {                             // a pixel centre: the floor switches there
      const double k = double(pick_dim(0, size - 1));
      return pick_edge({(k + 0.5) / n});
    }
    case 2: return pick_edge({0.0, 1.0});  // the map's outer edges
    case 3:                                // the cut-offs (pixel -1 and size) and half a pixel outside
      return pick_edge({-0.5 / n, (n + 0.5) / n, -0.25 / n, (n + 0.25) / n});
    default: return 0.5 + pick_real(1.5);  // outside [0, 1] as often as not
  }
}

// sometimes_redrawn's variant (gen_values.h): a head dimension of 16 or 17, which fills the CPU
// kernels' vectors over it (halide/generators/kernel_widths.h); the usual ones are 1 to 4.
rc::Gen<Case> gen() {
  return sometimes_redrawn({15, 1}, [](int wide_head) {
    Case c;
    c.op = "ms_deform_attn";
    const int64_t N = pick_one<int64_t>({{6, 1}, {3, 2}, {3, 3}, {1, 0}});
    const int64_t L = pick_dim(1, 4), P = pick_dim(1, 4), M = pick_dim(1, 3);
    const int64_t Dh = wide_head ? pick_one<int64_t>({{0, 1}, {0, 2}, {1, 16}, {1, 17}}) : pick_dim(1, 4);
    const int64_t Lq = pick_dim(1, 3);
    std::vector<std::pair<int64_t, int64_t>> hw;
    for (int64_t l = 0; l < L; ++l) {
      const int64_t H = pick_one<int64_t>({{4, pick_dim(1, 6)}, {1, 1}});  // drawn H first, then W
      hw.push_back({H, pick_one<int64_t>({{4, pick_dim(1, 6)}, {1, 1}})});
    }
    const MsdaLevels lv = msda_levels(hw);
    const Tensor &shapes = lv.spatial_shapes, &starts = lv.level_start_index;
    const int64_t S = lv.S;
    Tensor loc(Shape{N, Lq, M, L, P, 2});
    // Most cases hold locations a float32 kernel reads exactly (rounded to float32 here), so
    // that an edge is the same edge on both sides; the others keep the double values, whose
    // float32 rounding moves a point across a pixel centre or a cut-off: boundary flips.
    const bool float_exact = pick_one<int>({{3, 1}, {1, 0}}) == 1;
    for (size_t i = 0; i < loc.data.size(); ++i) {
      const int64_t l = (int64_t(i) / (2 * P)) % L;
      loc.data[i] = pick_location(int64_t(shapes.at(l, i % 2 ? 0 : 1)));  // x along W, y along H
      if (float_exact) loc.data[i] = double(float(loc.data[i]));
    }
    // A few cases have a non-finite coordinate (one only: the peer declines such cases).
    if (!loc.data.empty() && pick_one<int>({{39, 0}, {1, 1}}) == 1)
      loc.data[size_t(pick_dim(0, loc.numel() - 1))] = pick_of<double>({std::nan(""), INFINITY, -INFINITY});
    c.inputs["value"] = pick_tensor({N, S, M, Dh});
    c.inputs["spatial_shapes"] = shapes;
    c.inputs["level_start_index"] = starts;
    c.inputs["sampling_locations"] = loc;
    c.inputs["attention_weights"] = pick_tensor({N, Lq, M, L, P});
    return c;
  });
}

std::vector<Mutation> mutations() {
  return {
      [](Case& c) { c.inputs.at("spatial_shapes").data[0] = 2.5; },  // not an integer
      [](Case& c) { c.inputs.at("spatial_shapes").data[1] = 0; },    // an empty level
      [](Case& c) { c.inputs.at("level_start_index").data[0] = 1; },  // not the prefix sum
      [](Case& c) {                                                   // value rows != sum of H*W
        Tensor& v = c.inputs.at("value");
        Shape s = v.shape;
        s[1] += 1;
        v = Tensor(s, 0.5);
      },
      [](Case& c) {  // spatial_shapes not [L, 2]
        const int64_t L = c.in("spatial_shapes").dim(0);
        c.inputs["spatial_shapes"] = Tensor(Shape{L, 3}, 1.0);
      },
      [](Case& c) {  // sampling_locations with three coordinates
        Shape s = c.in("sampling_locations").shape;
        s.back() = 3;
        c.inputs["sampling_locations"] = Tensor(s, 0.5);
      },
      [](Case& c) {  // attention_weights of another number of points
        Shape s = c.in("attention_weights").shape;
        s.back() += 1;
        c.inputs["attention_weights"] = Tensor(s, 0.5);
      },
      [](Case& c) {  // no level at all
        c.inputs["spatial_shapes"] = Tensor(Shape{0, 2});
        c.inputs["level_start_index"] = Tensor(Shape{0});
      },
  };
}

void features(const Case& c, std::set<std::string>& f) {
  const MsDeformAttnParams p = parse_ms_deform_attn(c);
  f.insert(std::to_string(p.L) + (p.L == 1 ? " level" : " levels"));
  if (p.N == 0) f.insert("N=0");
  for (int64_t l = 0; l < p.L; ++l)
    if (p.H[size_t(l)] == 1 || p.W[size_t(l)] == 1) f.insert("level of size 1");
  const Tensor& loc = c.in("sampling_locations");
  ref::for_each_msda_point(p, loc, [&](const ref::MsdaPoint& s) {
    const double H = double(p.H[size_t(s.l)]), W = double(p.W[size_t(s.l)]);
    for (const auto& [v, size] : {std::pair<double, double>{s.y, H}, {s.x, W}}) {
      if (v == std::floor(v) && v >= 0 && v < size) f.insert("sample on a pixel centre (floor switch)");
      if (v == -1.0 || v == size) f.insert("sample exactly on a cut-off (-1 or size)");
    }
    const bool in = ref::zero_pad_in_range(s.y, s.x, H, W);
    if (in && (s.y < 0 || s.x < 0 || s.y > H - 1 || s.x > W - 1)) f.insert("sample partly outside its level");
    if (!in) f.insert("sample outside its level");
    const double lx = loc.data[size_t(s.loc)], ly = loc.data[size_t(s.loc + 1)];
    if (lx == 0 || lx == 1 || ly == 0 || ly == 1) f.insert("location exactly 0 or 1");
  });
}

// A rotation of the batch and of the queries: value follows the batch; the locations, the
// weights, grad_output and the output follow both; grad_value the batch alone.
Permuted permute(const Case& c) {
  const MsDeformAttnParams p = parse_ms_deform_attn(c);
  const std::vector<int64_t> pn = rotate_all(p.N), pq = rotate_all(p.Lq);
  auto both = [pn, pq](const Tensor& t) { return permute_dim(permute_dim(t, 0, pn), 1, pq); };
  Permuted out{c, nullptr};
  out.c.inputs["value"] = permute_dim(c.in("value"), 0, pn);
  out.c.inputs["sampling_locations"] = both(c.in("sampling_locations"));
  out.c.inputs["attention_weights"] = both(c.in("attention_weights"));
  if (c.grad_output) out.c.grad_output = both(*c.grad_output);
  out.map = [pn, both](const std::string& key, const Tensor& t) {
    return key == "grads.value" ? permute_dim(t, 0, pn) : both(t);
  };
  return out;
}

const OpFuzzRegistrar kRegistrar{"ms_deform_attn", {gen, mutations, features, permute, always_linear,
                                                    {"value", "attention_weights"}, {"value", "attention_weights"}, "value"}};

}  // namespace

}  // namespace oplab::fuzz
