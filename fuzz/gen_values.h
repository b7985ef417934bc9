#pragma once
// Building blocks shared by the per-op generators. Call them inside rc::gen::exec.
//
// Every choice here shrinks, towards the first option listed (so list the simplest first):
// rc::gen::element and rc::gen::weightedElement never shrink, which would leave a minimal
// counterexample with far-outside boxes and odd scales that have nothing to do with the bug.
#include <initializer_list>
#include <utility>
#include <vector>

#include <rapidcheck.h>

#include "core/case.h"
#include "core/tensor.h"

namespace oplab::fuzz {

// An index into `weights` drawn in proportion to them, not scaled by the size (the choice of
// a kind of edge should not depend on it), shrinking towards 0 with RapidCheck's
// shrink::towards.
rc::Gen<size_t> weighted_index(std::vector<int> weights);

template <class T>
T pick_one(std::initializer_list<std::pair<int, T>> weighted) {
  std::vector<int> w;
  std::vector<T> v;
  for (const auto& [weight, value] : weighted) w.push_back(weight), v.push_back(value);
  return v[*weighted_index(w)];
}

template <class T>
T pick_of(const std::vector<T>& options) {
  return options[*weighted_index(std::vector<int>(options.size(), 1))];
}

// True while sample_usual_cases (generators.h) draws: sometimes_redrawn keeps every usual case.
bool usual_cases_only();
class UsualCasesOnly {
 public:
  UsualCasesOnly();
  ~UsualCasesOnly();

 private:
  bool before_;
};

// The cases of an op drawn by `draw(0)`, and now and then, as the last pick of a case (so that
// every other case is the one the same seed always drew, and shrinking tries the usual case
// first), one redrawn afresh by `draw(v)` for a variant v = 1, 2, ... chosen by `weights`
// (weights[0] for keeping the usual case). The variants reach what the usual small sizes never
// do: the fast kernels' paths for wide images, many channels, sparse grids, closed forms
// (Backend::kernel_paths).
// A variant's sizes are drawn with pick_one from options whose first ones have weight 0: never
// drawn, they are where shrinking goes, so that a failure met on a wide case shrinks to a small
// one as every other does (a one- or two-pixel image), e.g. pick_one({{0, 1}, {0, 2}, {1, 16}}).
template <class Draw>
rc::Gen<Case> sometimes_redrawn(std::vector<int> weights, Draw draw) {
  return rc::gen::exec([weights, draw] {
    Case c = draw(0);
    const size_t v = *weighted_index(weights);
    return v == 0 || usual_cases_only() ? c : draw(int(v));
  });
}

// A feature-map value: exactly 0, small multiples of 1/4 (exact in binary; they make ties for
// the max modes), or smooth reals in (-2, 2). Shrinks to 0, then to 1/4.
double pick_value();
// A tensor of `shape` filled with pick_value(); sometimes one value everywhere (ties for max).
Tensor pick_tensor(const Shape& shape);
// Sets one element of `t` (none when empty) to NaN, +Inf or -Inf in about one call in eight,
// as one pick of its own (a nested exec). gen_case applies it to each op's feature map
// (OpFuzz::feature_map) as the case's last pick: docs/semantics.md, "Non-finite values".
void sometimes_one_non_finite(Tensor& t);
// A real in [-mag, mag], shrinking to 0.
double pick_real(double mag);
// One of `edges` (exact), possibly nudged by a hair (1e-9) either way.
double pick_edge(const std::vector<double>& edges);
// A dimension in [lo, hi], shrinking to lo.
int64_t pick_dim(int64_t lo, int64_t hi);
// A spatial extent: mostly in [lo, hi], sometimes 1 or an odd prime (5, 7, 11, 13), whose
// divisions by bin counts and scales are never exact. Shrinks to lo.
int64_t pick_extent(int64_t lo, int64_t hi);
// A coordinate along an axis of length `len` in feature-map units, edge-aimed:
// exactly -1, 0, len-1, len (± a hair), lattice points (quarters), far outside, or smooth.
double pick_coord(int64_t len);

}  // namespace oplab::fuzz
