#pragma once
// Differential comparison of one backend against another on one case: outputs and every
// gradient, with a stated tolerance, and disagreements explained by named divergences.
#include <string>
#include <vector>

#include "core/backend.h"
#include "peer/divergences.h"

namespace oplab::fuzz {

// |e - r| <= rtol * (|r| + floor_scale * max|r| of the tensor). The floor makes elements that
// cancel to near zero (sums of terms of either sign) compare against the tensor's magnitude.
struct Tolerance {
  double rtol = 1e-10;
  double floor_scale = 1.0;
};

enum class Verdict { Agree, NamedDivergence, Disagree, Unsupported, Error };
const char* verdict_name(Verdict v);

struct Outcome {
  Verdict verdict = Verdict::Agree;
  std::string divergence;  // name(s) when NamedDivergence
  std::string detail;      // what disagreed first (tensor, index, values) or the error text
  double max_rel = 0;      // worst |e - r| / (|r| + floor) over all tensors
};

// Runs `ref` and `other` on `c` and compares. `divergences` lists what `other` is known
// to do differently; each is tried (together) when the plain comparison fails.
Outcome compare_on_case(Backend& ref, Backend& other, const Case& c, const Tolerance& tol,
                        const std::vector<Divergence>& divergences);

}  // namespace oplab::fuzz
