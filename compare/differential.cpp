#include "compare/differential.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <tuple>
#include <utility>

#include "compare/float_compare.h"

namespace oplab::compare {

namespace {

// Each element's double rounding bound, keyed "outputs.NAME" / "grads.NAME".
using Bounds = std::map<std::string, Tensor>;

// Both sides sum the same terms w_k x_k in double, in their own order and with their own
// weights (1/3 rounded, or a sum divided once): each is within about gamma_n Σ |w_k x_k| of
// the exact value, and a sampling coordinate formed another way moves it by u C Σ |w_k x_k|
// more, so |e - r| <= 2 u (n + 2C) A_i, A_i = Σ |w_k x_k| (u = 2^-53, n terms, coordinates up
// to C pixels). The bound of SPEC §9 with 8 times that u (n + 2C) leaves room for the weights'
// own roundings; a wrong tap or weight is off by a whole term, while the bound is about
// 1e-15 (n + 2C) of the terms.
constexpr double kDoubleU = 0x1p-53;

std::optional<Bounds> rounding_bounds(Backend& ref, const Case& c, const Result& want, const Evaluate& eval) {
  try {
    return element_bounds(ref, c, want, kDoubleU, kDefaultBoundMultiple, eval);
  } catch (const std::exception&) {  // no magnitude for this case: the relative rule alone
    return std::nullopt;
  }
}

double scaled_error(const std::string& what, const Tensor& want, const Tensor& got, const Tolerance& tol,
                    const Tensor* bound, std::string* detail) {
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
      // Within the rounding of its terms (where the tensor cancels, max|r| is noise too): an
      // agreement, scored |e - r| / B_i of rtol.
      if (err > tol.rtol && bound && std::isfinite(bound->data[i]) && bound->data[i] > 0)
        err = std::min(err, tol.rtol * std::fabs(e - r) / bound->data[i]);
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

// Compares the outputs (forward) or the gradients (backward) of two results; `bounds`, when
// given, holds each element's rounding bound.
double compare_part(const std::map<std::string, Tensor>& want, const std::map<std::string, Tensor>& got,
                    const char* kind, const Tolerance& tol, const Bounds* bounds, std::string* detail) {
  double worst = 0;
  for (const auto& [name, t] : want) {
    auto it = got.find(name);
    if (it == got.end()) {
      if (detail->empty()) *detail = std::string(kind) + " " + name + " missing";
      worst = INFINITY;
      continue;
    }
    const std::string key = std::string(kind) + "." + name;
    const Tensor* bound = nullptr;
    if (bounds && bounds->count(key) && bounds->at(key).shape == t.shape) bound = &bounds->at(key);
    worst = std::max(worst, scaled_error(key, t, it->second, tol, bound, detail));
  }
  for (const auto& [name, t] : got)
    if (!want.count(name)) {
      if (detail->empty()) *detail = std::string(kind) + " " + name + " not expected";
      worst = INFINITY;
    }
  return worst;
}

}  // namespace

double tensor_error(const std::string& what, const Tensor& want, const Tensor& got, const Tolerance& tol,
                    std::string* detail) {
  return scaled_error(what, want, got, tol, nullptr, detail);
}

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
    o.ref_failed = true;
    o.detail = ref.name() + ": " + e.what();
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
  double fwd = compare_part(want.outputs, got.outputs, "outputs", tol, nullptr, &fwd_detail);
  double bwd = compare_part(want.grads, got.grads, "grads", tol, nullptr, &bwd_detail);
  // Failing elements may be terms that cancel: judged again with their rounding bounds (the
  // reference on the magnitude case, evaluated only here).
  if (std::max(fwd, bwd) > tol.rtol)
    if (const auto bounds = rounding_bounds(ref, c, want, eval)) {
      fwd_detail.clear();
      bwd_detail.clear();
      fwd = compare_part(want.outputs, got.outputs, "outputs", tol, &*bounds, &fwd_detail);
      bwd = compare_part(want.grads, got.grads, "grads", tol, &*bounds, &bwd_detail);
    }
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
      auto part_ok = [&](const Bounds* ab) {
        return std::make_pair(fwd <= tol.rtol || compare_part(alt.outputs, got.outputs, "outputs", tol, ab, &unused) <= tol.rtol,
                              bwd <= tol.rtol || compare_part(alt.grads, got.grads, "grads", tol, ab, &unused) <= tol.rtol);
      };
      auto [fwd_ok, bwd_ok] = part_ok(nullptr);
      if (!(fwd_ok && bwd_ok))  // the equivalent's terms may cancel as well
        if (const auto ab = rounding_bounds(ref, equivalent, alt, eval)) std::tie(fwd_ok, bwd_ok) = part_ok(&*ab);
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
