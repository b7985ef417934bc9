#include "core/op_desc.h"

#include <algorithm>

#include "core/echo.h"

namespace oplab {

const std::vector<OpDesc>& all_ops() {
  static const std::vector<OpDesc> ops = [] {
    std::vector<OpDesc> v;
    for (const auto& name : OpTraits<OpDesc>::ops()) v.push_back(OpTraits<OpDesc>::of(name));
    std::stable_sort(v.begin(), v.end(), [](const OpDesc& a, const OpDesc& b) { return a.order < b.order; });
    return v;
  }();
  return ops;
}

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  for (const auto& d : all_ops()) v.push_back(d.name);
  return v;
}

const OpDesc& op_desc(const std::string& name) {
  for (const auto& d : all_ops())
    if (d.name == name) return d;
  std::string known;
  for (const auto& d : all_ops()) known += (known.empty() ? "" : ", ") + d.name;
  // A hostile name may be 10 MB long, or hold a newline: echo() caps it (core/echo.h).
  throw InvalidCase(echo(name) + ": unknown op (known: " + known + ")");
}

bool is_coordinate_input(const std::string& op, const std::string& input) {
  for (const auto& in : op_desc(op).inputs)
    if (in.name == input) return in.coordinate;
  return false;
}

std::vector<std::string> grad_inputs(const Case& c) {
  std::vector<std::string> names;
  for (const auto& in : op_desc(c.op).inputs)
    if (in.differentiable && c.has(in.name)) names.push_back(in.name);
  return names;
}

}  // namespace oplab
