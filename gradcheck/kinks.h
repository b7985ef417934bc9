#pragma once
// Where the forward of an op stops being smooth, seen from one differentiable input.
//
// Every op here is piecewise polynomial in each differentiable input: the floor of a sampling
// coordinate, the border cut-offs, a max winner or a RoIPool argmax switch pieces. A central
// difference whose step ±h crosses a switch measures a secant over two pieces, which is no
// evidence about either one-sided derivative. The per-op finders (kinks_<op>.cpp, the only
// files of gradcheck/ that name an op) describe each switch as a *kink source*: a quantity
// that is linear in the perturbed input near the current point, and the integers at which the
// piece changes when that quantity crosses them. Everything else here is generic.
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/case.h"
#include "core/op_traits.h"

namespace oplab::gradcheck {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One switch of the forward: the piece changes where `value` crosses an integer k with
// lo <= k <= hi. `value` moves with the perturbed input x as value + Σ grad[i].second * Δx[i].
// Examples: a deform_conv2d sample row y (integers -1..H, rate 1 in its Δy offset element);
// the gap v_b - v_w between a max competitor and the winner (lo = hi = 0, rates = the two
// samples' interpolation weights of each pixel).
struct KinkSource {
  double value = 0;
  std::vector<std::pair<int64_t, double>> grad;  // (flat element of the input, d value / d x)
  int64_t lo = 0, hi = 0;
  // Names of the kind of kink at k: `edge_lo` at k == lo, `edge_hi` at k == hi, `near_lo` at
  // lo + 1, `near_hi` at hi - 1, `lattice` elsewhere. Empty near_* fall back to `lattice`.
  const char* edge_lo = "";
  const char* edge_hi = "";
  const char* near_lo = "";
  const char* near_hi = "";
  const char* lattice = "";
  std::string label(int64_t k) const;
};

using KinkVisitor = std::function<void(const KinkSource&)>;

// What one step along x + t*u meets. t is in units of the input itself.
struct KinkReach {
  double ahead = kInf;        // smallest t > 0 at which a kink lies
  double behind = kInf;       // smallest t > 0 such that a kink lies at -t
  std::set<std::string> at;   // kinds of the kinks lying exactly at t = 0
  // Whether the sources of those kinks rise (up) or fall (down) as t grows: a reversed box
  // makes deform_roi_pool's x fall when its offset rises, so "the right side" of the
  // coordinate is then t < 0.
  bool at_up = false, at_down = false;
  int at_sources = 0;         // how many sources have a kink at t = 0 (several: a compound kink)
  bool on_kink() const { return !at.empty(); }
  double clearance() const { return ahead < behind ? ahead : behind; }
  void add(double t);         // a kink at signed t != 0
};

// The per-op knowledge the checks need. Each member is given a validated case.
struct OpKinks {
  static constexpr const char* kLayer = "gradcheck kink finder";
  // True when the forward is affine in `input` for this case: then it has no kinks in that
  // input at all and the adjoint identity <J x, y> = <x, J^T y> applies.
  std::function<bool(const Case&, const std::string& input)> affine;
  // Calls visit once per kink source of `input` (none for an affine input).
  std::function<void(const Case&, const std::string& input, const KinkVisitor& visit)> sources;
  // Optional: the degree of the forward's pieces in one element of `input` (2 when absent:
  // every bilinear op). Central differences of a piece of degree <= 2 are exact, so the step
  // can be large (base_step); a cubic piece (grid_sample's bicubic) gets a smaller step.
  std::function<int(const Case&, const std::string& input)> piece_degree;
  // Optional, with piece_degree: the width of one piece in `input`'s own units, when it is not
  // about 1 (grid_sample's grid: a pixel is 2/S of the normalised coordinate). A cubic piece's
  // step is 2^-16 of it: the central difference is off by h^2/6 of the third derivative, which
  // grows as the cube of 1/width.
  std::function<double(const Case&, const std::string& input)> piece_width;
  // Optional: a bound on the magnitude of the terms that one output element sums. Rounding in
  // the forward is relative to them, not to the sum, which can be far smaller (bicubic weights
  // of both signs, attention weights of both signs); the finite-difference noise allowances
  // use it. Absent: the output element's own magnitude.
  std::function<double(const Case&)> term_scale;
};

// The degree of `op`'s pieces in one element of `input` on case c (OpKinks::piece_degree).
int piece_degree(const Case& c, const std::string& input);
// The width of one piece (OpKinks::piece_width), or 0 when the op does not say.
double piece_width(const Case& c, const std::string& input);
// The magnitude of the terms an output element sums (OpKinks::term_scale), or 0 when the op
// does not say.
double term_scale(const Case& c);

// Each op registers its finder next to its own kink code (gradcheck/kinks_<op>.cpp).
using OpKinksRegistrar = OpTraits<OpKinks>::Registrar;

// The finder of `op`; an op without one is a MissingTrait error naming it (never a finder
// that silently knows no kinks).
const OpKinks& op_kinks(const std::string& op);
bool has_kink_finder(const std::string& op);

// Kinks met along the dense direction u (shape of the input).
KinkReach reach_along(const Case& c, const std::string& input, const Tensor& u);
// Kinks met along each basis direction e_i, for every element i of the input at once.
std::vector<KinkReach> reach_each(const Case& c, const std::string& input);

// Adds to r what one source meets when its value moves at `rate` per unit t.
void add_source_reach(const KinkSource& s, double rate, KinkReach& r);

}  // namespace oplab::gradcheck
