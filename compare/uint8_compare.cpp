#include "compare/uint8_compare.h"

#include <algorithm>
#include <cmath>
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
  const double error = subject.uint8_error(q);
  int64_t flips = 0;
  double worst = 0;
  const std::string miss = uint8_mismatch(want, got, error, flips, worst);
  if (miss.empty()) {
    j.verdict = Verdict::Agree;
    j.worst = worst;
    if (flips) j.detail = std::to_string(flips) + " pixel(s) one off the rounded reference, within the stated error " + num(error);
    return j;
  }
  // A named divergence of the kernel, proven on its equivalent case under the same rule.
  const Equivalent eq = divergence_equivalent(q, subject.divergences());
  if (!eq.names.empty()) {
    try {
      int64_t f2 = 0;
      double w2 = 0;
      if (uint8_mismatch(eval(oracle, eq.c), got, error, f2, w2).empty()) {
        j.verdict = Verdict::NamedDivergence;
        j.detail = eq.names;
        return j;
      }
    } catch (const std::exception&) {  // the equivalent cannot be evaluated: the miss stands
    }
  }
  j.verdict = Verdict::Disagree;
  j.detail = miss + " (" + subject.name() + " vs " + oracle.name() + ", uint8 rule)";
  return j;
}

}  // namespace oplab::compare
