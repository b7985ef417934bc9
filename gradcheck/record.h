#pragma once
// One record per check, and the summaries the CLI prints and writes.
//
// Methods (the `method` field):
//   fd-projection  v^T J u by central differences of the forward vs <backward(v), u>
//   fd-jacobian    every column of J by central differences vs every row from backward(e_j)
//   adjoint        <J x, y> = <x, J^T y> for an input the forward is affine in
//   one-sided      at a kink: the one-sided derivatives, and which side the backend's gradient is
//   vs-ref         the backend's gradient against the reference's, per element, within a bound
//   shapes         gradient entries: exactly the differentiable inputs supplied, same shapes
//   zero-grad      grad_output = 0 gives gradients that are exactly 0
//   optional-absent  dropping an optional input (mask, bias, offset) drops its gradient entry
//   support        the backend declined the case (verdict "unsupported")
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "compare/verdict.h"
#include "core/case.h"

namespace oplab::gradcheck {

// Verdicts are the comparison layer's (compare/verdict.h): agree, DISAGREE, ERROR (the check
// itself threw), skipped (no evidence either way; the reason is in detail), unsupported (the
// backend declined the case), named-divergence, boundary-flip (a float32 decision near its
// boundary, SPEC §9).
using compare::Verdict;

struct CheckRecord {
  std::string op, backend, input, method;
  int64_t case_index = -1;
  Verdict verdict = Verdict::Agree;
  double error = 0;      // the method's normalised error (see the .cpp of each method)
  double tolerance = 0;  // error <= tolerance passes
  int64_t elements = 0;  // columns, directions or elements compared
  // Kink handling: points (projection) or elements (Jacobian columns) moved off a kink, steps
  // shrunk to stay inside one piece, and points or elements that could not be cleared.
  int64_t moved = 0, shrunk = 0, skipped = 0;
  std::string detail;
  json extra = json::object();  // method-specific: one-sided side counts, step sizes, ...
  bool failed() const { return compare::is_failure(verdict); }
};

json record_to_json(const CheckRecord& r);

// Aggregate of the records of one (op, backend, input, method).
struct SummaryRow {
  std::string op, backend, input, method;
  std::map<std::string, int64_t> verdicts;  // by verdict_name
  int64_t checks = 0, elements = 0, moved = 0, shrunk = 0, skipped = 0;
  double worst = 0;        // largest error among evidence (agree or DISAGREE)
  double tolerance = 0;    // the largest tolerance used
  int64_t count(Verdict v) const {
    auto it = verdicts.find(compare::verdict_name(v));
    return it == verdicts.end() ? 0 : it->second;
  }
  int64_t failures() const { return count(Verdict::Disagree) + count(Verdict::Error); }
};
std::vector<SummaryRow> summarize(const std::vector<CheckRecord>& records);

// Side counts of one-sided records per (op, backend, input, kink kind).
struct SideRow {
  std::string op, backend, input, kink;
  std::map<std::string, int64_t> sides;  // right, left, both, neither
  int64_t jumps = 0;                     // elements where the forward jumps at the kink
};
std::vector<SideRow> summarize_sides(const std::vector<CheckRecord>& records);

json summary_to_json(const std::vector<SummaryRow>& rows);
json sides_to_json(const std::vector<SideRow>& rows);
void print_summary(std::ostream& os, const std::vector<SummaryRow>& rows);
void print_sides(std::ostream& os, const std::vector<SideRow>& rows);

}  // namespace oplab::gradcheck
