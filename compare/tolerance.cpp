#include "compare/tolerance.h"

#include <algorithm>
#include <map>

namespace oplab::compare {

namespace {
std::map<std::string, Tolerance>& registered() {
  static std::map<std::string, Tolerance> table;
  return table;
}
}  // namespace

Tolerance tolerance_for(const Backend& b) {
  auto it = registered().find(b.name());
  if (it != registered().end()) return it->second;
  // float32 kernels (u = 6e-8) in the metamorphic identities, whose two sides see the same
  // coordinates: rounding of sums of up to a few hundred terms, against the terms' size. The
  // differential property judges them by the per-element bound instead (compare/float_compare.h).
  if (b.is_float32()) return Tolerance{1e-4, 1.0, 1e-4};
  return Tolerance{};  // double precision: see the header
}

Tolerance tolerance_between(const Backend& a, const Backend& b) {
  const Tolerance ta = tolerance_for(a), tb = tolerance_for(b);
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
