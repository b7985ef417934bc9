#include "gradcheck/eval.h"

#include <cmath>

#include "compare/float_compare.h"

namespace oplab::gradcheck {

Tensor forward(Backend& b, const Case& c) {
  Case f = c;
  f.grad_output.reset();
  Result r = evaluate(b, f);
  return std::move(r.outputs.at("output"));
}

Result backward(Backend& b, const Case& c, const Tensor& gout) {
  Case g = c;
  g.grad_output = gout;
  return evaluate(b, g);
}

Case with_input(const Case& c, const std::string& name, Tensor x) {
  Case m = c;
  m.inputs[name] = std::move(x);
  return m;
}

Case without_input(const Case& c, const std::string& name) {
  Case m = c;
  m.inputs.erase(name);
  return m;
}

double dot(const Tensor& a, const Tensor& b) {
  long double s = 0;
  for (size_t i = 0; i < a.data.size(); ++i) s += (long double)a.data[i] * b.data[i];
  return double(s);
}

double norm2(const Tensor& a) { return std::sqrt(dot(a, a)); }

double max_abs(const Tensor& a) {
  double m = 0;
  for (double v : a.data)
    if (std::isfinite(v)) m = std::max(m, std::fabs(v));
  return m;
}

Tensor abs_of(const Tensor& a) {
  Tensor t = a;
  for (double& v : t.data) v = std::fabs(v);
  return t;
}

bool all_finite(const Tensor& t) {
  for (double v : t.data)
    if (!std::isfinite(v)) return false;
  return true;
}

bool all_finite(const Case& c) {
  for (const auto& [name, t] : c.inputs)
    if (!all_finite(t)) return false;
  return !c.grad_output || all_finite(*c.grad_output);
}

Precision precision_of(const Backend& b, const std::string& op) {
  return b.dtype(op) == DType::Float64 ? Precision::F64 : Precision::F32;
}

const char* precision_name(Precision p) { return p == Precision::F32 ? "float32" : "float64"; }

bool boundary_flip(Backend& ref, Backend& b, const Case& c) {
  return compare::compare_float_backend(ref, b, c).verdict == compare::Verdict::BoundaryFlip;
}

}  // namespace oplab::gradcheck
