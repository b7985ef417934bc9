#include <rapidcheck/Random.h>

#include "core/op_desc.h"
#include "fuzz/gen_values.h"
#include "fuzz/generators.h"
#include "fuzz/op_fuzz.h"

namespace oplab::fuzz {

rc::Gen<Case> gen_case(const std::string& op, bool non_finite_features) {
  op_desc(op);  // an unknown op is a one-line InvalidCase, not a missing trait
  const rc::Gen<Case> g = op_fuzz(op).gen();
  const std::string feature_map = non_finite_features ? op_fuzz(op).feature_map : std::string();
  // Every case carries a grad_output of the output's shape, so backward runs too.
  return rc::gen::exec([g, feature_map] {
    Case c = *g;
    if (!c.grad_output) c.grad_output = pick_tensor(op_desc(c.op).validate(c));
    // Last, so that every case keeps the picks it always drew: now and then one NaN or +-Inf
    // in the feature map (docs/semantics.md, "Non-finite values").
    if (!feature_map.empty() && c.has(feature_map)) sometimes_one_non_finite(c.inputs[feature_map]);
    return c;
  });
}

std::vector<Case> sample_cases(const std::string& op, int n, uint64_t seed) {
  const rc::Gen<Case> g = gen_case(op, false);
  std::vector<Case> cases;
  rc::Random random(seed);
  for (int i = 0; i < n; ++i) {
    rc::Random r = random.split();
    const int size = n > 1 ? (i * 100) / (n - 1) : 0;
    cases.push_back(g(r, size).value());
  }
  return cases;
}

std::vector<Case> sample_usual_cases(const std::string& op, int n, uint64_t seed) {
  const UsualCasesOnly usual;
  return sample_cases(op, n, seed);
}

}  // namespace oplab::fuzz
