// grid_sample in the fuzz layer (fuzz/op_fuzz.h). Cases: 4-D (bilinear, nearest, bicubic) and
// 5-D (bilinear, nearest) inputs with axes of 1 to 6 pixels (size 1 and odd primes included),
// every padding mode, align_corners both ways, and grid values aimed at the op's edges: exactly
// -1, 0 and 1; pixel centres and the half-pixel edges between them (nearest's ties); the
// reflection boundaries and their folds; just outside the image, a few images away and far
// outside; some a hair (1e-9) off; and now and then a NaN or Inf in the grid (in the input:
// gen_case, for every op). Linear in input; batches and channels commute with it.
#include <cmath>
#include <limits>

#include "core/params.h"
#include "fuzz/case_edit.h"
#include "fuzz/gen_values.h"
#include "fuzz/op_fuzz.h"
#include "reference/grid_sample_taps.h"

namespace oplab::fuzz {

namespace {

// The grid value whose unnormalised coordinate is exactly c where some double near the
// inverse gives it (otherwise the nearest found), so that aimed edges are hit exactly.
double grid_value_for(double c, int64_t S, bool ac) {
  if (ac && S == 1) return pick_of<double>({-1.0, 0.0, 1.0});  // every value reads the one pixel
  double g = ac ? 2 * c / double(S - 1) - 1 : (2 * c + 1) / double(S) - 1;
  double best = g;
  for (int k = 0; k < 8; ++k) {
    if (ref::grid_unnormalise(g, S, ac) == c) return g;
    g = std::nextafter(g, ref::grid_unnormalise(g, S, ac) < c ? 2.0 * std::fabs(g) + 1 : -2.0 * std::fabs(g) - 1);
  }
  return best;
}

// One grid value along an axis of S pixels. `near_image`: only coordinates in [-0.5, S - 0.5],
// whose four cubic taps read two pixels at least (bicubic with border or reflection padding: farther out all
// four taps read one pixel and the grid gradient is rounding noise, see gen() below).
double pick_grid_value(int64_t S, bool ac, bool near_image) {
  const double L = double(S);
  const double hair = pick_one<double>({{2, 0.0}, {1, 1e-9}, {1, -1e-9}});
  switch (pick_one<int>({{4, 0}, {3, 1}, {3, 2}, {near_image ? 0 : 2, 3}, {near_image ? 0 : 2, 4}, {near_image ? 0 : 1, 5}})) {
    case 0: return pick_real(near_image ? 1.0 : 1.25);          // smooth, mostly inside
    case 1: return pick_of<double>({-1.0, 1.0, 0.0}) + hair;    // the normalised ends and the centre
    case 2: {                                                   // a pixel centre or a half-pixel edge
      const double c = double(*rc::gen::inRange<int>(near_image ? -1 : -4, 2 * int(S) + (near_image ? 0 : 3))) / 2.0;
      return grid_value_for(c, S, ac) + hair;
    }
    case 3: {  // the reflection boundaries (0, S-1 or -0.5, S-0.5) and their folds a span away
      const double lo = ac ? 0.0 : -0.5, hi = ac ? L - 1 : L - 0.5, span = hi - lo;
      const double c = pick_of<double>({lo, hi, lo - span, hi + span, lo - 2 * span, hi + 2 * span});
      return grid_value_for(c, S, ac) + hair;
    }
    case 4: return pick_of<double>({1.5, -1.5, 3.0, -3.0, 2.25, -2.75});  // outside, a few images away
    default: return pick_of<double>({1e3, -1e3, 12345.5});                // far outside
  }
}

// The variants sometimes_redrawn draws (gen_values.h): 2-D or 5-D cases whose forward takes
// the CPU's plain gather (a sparse grid: one position for more than 64 pixels or voxels,
// halide/glue/grid_sample_path.h), and 2-D or 5-D cases with more channels than a block of
// the channels-last forwards and of the grad_input scatters (halide/generators/kernel_widths.h).
enum Variant { kUsual = 0, kSparseGrid = 1, kManyChannels = 2 };

Case draw(int variant) {
  Case c;
  c.op = "grid_sample";
  // Sparse grids as often 5-D as 2-D: the 5-D plain gather is otherwise the path a short
  // fuzz run misses.
  const int nd = variant == kSparseGrid ? pick_one<int>({{1, 2}, {1, 3}}) : pick_one<int>({{3, 2}, {1, 3}});
  const std::string mode = nd == 2 ? pick_of<std::string>({"bilinear", "nearest", "bicubic"})
                                   : pick_of<std::string>({"bilinear", "nearest"});
  const std::string pad = pick_of<std::string>({"zeros", "border", "reflection"});
  const bool ac = *rc::gen::arbitrary<bool>();
  c.params = json{{"mode", mode}, {"padding_mode", pad}, {"align_corners", ac}};

  const int64_t N = pick_one<int64_t>({{8, 1}, {2, 2}, {1, 0}});
  // bicubic with border or reflection padding on a one-pixel axis reads one pixel through
  // all four taps, whose slopes cancel: its grid gradient is rounding noise around 0 in any
  // summation order, which no relative comparison can judge (docs/semantics.md); such axes
  // have two pixels at least. Zeros padding and the other modes keep axes of one pixel.
  const int64_t min_extent = mode == "bicubic" && pad != "zeros" ? 2 : 1;
  // A variant's sizes shrink to the usual small ones (weight 0: never drawn, sometimes_redrawn).
  Shape in{N, variant == kManyChannels ? pick_one<int64_t>({{0, 1}, {0, 2}, {1, 17}, {1, 20}}) : pick_dim(1, 2)}, grid{N};
  for (int i = 0; i < nd; ++i)
    in.push_back(variant == kSparseGrid ? pick_one<int64_t>({{0, min_extent}, {0, 2}, {1, 9}, {1, 11}, {1, 13}})
                                        : pick_extent(min_extent, nd == 3 ? 4 : 6));
  for (int i = 0; i < nd; ++i) grid.push_back(variant == kSparseGrid ? 1 : pick_dim(1, nd == 3 ? 2 : 3));
  grid.push_back(nd);
  // Feature values drawn one by one, never one value everywhere (pick_tensor's option for
  // max ties): on a constant image every grid gradient cancels to rounding noise as well.
  c.inputs["input"] = *rc::gen::exec([in] {
    Tensor t(in);
    for (double& v : t.data) v = pick_value();
    return t;
  });

  // Grid values: one nested pick (see pick_tensor), x along W, y along H, z along D.
  // bicubic with border or reflection: far outside the image on both axes, all sixteen taps
  // read one pixel and the grid gradient cancels to rounding noise, as on a one-pixel axis;
  // its grid values stay within a pixel or two of the image (taps are still padded there).
  const bool near_image = min_extent == 2;
  c.inputs["grid"] = *rc::gen::exec([grid, in, nd, ac, near_image] {
    Tensor g(grid);
    for (size_t i = 0; i < g.data.size(); ++i) {
      const int a = int(i % size_t(nd));
      g.data[i] = pick_grid_value(in[size_t(2 + nd - 1 - a)], ac, near_image);
    }
    // Now and then one non-finite value: that position samples nothing (SPEC §12).
    if (!g.data.empty() && pick_one<int>({{9, 0}, {1, 1}}) == 1)
      g.data[size_t(*rc::gen::inRange<int64_t>(0, g.numel()))] =
          pick_of<double>({std::numeric_limits<double>::quiet_NaN(), INFINITY, -INFINITY});
    return g;
  });
  return c;
}

rc::Gen<Case> gen() { return sometimes_redrawn({20, 1, 1}, draw); }

std::vector<Mutation> mutations() {
  return {
      [](Case& c) {  // grid of another rank than the input
        const Tensor& g = c.in("grid");
        c.inputs["grid"] = g.rank() == 4 ? Tensor({g.dim(0), 1, 1, 1, 3}, 0.0) : Tensor({g.dim(0), 1, 1, 2}, 0.0);
      },
      [](Case& c) {  // last axis not the number of spatial dims
        Shape s = c.in("grid").shape;
        s.back() = s.back() == 2 ? 3 : 2;
        c.inputs["grid"] = Tensor(s, 0.0);
      },
      [](Case& c) {  // batch sizes that differ
        Shape s = c.in("grid").shape;
        s[0] += 1;
        c.inputs["grid"] = Tensor(s, 0.0);
      },
      [](Case& c) {  // bicubic on a 5-D input
        const Tensor& x = c.in("input");
        c.inputs["input"] = Tensor({x.dim(0), x.dim(1), 2, 2, 2}, 0.5);
        c.inputs["grid"] = Tensor({x.dim(0), 1, 1, 1, 3}, 0.0);
        c.params["mode"] = "bicubic";
      },
      [](Case& c) { c.params["mode"] = *rc::gen::element(std::string("linear"), std::string("cubic"), std::string("")); },
      [](Case& c) { c.params["padding_mode"] = *rc::gen::element(std::string("zero"), std::string("replicate")); },
      [](Case& c) { c.params["align_corners"] = "yes"; },
      [](Case& c) { c.params["scale_factor"] = 2.0; },  // a parameter grid_sample has not
      [](Case& c) {                                     // an empty spatial axis
        Shape s = c.in("input").shape;
        s.back() = 0;
        c.inputs["input"] = Tensor(s);
      },
  };
}

void features(const Case& c, std::set<std::string>& f) {
  const GridSampleParams p = parse_grid_sample(c);
  f.insert(std::string(grid_mode_name(p.mode)) + " " + std::to_string(p.nd) + "-D");
  f.insert(std::string("padding ") + grid_padding_name(p.padding));
  f.insert(p.align_corners ? "align_corners=true" : "align_corners=false");
  if (p.N == 0) f.insert("N=0");
  const int64_t sizes[3] = {p.W, p.H, p.D};
  for (int a = 0; a < p.nd; ++a)
    if (sizes[a] == 1) f.insert("axis of one pixel");
  const Tensor& g = c.in("grid");
  for (size_t i = 0; i < g.data.size(); ++i) {
    const double v = g.data[i];
    if (!std::isfinite(v)) {
      f.insert("non-finite grid value");
      continue;
    }
    const int64_t S = sizes[i % size_t(p.nd)];
    if (v == 1 || v == -1) f.insert("grid value exactly +-1");
    if (std::fabs(v) > 1) f.insert("grid value outside [-1, 1]");
    if (std::fabs(v) > 100) f.insert("grid value far outside");
    const double x = ref::grid_unnormalise(v, S, p.align_corners);
    const bool inside = x > -1 && x < double(S);
    if (x == std::floor(x) && inside) f.insert("coordinate on a pixel centre");
    if (x - std::floor(x) == 0.5 && inside) {
      f.insert("coordinate on a half-pixel edge");
      if (p.mode == GridMode::Nearest) f.insert("nearest tie (round half to even)");
    }
    if (p.padding == GridPadding::Reflection) {
      const double lo = p.align_corners ? 0.0 : -0.5, hi = p.align_corners ? double(S - 1) : double(S) - 0.5;
      if (x == lo || x == hi) f.insert("coordinate on a reflection boundary");
      if (x < lo - (hi - lo) || x > hi + (hi - lo)) f.insert("reflection folds more than once");
    }
    if (p.padding == GridPadding::Border && (x < 0 || x > double(S - 1))) f.insert("border clamps a coordinate");
    if (p.mode == GridMode::Bicubic && p.padding != GridPadding::Zeros && (x < 1 || x > double(S - 2)))
      f.insert("bicubic taps padded one by one");
  }
}

using Perm = std::vector<int64_t>;

// Batches and channels relabelled: the output and grad_input follow both, grad_grid the batch.
Permuted permute(const Case& c) {
  const Tensor& x = c.in("input");
  const Perm pn = rotate_all(x.dim(0)), pc = rotate_all(x.dim(1));
  auto both = [pn, pc](const Tensor& t) { return permute_dim(permute_dim(t, 0, pn), 1, pc); };
  Permuted out{c, nullptr};
  out.c.inputs["input"] = both(x);
  out.c.inputs["grid"] = permute_dim(c.in("grid"), 0, pn);
  if (c.grad_output) out.c.grad_output = both(*c.grad_output);
  out.map = [pn, both](const std::string& key, const Tensor& t) {
    return key == "grads.grid" ? permute_dim(t, 0, pn) : both(t);
  };
  return out;
}

const OpFuzzRegistrar kRegistrar{"grid_sample", {gen, mutations, features, permute, always_linear, {"input"}}};

}  // namespace

}  // namespace oplab::fuzz
