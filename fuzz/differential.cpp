#include "fuzz/differential.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace oplab::fuzz {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Agree: return "agree";
    case Verdict::NamedDivergence: return "named-divergence";
    case Verdict::Disagree: return "DISAGREE";
    case Verdict::Unsupported: return "unsupported";
    case Verdict::Error: return "ERROR";
  }
  return "?";
}

namespace {

// Worst scaled error of `got` against `want`; empty detail when within tolerance.
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

// Compares every output and gradient of the reference result with the other's.
double compare_results(const Result& want, const Result& got, const Tolerance& tol, std::string* detail) {
  double worst = 0;
  auto each = [&](const char* kind, const std::map<std::string, Tensor>& w, const std::map<std::string, Tensor>& g) {
    for (const auto& [name, t] : w) {
      auto it = g.find(name);
      if (it == g.end()) {
        if (detail->empty()) *detail = std::string(kind) + " " + name + " missing";
        worst = INFINITY;
        continue;
      }
      worst = std::max(worst, tensor_error(std::string(kind) + "." + name, t, it->second, tol, detail));
    }
    for (const auto& [name, t] : g)
      if (!w.count(name)) {
        if (detail->empty()) *detail = std::string(kind) + " " + name + " not expected";
        worst = INFINITY;
      }
  };
  each("outputs", want.outputs, got.outputs);
  each("grads", want.grads, got.grads);
  return worst;
}

}  // namespace

Outcome compare_on_case(Backend& ref, Backend& other, const Case& c, const Tolerance& tol,
                        const std::vector<Divergence>& divergences) {
  Outcome o;
  Result want, got;
  try {
    want = evaluate(ref, c);
  } catch (const std::exception& e) {
    o.verdict = Verdict::Error;
    o.detail = std::string("ref: ") + e.what();
    return o;
  }
  try {
    got = evaluate(other, c);
  } catch (const Unsupported& e) {
    o.verdict = Verdict::Unsupported;
    o.detail = e.what();
    return o;
  } catch (const std::exception& e) {
    o.verdict = Verdict::Error;
    o.detail = e.what();
    return o;
  }
  o.max_rel = compare_results(want, got, tol, &o.detail);
  if (o.max_rel <= tol.rtol) return o;

  // Try the known divergences: apply every one that affects this case, then ask whether
  // the reference on that equivalent case reproduces the other backend exactly enough.
  Case equivalent = c;
  std::string names;
  for (const auto& d : divergences)
    if (auto e = d.peer_equivalent(equivalent)) {
      equivalent = *e;
      names += (names.empty() ? "" : "+") + d.name;
    }
  if (!names.empty()) {
    std::string detail;
    try {
      const Result alt = evaluate(ref, equivalent);
      if (compare_results(alt, got, tol, &detail) <= tol.rtol) {
        o.verdict = Verdict::NamedDivergence;
        o.divergence = names;
        return o;
      }
    } catch (const std::exception&) {
    }
  }
  o.verdict = Verdict::Disagree;
  return o;
}

}  // namespace oplab::fuzz
