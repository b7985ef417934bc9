#pragma once
// Differential comparison of one backend against another on one case: outputs and every
// gradient, with a stated tolerance, and disagreements explained by named divergences.
#include <functional>
#include <string>
#include <vector>

#include "compare/verdict.h"
#include "core/backend.h"
#include "peer/divergences.h"

namespace oplab::compare {

// |e - r| <= rtol * (|r| + floor_scale * max|r| of the tensor). The floor makes elements that
// cancel to near zero (sums of terms of either sign) compare against the tensor's magnitude.
// compare_on_case also passes an element within its double rounding bound (SPEC §9's B_i with
// u = 2^-53, compare/float_compare.h): where the whole tensor cancels (an area bin of
// [-0.5, 0.75, -0.25] is 0 summed first, 2^-56 as Σ x_k fl(1/3)) max|r| is itself noise, and
// only the terms' Σ |w_k x_k| says what rounding may do.
struct Tolerance {
  double rtol = 1e-10;
  double floor_scale = 1.0;
  // Adjoint identity <J x, y> = <x, J^T y>, relative to the sum of the magnitudes of the
  // products involved (fuzz/prop_adjoint.cpp): rounding only, so far tighter than rtol.
  double adjoint = 1e-12;
};


struct Outcome {
  Verdict verdict = Verdict::Agree;
  std::string divergence;  // name(s) when NamedDivergence
  std::string detail;      // what disagreed first (tensor, index, values) or the error text
  double max_rel = 0;      // worst |e - r| / (|r| + floor) over all tensors
  bool ref_failed = false; // the Error is the first backend's (compare_on_case's `ref`)
};

// The case on which the reference computes what a backend with these divergences computes:
// every divergence that applies, each applied to the previous one's equivalent (several may
// touch one case). names: theirs, joined by "+"; empty when none applies.
struct Equivalent {
  Case c;
  std::string names;
};
Equivalent divergence_equivalent(const Case& c, const std::vector<Divergence>& divergences);

// Runs `ref` and `other` on `c` and compares. `divergences` lists what `other` is known
// to do differently; each is tried (together) when the plain comparison fails.
Outcome compare_on_case(Backend& ref, Backend& other, const Case& c, const Tolerance& tol,
                        const std::vector<Divergence>& divergences);

// The same, with every evaluation done by `eval` instead of core's evaluate(): the fuzz
// campaign passes its crash-isolating, memoizing evaluator (fuzz/isolate.h).
using Evaluate = std::function<Result(Backend&, const Case&)>;
Outcome compare_on_case(Backend& ref, Backend& other, const Case& c, const Tolerance& tol,
                        const std::vector<Divergence>& divergences, const Evaluate& eval);

// Worst scaled error |e - r| / (|r| + floor_scale * max|r|) of `got` against `want` (NaN and
// Inf must sit at the same places); sets *detail to the first element beyond tol.rtol (named
// `what`), if *detail is still empty.
double tensor_error(const std::string& what, const Tensor& want, const Tensor& got, const Tolerance& tol,
                    std::string* detail);

}  // namespace oplab::compare
