// Agreement of two results that sum the same terms in different orders (a property's two sides:
// a relabelled case, or an identity's other operator). A sum whose terms cancel keeps a rounding
// residue that follows the order, so the relative rule (to |r| + max |r|) has nothing to measure
// it against: an element failing that rule still agrees within |e - r| <= 2 B_i, B_i the
// per-element bound of the comparison layer (compare/float_compare.h, SPEC §9 in docs/spec.md)
// with the subject's unit roundoff and A from the oracle on the magnitude case: once for the
// rounding of each side. A wrong kernel is off by whole terms, far past 2 B_i.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "compare/differential.h"
#include "core/case.h"
#include "fuzz/properties.h"

namespace oplab::fuzz {

class RoundingRescue {
 public:
  // `c`: the case whose bounds apply (the one the subject evaluated for `have` below);
  // `subject_result`: the subject's result on it (names and shapes of the tensors).
  RoundingRescue(CheckContext& ctx, const Case& c, const Result& subject_result)
      : ctx_(ctx), case_(c), result_(subject_result) {}

  // True when every element of `have` agrees with `want`: by the relative rule, or within
  // 2 B_i of the tensor `key` ("outputs.NAME" / "grads.NAME"). Non-finite elements must match
  // exactly (NaN with NaN). The bounds are computed on first need; none (false) where the
  // oracle cannot evaluate the magnitude case.
  bool agrees(const std::string& key, const Tensor& want, const Tensor& have, const Tolerance& tol);

 private:
  CheckContext& ctx_;
  const Case& case_;
  const Result& result_;
  std::optional<std::map<std::string, Tensor>> bounds_;
  bool tried_ = false;
};

}  // namespace oplab::fuzz
