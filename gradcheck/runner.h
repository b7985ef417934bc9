#pragma once
// Every gradient check of one backend on a set of cases of one op: the entry point of the CLI
// (`oplab gradcheck`) and of the test suites. Generic over ops and backends: it reads the
// differentiable inputs from the op description and the kinks from the per-op finders.
//
// Per case: shapes, zero-grad, optional-absent, vs-ref (backends other than ref); then per
// differentiable input: `projections` fd-projection checks, fd-jacobian when the input and
// the output are small, adjoint when the forward is affine in the input, and otherwise the
// one-sided derivatives at the kinks the case has. For an input with kinks, a kink-aimed
// variant of the case (aim.h) gets fd-projection, one-sided and vs-ref as well: those records
// carry extra.aimed = true.
#include <vector>

#include "core/backend.h"
#include "gradcheck/record.h"
#include "peer/divergences.h"

namespace oplab::gradcheck {

struct Options {
  uint64_t seed = 1;
  int projections = 2;          // random v^T J u per (case, input)
  int64_t jacobian_max = 96;    // full Jacobian when the input and the output both have at most this many elements
  bool one_sided = true;        // examine the elements that sit on a kink
  int one_sided_max = 12;       // kink elements examined per (case, input)
  int aim = 3;                  // elements moved onto a kink in the kink-aimed variant (0: none)
};

// `cases` are valid cases of one op, each with a grad_output; `first_index` numbers them in
// the records. `known` are the backend's named divergences (empty for most backends).
std::vector<CheckRecord> check_cases(Backend& backend, Backend& ref, const std::vector<Case>& cases,
                                     const Options& opt, const std::vector<Divergence>& known = {},
                                     int64_t first_index = 0);

// The `n` cases of `op` that check_op checks: drawn deterministically from the fuzz generator
// (fuzz::sample_cases) with `seed`.
std::vector<Case> gradcheck_cases(const std::string& op, int n, uint64_t seed);

// The fixed-seed sample of gradcheck_cases(op, n, seed), checked.
std::vector<CheckRecord> check_op(Backend& backend, Backend& ref, const std::string& op, int n_cases,
                                  const Options& opt, const std::vector<Divergence>& known = {});

}  // namespace oplab::gradcheck
