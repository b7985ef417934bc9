#include <rapidcheck/Random.h>

#include "core/op_desc.h"
#include "fuzz/gen_values.h"
#include "fuzz/generators.h"

namespace oplab::fuzz {

rc::Gen<Case> gen_case(const std::string& op) {
  rc::Gen<Case> g = op == "deform_conv2d"   ? gen_deform_conv2d()
                    : op == "roi_pool"      ? gen_roi_pool()
                    : op == "roi_align"     ? gen_roi_align()
                    : op == "deform_roi_pool" ? gen_deform_roi_pool()
                    : op == "interpolate"   ? gen_interpolate()
                                            : throw InvalidCase(op + ": no case generator");
  // Every case carries a grad_output of the output's shape, so backward runs too.
  return rc::gen::exec([g] {
    Case c = *g;
    if (!c.grad_output) c.grad_output = pick_tensor(op_desc(c.op).validate(c));
    return c;
  });
}

std::vector<Case> sample_cases(const std::string& op, int n, uint64_t seed) {
  const rc::Gen<Case> g = gen_case(op);
  std::vector<Case> cases;
  rc::Random random(seed);
  for (int i = 0; i < n; ++i) {
    rc::Random r = random.split();
    const int size = n > 1 ? (i * 100) / (n - 1) : 0;
    cases.push_back(g(r, size).value());
  }
  return cases;
}

}  // namespace oplab::fuzz
