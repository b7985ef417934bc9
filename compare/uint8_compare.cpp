#include "compare/uint8_compare.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "compare/differential.h"
#include "compare/dtype_case.h"
#include "core/backend.h"

namespace oplab::compare {

namespace {

std::string num(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

}  // namespace

std::string uint8_mismatch(const Result& want, const Result& got, double error, int64_t& flips, double& worst) {
  for (const auto& [name, w] : want.outputs) {
    const auto it = got.outputs.find(name);
    if (it == got.outputs.end()) return "outputs." + name + " is missing";
    const Tensor& g = it->second;
    if (g.shape != w.shape) return "outputs." + name + " has shape " + shape_str(g.shape) + ", want " + shape_str(w.shape);
    for (size_t i = 0; i < w.data.size(); ++i) {
      const double r = std::clamp(w.data[i], 0.0, 255.0), v = g.data[i];
      const std::string at = "outputs." + name + "[" + std::to_string(i) + "]: ";
      if (!(v >= 0 && v <= 255 && v == std::floor(v))) return at + num(v) + " is not a uint8 value";
      if (std::isnan(w.data[i])) return at + num(v) + " vs ref NaN";
      const double rounded = std::floor(r + 0.5), off = std::fabs(v - r);
      worst = std::max(worst, off);
      if (v == rounded) continue;
      // A kernel stating no error computes the exact value: at an exact tie it rounds half up,
      // like the spec (half to even, or truncation, there is a finding).
      if (error > 0 && off <= 0.5 + error) {
        ++flips;
        continue;
      }
      return at + num(v) + " vs ref " + num(w.data[i]) + " rounded " + num(rounded) + " (stated fixed-point error " +
             num(error) + ")";
    }
  }
  return "";
}

Judgement judge_uint8(Backend& subject, Backend& oracle, const Case& c, const Evaluate& eval) {
  Judgement j;
  j.dtype = DType::UInt8;
  if (oracle.dtype(c.op) != DType::Float64) {
    j.verdict = Verdict::Skipped;
    j.detail = "a uint8 kernel is judged against a double oracle only";
    return j;
  }
  const Case q = case_for(subject, c);
  Result want, got;
  try {
    want = eval(oracle, q);
  } catch (const std::exception& e) {
    j.verdict = Verdict::Skipped;
    j.detail = oracle.name() + " failed: " + e.what();
    return j;
  }
  try {
    got = eval(subject, q);
  } catch (const Unsupported& e) {
    j.verdict = Verdict::Unsupported;
    j.detail = e.what();
    return j;
  } catch (const KernelCrash& e) {
    j.verdict = Verdict::Error;
    j.crashed = true;
    j.detail = e.what();
    return j;
  } catch (const std::exception& e) {
    j.verdict = Verdict::Error;
    j.detail = e.what();
    // A refusal the kernel is known for (a named divergence's peer_raises).
    for (const Divergence& d : subject.divergences())
      if (d.peer_raises && d.peer_raises(q)) j.verdict = Verdict::NamedDivergence, j.detail = d.name;
    return j;
  }
  const double error = subject.uint8_error(q), clipping = subject.uint8_clipping(q);
  int64_t flips = 0;
  double worst = 0;
  const std::string miss = uint8_mismatch(want, got, error, flips, worst);
  if (miss.empty()) {
    j.verdict = Verdict::Agree;
    j.worst = worst;
    if (flips) j.detail = std::to_string(flips) + " pixel(s) one off the rounded reference, within the stated error " + num(error);
    return j;
  }
  // A named divergence of the kernel, proven on its equivalent case under the same rule: all
  // that apply together first, then each alone (an equivalent that carries what another does
  // not need can be too large to build: OpenCV-style weight maps of a 512 x 512 image).
  auto proves = [&](const Case& e, double err) {
    int64_t f2 = 0;
    double w2 = 0;
    try {
      return uint8_mismatch(eval(oracle, e), got, err, f2, w2).empty();
    } catch (const std::exception&) {  // the equivalent cannot be evaluated: it proves nothing
      return false;
    }
  };
  // The explanations at a stated error: "" (none needed), a divergence's name, or nullopt.
  auto explained = [&](double err) -> std::optional<std::string> {
    if (err != error && proves(q, err)) return std::string();
    try {
      const Equivalent eq = divergence_equivalent(q, subject.divergences());
      if (!eq.names.empty() && proves(eq.c, err)) return eq.names;
    } catch (const std::exception&) {  // building the joint equivalent failed: try each alone
    }
    for (const Divergence& d : subject.divergences()) {
      if (!d.peer_equivalent) continue;
      std::optional<Case> e;
      try {
        e = d.peer_equivalent(q);
      } catch (const std::exception&) {
        continue;
      }
      if (e && proves(*e, err)) return d.name;
    }
    return std::nullopt;
  };
  if (auto names = explained(error)) {
    j.verdict = Verdict::NamedDivergence;
    j.detail = *names;
    return j;
  }
  // Only the clipping of an 8-bit intermediate image explains it: beyond the rule, shown apart.
  if (clipping > 0)
    if (auto names = explained(error + clipping)) {
      j.verdict = Verdict::PrecisionExhausted;
      j.detail = (names->empty() ? std::string() : *names + " and ") + "the kernel's 8-bit intermediate image, clipped by up to " +
                 num(clipping) + " pixel steps, explains " + miss;
      return j;
    }
  j.verdict = Verdict::Disagree;
  j.detail = miss + " (" + subject.name() + " vs " + oracle.name() + ", uint8 rule)";
  return j;
}

}  // namespace oplab::compare
