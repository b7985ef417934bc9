#include "gradcheck/structure.h"

#include <algorithm>
#include <cmath>

#include "core/op_desc.h"

namespace oplab::gradcheck {

namespace {

// Empty when the entries and shapes are right, else what is wrong.
std::string entry_problems(const Case& c, const Result& got) {
  std::string p;
  auto add = [&](const std::string& s) { p += (p.empty() ? "" : "; ") + s; };
  auto out = got.outputs.find("output");
  const Shape want = validate_case(c);
  if (out == got.outputs.end()) add("no output");
  else if (out->second.shape != want) add("output shape " + shape_str(out->second.shape) + " != " + shape_str(want));
  const std::vector<std::string> names = grad_inputs(c);
  for (const std::string& n : names) {
    auto it = got.grads.find(n);
    if (it == got.grads.end()) add("no gradient for " + n);
    else if (it->second.shape != c.in(n).shape)
      add("gradient of " + n + " has shape " + shape_str(it->second.shape) + ", input " + shape_str(c.in(n).shape));
  }
  for (const auto& [n, t] : got.grads)
    if (std::find(names.begin(), names.end(), n) == names.end()) add("unexpected gradient entry " + n);
  return p;
}

}  // namespace

CheckRecord check_shapes(const CheckContext& ctx, const Case& c, const Result& got) {
  CheckRecord rec = ctx.record(c, "*", "shapes");
  rec.elements = int64_t(got.grads.size());
  rec.detail = entry_problems(c, got);
  if (!rec.detail.empty()) rec.verdict = Verdict::Disagree;
  return rec;
}

CheckRecord check_zero_grad(const CheckContext& ctx, const Case& c) {
  CheckRecord rec = ctx.record(c, "*", "zero-grad");
  if (!all_finite(c)) {
    rec.verdict = Verdict::Skipped;
    rec.detail = "non-finite values: 0 * NaN is NaN";
    return rec;
  }
  const Result r = backward(*ctx.backend, c, Tensor(validate_case(c)));
  for (const auto& [n, t] : r.grads)
    for (size_t i = 0; i < t.data.size(); ++i) {
      ++rec.elements;
      if (t.data[i] != 0.0 && rec.verdict != Verdict::Disagree) {
        rec.verdict = Verdict::Disagree;
        rec.error = std::fabs(t.data[i]);
        rec.detail = n + "[" + std::to_string(i) + "] = " + std::to_string(t.data[i]) + " for grad_output = 0";
      }
    }
  return rec;
}

std::vector<CheckRecord> check_optional_absent(const CheckContext& ctx, const Case& c) {
  std::vector<CheckRecord> out;
  for (const InputSpec& in : op_desc(c.op).inputs) {
    if (in.required || !in.differentiable || !c.has(in.name)) continue;
    CheckRecord rec = ctx.record(c, in.name, "optional-absent");
    const Case without = without_input(c, in.name);
    const Result r = evaluate(*ctx.backend, without);
    rec.elements = int64_t(r.grads.size());
    rec.detail = entry_problems(without, r);
    if (!rec.detail.empty()) rec.verdict = Verdict::Disagree;
    out.push_back(rec);
  }
  return out;
}

}  // namespace oplab::gradcheck
