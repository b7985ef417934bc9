#include "compare/differential.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace oplab::compare {

double tensor_error(const std::string& what, const Tensor& want, const Tensor& got, const Tolerance& tol,
                    std::string* detail) {
  if (want.shape != got.shape) {
    *detail = what + ": shape " + shape_str(got.shape) + " != " + shape_str(want.shape);
    return INFINITY;
  }
  double scale = 0;
  for (double r : want.data)
    if (std::isfinite(r)) scale = std::max(scale, std::fabs(r));
  double worst = 0;
  for (size_t i = 0; i < want.data.size(); ++i) {
    const double r = want.data[i], e = got.data[i];
    double err;
    if (!std::isfinite(r) || !std::isfinite(e)) {
      const bool same = (std::isnan(r) && std::isnan(e)) || r == e;
      err = same ? 0 : INFINITY;
    } else {
      err = std::fabs(e - r) / (std::fabs(r) + tol.floor_scale * scale + 1e-300);
    }
    if (err > tol.rtol && detail->empty()) {
      std::ostringstream os;
      os.precision(17);
      os << what << "[" << i << "]: " << e << " vs ref " << r;
      *detail = os.str();
    }
    worst = std::max(worst, err);
  }
  return worst;
}

namespace {

// Compares the outputs (forward) or the gradients (backward) of two results.
double compare_part(const std::map<std::string, Tensor>& want, const std::map<std::string, Tensor>& got,
                    const char* kind, const Tolerance& tol, std::string* detail) {
  double worst = 0;
  for (const auto& [name, t] : want) {
    auto it = got.find(name);
    if (it == got.end()) {
      if (detail->empty()) *detail = std::string(kind) + " " + name + " missing";
      worst = INFINITY;
      continue;
    }
    worst = std::max(worst, tensor_error(std::string(kind) + "." + name, t, it->second, tol, detail));
  }
  for (const auto& [name, t] : got)
    if (!want.count(name)) {
      if (detail->empty()) *detail = std::string(kind) + " " + name + " not expected";
      worst = INFINITY;
    }
  return worst;
}

}  // namespace

Equivalent divergence_equivalent(const Case& c, const std::vector<Divergence>& divergences) {
  Equivalent eq{c, {}};
  for (const auto& d : divergences)
    if (d.peer_equivalent)
      if (auto e = d.peer_equivalent(eq.c)) {
        eq.c = *e;
        eq.names += (eq.names.empty() ? "" : "+") + d.name;
      }
  return eq;
}

Outcome compare_on_case(Backend& ref, Backend& other, const Case& c, const Tolerance& tol,
                        const std::vector<Divergence>& divergences) {
  return compare_on_case(ref, other, c, tol, divergences, [](Backend& b, const Case& x) { return evaluate(b, x); });
}

Outcome compare_on_case(Backend& ref, Backend& other, const Case& c, const Tolerance& tol,
                        const std::vector<Divergence>& divergences, const Evaluate& eval) {
  Outcome o;
  Result want, got;
  try {
    want = eval(ref, c);
  } catch (const std::exception& e) {
    o.verdict = Verdict::Error;
    o.detail = std::string("ref: ") + e.what();
    return o;
  }
  try {
    got = eval(other, c);
  } catch (const Unsupported& e) {
    o.verdict = Verdict::Unsupported;
    o.detail = e.what();
    return o;
  } catch (const std::exception& e) {
    o.verdict = Verdict::Error;
    o.detail = e.what();
    for (const auto& d : divergences)
      if (d.peer_raises && d.peer_raises(c)) {
        o.verdict = Verdict::NamedDivergence;
        o.divergence = d.name;
      }
    return o;
  }
  std::string fwd_detail, bwd_detail;
  const double fwd = compare_part(want.outputs, got.outputs, "outputs", tol, &fwd_detail);
  const double bwd = compare_part(want.grads, got.grads, "grads", tol, &bwd_detail);
  o.max_rel = std::max(fwd, bwd);
  o.detail = fwd_detail.empty() ? bwd_detail : fwd_detail;
  if (o.max_rel <= tol.rtol) return o;

  // Try the known divergences: apply every one that affects this case, then ask whether the
  // reference on that equivalent case reproduces the other backend. Forward and backward are
  // judged apart: a peer may take a shortcut in one direction only.
  const Equivalent eq = divergence_equivalent(c, divergences);
  const Case& equivalent = eq.c;
  const std::string& names = eq.names;
  if (!names.empty()) {
    try {
      const Result alt = eval(ref, equivalent);
      std::string unused;
      const bool fwd_ok = fwd <= tol.rtol || compare_part(alt.outputs, got.outputs, "outputs", tol, &unused) <= tol.rtol;
      const bool bwd_ok = bwd <= tol.rtol || compare_part(alt.grads, got.grads, "grads", tol, &unused) <= tol.rtol;
      if (fwd_ok && bwd_ok) {
        o.verdict = Verdict::NamedDivergence;
        o.divergence = names + (fwd > tol.rtol && bwd > tol.rtol ? "" : fwd > tol.rtol ? " (forward only)" : " (backward only)");
        return o;
      }
    } catch (const std::exception&) {
    }
  }
  o.verdict = Verdict::Disagree;
  return o;
}

}  // namespace oplab::compare
