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

#include "core/case.h"

namespace oplab::gradcheck {

namespace verdict {
inline const char* const kPass = "pass";
inline const char* const kFail = "FAIL";
inline const char* const kSkipped = "skipped";          // not evidence either way (the reason is in detail)
inline const char* const kUnsupported = "unsupported";  // the backend declined the case
inline const char* const kDivergence = "named-divergence";
inline const char* const kExplained = "explained";      // float32 decision near its boundary (SPEC §9)
}  // namespace verdict

struct CheckRecord {
  std::string op, backend, input, method;
  int64_t case_index = -1;
  std::string verdict = verdict::kPass;
  double error = 0;      // the method's normalised error (see the .cpp of each method)
  double tolerance = 0;  // error <= tolerance passes
  int64_t elements = 0;  // columns, directions or elements compared
  // Kink handling: points (projection) or elements (Jacobian columns) moved off a kink, steps
  // shrunk to stay inside one piece, and points or elements that could not be cleared.
  int64_t moved = 0, shrunk = 0, skipped = 0;
  std::string detail;
  json extra = json::object();  // method-specific: one-sided side counts, step sizes, ...
  bool failed() const { return verdict == verdict::kFail; }
};

json record_to_json(const CheckRecord& r);

// Aggregate of the records of one (op, backend, input, method).
struct SummaryRow {
  std::string op, backend, input, method;
  std::map<std::string, int64_t> verdicts;
  int64_t checks = 0, elements = 0, moved = 0, shrunk = 0, skipped = 0;
  double worst = 0;        // largest error among evidence (pass or FAIL)
  double tolerance = 0;    // the largest tolerance used
  int64_t count(const std::string& v) const {
    auto it = verdicts.find(v);
    return it == verdicts.end() ? 0 : it->second;
  }
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
