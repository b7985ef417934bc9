// determinism: the subject evaluated a second time on the same case, in the same process (its
// worker), after another case, gives the same bits: the output and every gradient (a NaN
// against a NaN is the same, whatever its payload). A kernel that reads a stale workspace, keeps
// state from call to call or races gives two answers, though each may agree with the oracle. A
// backend that declares itself nondeterministic (Backend::nondeterministic: float atomics in a
// scatter) has its two answers held to its own bound instead, and the verdict says it was.
// Under --isolation fork one child runs the other case and the second evaluation, so the state
// one call leaves for the next shows there too (CheckContext::eval_again).
#include <cmath>
#include <cstring>

#include "core/op_desc.h"
#include "fuzz/properties.h"

namespace oplab::fuzz {

namespace {

bool any_op(const std::string&) { return true; }

bool same_bits(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// The first element whose bits differ between the two answers, as a failure, or nullopt.
std::optional<std::string> first_difference(const std::string& what, const Tensor& a, const Tensor& b) {
  if (a.shape != b.shape) return what + ": the second evaluation answered another shape";
  for (size_t i = 0; i < a.data.size(); ++i)
    if (!same_bits(a.data[i], b.data[i])) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "[%zu]: %.17g, then %.17g", i, a.data[i], b.data[i]);
      return what + buf;
    }
  return std::nullopt;
}

// The tensors of a result by the names the records use.
std::map<std::string, const Tensor*> tensors(const Result& r) {
  std::map<std::string, const Tensor*> t;
  for (const auto& [name, v] : r.outputs) t["outputs." + name] = &v;
  for (const auto& [name, v] : r.grads) t["grads." + name] = &v;
  return t;
}

// The case with other values in its feature map (the op's first input: input, or value), as
// valid as the case: evaluated between the two evaluations of the case, so that a kernel whose
// answer depends on its previous call sees another one the second time (the case itself twice
// in a row would reach a fixed point: the previous call was the same).
Case another_case(const Case& c) {
  Case other = c;
  Tensor& t = other.inputs.at(op_desc(c.op).inputs.front().name);
  for (double& v : t.data) v = 2 * v + 0.5;
  return other;
}

CheckResult check(CheckContext& ctx) {
  Backend& b = ctx.subject();
  // A backend with no backward of the op is asked its forward, as the differential property
  // asks it (whose kept answer is then the first).
  Case c = ctx.the_case();
  if (c.grad_output && !b.computes_grads(c.op)) c.grad_output.reset();
  CheckResult verdict;
  const auto first = ctx.try_eval(b, c, &verdict);  // kept from the differential property, when it ran
  if (!first) return verdict;
  Result second;
  try {
    second = ctx.eval_again(b, c, another_case(c));
  } catch (const KernelCrash& e) {
    CheckResult r = CheckResult::error(std::string("the second evaluation: ") + e.what());
    r.crashed = true;
    return r;
  } catch (const std::exception& e) {
    return CheckResult::fail(b.name() + " answered the case, then raised on it the second time: " + e.what());
  }
  const auto one = tensors(*first), two = tensors(second);
  const std::optional<std::string> declared = b.nondeterministic(c.op);
  const Tolerance tol = tolerance_for(b, c.op);
  for (const auto& [name, t1] : one) {
    auto it = two.find(name);
    if (it == two.end()) return CheckResult::fail(name + ": absent from the second evaluation");
    if (declared) {
      ctx.expect_close(name + " (two evaluations of a declared nondeterministic backend)", *t1, *it->second, tol, &verdict);
    } else if (auto diff = first_difference(name, *t1, *it->second)) {
      return CheckResult::fail(*diff + ": a second evaluation of the same case gave other bits");
    }
  }
  if (declared && !verdict.failed()) verdict.detail = "declared nondeterministic (" + *declared + "): the two answers within its bound";
  return verdict;
}

}  // namespace

Property determinism_property() {
  Property p{"determinism", "the same case evaluated twice gives the same bits (or, declared nondeterministic, within its bound)",
             false, any_op, check};
  p.holds_for_uint8 = true;
  return p;
}

}  // namespace oplab::fuzz
