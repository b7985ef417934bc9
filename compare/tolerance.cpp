#include "compare/tolerance.h"

#include <algorithm>
#include <map>

namespace oplab::compare {

namespace {
std::map<std::string, Tolerance>& registered() {
  static std::map<std::string, Tolerance> table;
  return table;
}

constexpr double kF32U = 0x1p-24;
}  // namespace

// An identity's two sides see the same coordinates, so they take the same discrete decisions;
// what differs is the rounding of the sums and of the values stored in the dtype. float32
// (accumulating in float32): 1e-4 of the terms, the rounding of sums of a few hundred terms
// (about 1700 u), as the float32 rule always was. A narrower accumulation scales that part by
// its u; the storage of inputs and results in the dtype (each side's inputs are rounded to it
// apart: a*x1 + b*x2 is rounded once, x1 and x2 each once) adds 16 u of the dtype. float16
// accumulating in float32: 1e-4 + 16 * 2^-11 = 7.9e-3; bfloat16: 6.3e-2. Capped at 0.5: past
// that an identity says nothing (the differential property reports such a case as precision
// exhausted).
Tolerance tolerance_for_types(DType dtype, DType accumulation) {
  if (dtype == DType::Float64) return Tolerance{};  // double precision: see the header
  const double acc = 1e-4 * unit_roundoff(accumulation) / kF32U;
  const double store = dtype == DType::Float32 ? 0.0 : 16 * unit_roundoff(dtype);
  const double rtol = std::min(0.5, acc + store);
  return Tolerance{rtol, 1.0, rtol};
}

Tolerance tolerance_for(const Backend& b, const std::string& op) {
  auto it = registered().find(b.name());
  if (it != registered().end()) return it->second;
  return tolerance_for_types(b.dtype(op), b.accumulation(op));
}

Tolerance tolerance_between(const Backend& a, const Backend& b, const std::string& op) {
  const Tolerance ta = tolerance_for(a, op), tb = tolerance_for(b, op);
  Tolerance t;
  t.rtol = std::max(ta.rtol, tb.rtol);
  t.floor_scale = std::max(ta.floor_scale, tb.floor_scale);
  t.adjoint = std::max(ta.adjoint, tb.adjoint);
  return t;
}

void register_tolerance(const std::string& backend_name, const Tolerance& tol) { registered()[backend_name] = tol; }

const std::vector<Divergence>& divergences_for(const Backend& b) {
  return b.divergences();
}

}  // namespace oplab::compare
