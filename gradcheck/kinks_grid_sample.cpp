// Kinks of grid_sample (SPEC §12). The output is linear in input: no kinks there. In grid,
// each value moves its position's unnormalised coordinate c along one axis at the rate of the
// unnormalise factor ((S - 1)/2 or S/2), and the piece changes where c crosses:
//   bilinear, zeros:      every integer from -1 (cut-off) to S (cut-off): the floor, the edges;
//   bilinear, border:     every integer from 0 to S - 1 (the clamp's ends, the floor between);
//   bilinear, reflection: every integer, and every fold (those of align_corners are the
//                         integers k (S - 1), V-shaped; those of [-0.5, S - 0.5] fall inside
//                         the clamp's flat part);
//   nearest:              every half-integer where the rounding switches pixel (a jump);
//   bicubic:              every integer from -2 to S + 1 where a tap crosses into or out of
//                         the image or onto the clamp (zeros, border), every integer under
//                         reflection.
// The unbounded cases list the integers next to c only: the nearest kink each way is all a
// step needs.
#include <algorithm>
#include <cmath>

#include "core/params.h"
#include "gradcheck/eval.h"
#include "gradcheck/kinks_ops.h"
#include "reference/grid_sample_taps.h"

namespace oplab::gradcheck {

namespace {

// The source of one grid value: `value` is c (or c + 0.5 for nearest, whose jumps lie at
// half-integers of c), `rate` its derivative in the grid value.
KinkSource axis_source(const GridSampleParams& p, double c, int64_t S, int64_t flat, double rate, int a) {
  static const char* const kLattice[3] = {"x between pixels", "y between pixels", "z between pixels"};
  static const char* const kLo[3] = {"x low edge", "y low edge", "z low edge"};
  static const char* const kHi[3] = {"x high edge", "y high edge", "z high edge"};
  static const char* const kRound[3] = {"x nearest switch", "y nearest switch", "z nearest switch"};
  KinkSource s;
  s.grad = {{flat, rate}};
  s.value = p.mode == GridMode::Nearest ? c + 0.5 : c;
  const bool unbounded = p.padding == GridPadding::Reflection;
  if (unbounded) {
    s.lo = int64_t(std::floor(s.value)) - 1;
    s.hi = int64_t(std::floor(s.value)) + 2;
  } else if (p.mode == GridMode::Nearest) {
    // zeros: the pixel switches at -0.5 .. S - 0.5; border: at 0.5 .. S - 1.5.
    s.lo = p.padding == GridPadding::Zeros ? 0 : 1;
    s.hi = p.padding == GridPadding::Zeros ? S : S - 1;
  } else if (p.mode == GridMode::Bicubic) {
    s.lo = -2, s.hi = S + 1;
  } else {
    s.lo = p.padding == GridPadding::Zeros ? -1 : 0;
    s.hi = p.padding == GridPadding::Zeros ? S : S - 1;
  }
  s.lattice = p.mode == GridMode::Nearest ? kRound[a] : kLattice[a];
  if (!unbounded && p.mode != GridMode::Nearest) s.edge_lo = kLo[a], s.edge_hi = kHi[a];
  return s;
}

OpKinks grid_sample_kinks() {
  OpKinks k;
  k.affine = [](const Case&, const std::string& input) { return input != "grid"; };
  k.sources = [](const Case& c, const std::string& input, const KinkVisitor& visit) {
    if (input != "grid") return;
    const GridSampleParams p = parse_grid_sample(c);
    const Tensor& g = c.in("grid");
    const int64_t sizes[3] = {p.W, p.H, p.D};
    for (int64_t pos = 0; pos < p.N * p.Do * p.Ho * p.Wo; ++pos) {
      const double* v = g.data.data() + pos * p.nd;
      bool finite = true;
      for (int a = 0; a < p.nd; ++a) finite &= std::isfinite(v[a]);
      if (!finite) continue;  // samples nothing whatever the other values: constant, no kink
      for (int a = 0; a < p.nd; ++a) {
        const double c_a = ref::grid_unnormalise(v[a], sizes[a], p.align_corners);
        if (!(std::fabs(c_a) < 1e15)) continue;  // integers too dense to step between
        const double rate = ref::grid_unnormalise_factor(sizes[a], p.align_corners);
        visit(axis_source(p, c_a, sizes[a], pos * p.nd + a, rate, a));
        if (p.padding == GridPadding::Reflection && !p.align_corners && p.mode != GridMode::Nearest) {
          // Reflection about [-0.5, S - 0.5] folds the coordinate at -0.5 + k S: half-integers,
          // off the pixel lattice. Each fold is a kink (the derivative changes sign there).
          static const char* const kFold[3] = {"x reflection fold", "y reflection fold", "z reflection fold"};
          const double S = double(sizes[a]);
          KinkSource f;
          f.value = (c_a + 0.5) / S;
          f.grad = {{pos * p.nd + a, rate / S}};
          f.lo = int64_t(std::floor(f.value)) - 1;
          f.hi = int64_t(std::floor(f.value)) + 2;
          f.lattice = kFold[a];
          visit(f);
        }
        if (p.padding == GridPadding::Reflection && p.align_corners && p.mode == GridMode::Bilinear && sizes[a] > 1) {
          // Reflection about [0, S - 1] folds the coordinate at k (S - 1): pixel integers, where
          // the piece also changes, so each such point is two kinks at once (a compound kink
          // for the one-sided check). The function is V-shaped there and the clamp's derivative
          // 0 at its ends (docs/semantics.md) makes the gradient 0, neither side's slope.
          static const char* const kFold[3] = {"x reflection fold", "y reflection fold", "z reflection fold"};
          const double span = double(sizes[a] - 1);
          KinkSource f;
          f.value = c_a / span;
          f.grad = {{pos * p.nd + a, rate / span}};
          f.lo = int64_t(std::floor(f.value)) - 1;
          f.hi = int64_t(std::floor(f.value)) + 2;
          f.lattice = kFold[a];
          visit(f);
        }
      }
    }
  };
  // bicubic is a cubic in each grid value (its weights are cubic in the coordinate); bilinear
  // is linear in each and nearest constant.
  // Along a direction that moves every grid value at once, trilinear (5-D) is a product of
  // three linear factors: a cubic too.
  k.piece_degree = [](const Case& c, const std::string& input) {
    if (input != "grid") return 2;
    const GridSampleParams p = parse_grid_sample(c);
    return p.mode == GridMode::Bicubic || (p.nd == 3 && p.mode == GridMode::Bilinear) ? 3 : 2;
  };
  // A pixel of the largest axis is 2/S (or 2/(S-1)) of the normalised coordinate: the pieces of
  // every axis are at least that wide.
  k.piece_width = [](const Case& c, const std::string& input) {
    if (input != "grid") return 0.0;
    const GridSampleParams p = parse_grid_sample(c);
    return 2.0 / double(std::max<int64_t>({p.H, p.W, p.D, 1}));
  };
  // Each output element is a weighted sum of input pixels; the weights sum to 1 but bicubic's
  // are of both signs, their magnitudes summing to at most 1.375 per axis.
  k.term_scale = [](const Case& c) {
    const GridSampleParams p = parse_grid_sample(c);
    return (p.mode == GridMode::Bicubic ? 1.375 * 1.375 : 1.0) * max_abs(c.in("input"));
  };
  return k;
}

const OpKinksRegistrar kRegistrar{"grid_sample", grid_sample_kinks()};

}  // namespace

}  // namespace oplab::gradcheck
