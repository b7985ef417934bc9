#include "repro/repro_request.h"

#include <cmath>
#include <sstream>

#include "compare/dtype_case.h"
#include "compare/judge.h"
#include "core/case_io.h"

namespace oplab {

namespace {

using Tensors = std::map<std::string, Tensor>;

// A result as the script names its tensors: "output", and "grad_<input>" for each gradient.
Tensors tensors_of(const Result& r) {
  Tensors t;
  for (const auto& [name, v] : r.outputs) t[name] = v;
  for (const auto& [name, v] : r.grads) t["grad_" + name] = v;
  return t;
}

// What a uint8 kernel is held to (SPEC §16): the reference rounded half up, clipped to 0..255.
Tensors as_pixels(Tensors t) {
  for (auto& [name, v] : t)
    for (double& x : v.data)
      if (!std::isnan(x)) x = std::min(255.0, std::max(0.0, std::floor(x + 0.5)));
  return t;
}

// The scripts' distance (peer/repro_python.cpp, peer/onnxruntime_repro.cpp): the largest
// |got - want| over want's tensors; NaN against NaN and equal infinities are equal; NaN
// against a number, a missing tensor or another shape are infinitely far.
double distance(const Tensors& got, const Tensors& want) {
  double d = 0;
  for (const auto& [name, w] : want) {
    auto g = got.find(name);
    if (g == got.end() || g->second.shape != w.shape) return INFINITY;
    for (size_t i = 0; i < w.data.size(); ++i) {
      const double a = g->second.data[i], b = w.data[i];
      if (a == b || (std::isnan(a) && std::isnan(b))) continue;
      const double e = std::fabs(a - b);
      d = std::max(d, std::isnan(e) ? INFINITY : e);
    }
  }
  return d;
}

// `claimed` restricted to spec's tensors; empty when it lacks one or has another shape (the
// equivalent is then no picture of the library's answer on this case).
Tensors matching(const Tensors& claimed, const Tensors& spec) {
  Tensors m;
  for (const auto& [name, s] : spec) {
    auto c = claimed.find(name);
    if (c == claimed.end() || c->second.shape != s.shape) return {};
    m[name] = c->second;
  }
  return m;
}

// The spec's values on the case the backend is sent.
Tensors spec_of(Backend& ref, const Backend& b, const Case& sent) {
  Tensors spec = tensors_of(evaluate(ref, sent));
  return b.dtype(sent.op) == DType::UInt8 ? as_pixels(std::move(spec)) : spec;
}

// Which pass a divergence's judgement concerns (the detail's "(forward only)", "(backward only)").
enum class Scope { Both, Forward, Backward };

// Whether the judge's detail ("a+b (backward only)") names `name`.
bool names_it(const std::string& detail, const std::string& name) {
  std::istringstream names(detail.substr(0, detail.find(" (")));
  for (std::string n; std::getline(names, n, '+');)
    if (n == name) return true;
  return false;
}

// The request's case (as `b` is sent it) and the spec's values on it.
ReproRequest request_on(Backend& ref, const Backend& b, const Case& c, std::string subject, std::string claim,
                        const std::string& command) {
  ReproRequest r;
  r.subject = std::move(subject);
  r.claim = std::move(claim);
  r.command = command;
  r.c = compare::case_for(b, c);
  r.spec = spec_of(ref, b, r.c);
  return r;
}

// The library's answer on the request's case into *got; false (and r.raises set) when it raised.
bool library_answers(Backend& b, ReproRequest& r, Tensors* got) {
  try {
    *got = tensors_of(evaluate(b, r.c));
    return true;
  } catch (const std::exception&) {
    r.raises = true;
    return false;
  }
}

}  // namespace

ReproRequest divergence_repro(Backend& ref, Backend& b, const Divergence& d, const std::string& command) {
  if (d.example.empty()) throw std::runtime_error("repro: the divergence " + d.name + " of " + b.name() + " has no example case");
  const Case example = case_from_json(json::parse(d.example));
  const compare::Judgement j = compare::judge(b, ref, example);
  bool named = j.verdict == compare::Verdict::NamedDivergence && names_it(j.detail, d.name);
  const Scope scope = !named ? Scope::Both
                      : j.detail.find("(forward only)") != std::string::npos  ? Scope::Forward
                      : j.detail.find("(backward only)") != std::string::npos ? Scope::Backward
                                                                              : Scope::Both;
  if (!named)
    throw ReproNotShown("repro: " + b.name() + " no longer shows " + d.name + " on its example: the judge says " +
                        compare::verdict_name(j.verdict) + (j.detail.empty() ? "" : " (" + j.detail + ")"));
  ReproRequest r = request_on(ref, b, example, "divergence " + d.name + " of oplab's " + b.name() + " peer", d.description,
                              command);
  Tensors got;
  if (!library_answers(b, r, &got)) {
    if (!d.peer_raises) throw ReproNotShown("repro: " + b.name() + " raised on " + d.name + "'s example");
    return r;
  }
  if (d.peer_equivalent)
    if (auto eq = d.peer_equivalent(r.c)) {
      Tensors claimed = tensors_of(evaluate(ref, *eq));
      if (b.dtype(r.c.op) == DType::UInt8) claimed = as_pixels(std::move(claimed));
      // A divergence of the forward only (or the backward only) leaves the other pass to the
      // spec: the equivalent case need not reproduce it (ps_roi_pool's backward rounding moves
      // the roi, which the forward does not see).
      for (auto& [name, t] : claimed)
        if (r.spec.count(name) && (name.rfind("grad_", 0) == 0 ? scope == Scope::Forward : scope == Scope::Backward))
          t = r.spec.at(name);
      r.claimed = matching(claimed, r.spec);
    }
  const double d_spec = distance(got, r.spec);
  if (!(d_spec > 0)) throw ReproNotShown("repro: " + b.name() + " gives the spec's values on " + d.name + "'s example");
  const double d_claimed = r.claimed.empty() ? INFINITY : distance(got, r.claimed);
  if (!(d_claimed < d_spec)) r.claimed.clear();  // no closer to the claim than to the spec: shows the difference only
  // Between the two distances (geometrically: they may be many orders apart), or half the
  // difference where there is no claimed answer to match.
  r.threshold = r.claimed.empty() ? d_spec / 2 : std::sqrt(std::max(d_claimed, d_spec * 1e-6) * d_spec);
  if (std::isinf(d_spec)) r.threshold = r.claimed.empty() ? 1.0 : std::max(1.0, 4 * d_claimed);
  return r;
}

ReproRequest failure_repro(Backend& ref, Backend& b, const Case& c, const std::string& id, const std::string& detail,
                           const std::string& command) {
  const compare::Judgement j = compare::judge(b, ref, c);
  if (!compare::is_failure(j.verdict))
    throw ReproNotShown("repro: the record's case passes now on " + b.name() + ": the judge says " + compare::verdict_name(j.verdict) +
                        (j.detail.empty() ? "" : " (" + j.detail + ")"));
  ReproRequest r = request_on(ref, b, c, "failure " + id + " of oplab's " + b.name() + " peer", detail.empty() ? j.detail : detail,
                              command);
  Tensors got;
  if (!library_answers(b, r, &got)) return r;
  const double d_spec = distance(got, r.spec);
  r.threshold = std::isinf(d_spec) ? 1.0 : d_spec / 2;
  return r;
}

}  // namespace oplab
