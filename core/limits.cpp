#include "core/limits.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>

#include "core/case.h"
#include "core/echo.h"

namespace oplab {

namespace {

struct Policy {
  ResourceLimits limits;
  bool enforced = true;
  std::optional<std::string> setting_error;  // OPLAB_LIMITS that could not be read
};

// Reads OPLAB_LIMITS into p (see limits.h).
void apply_environment(Policy& p) {
  const char* env = std::getenv("OPLAB_LIMITS");
  if (!env) return;
  const std::string all = env;
  std::stringstream ss(all);
  for (std::string item; std::getline(ss, item, ',');) {
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (item.empty() || item == "on" || item == "default") continue;
    if (item == "off" || item == "none") {
      p.enforced = false;
      continue;
    }
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    double v = NAN;
    if (eq != std::string::npos) {
      const std::string text = item.substr(eq + 1);
      char* end = nullptr;
      v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0') v = NAN;
    }
    if (!(v > 0) || !std::isfinite(v) || v > 9.2e18) {
      p.setting_error = "OPLAB_LIMITS=" + echo(all) + ": \"" + echo(item) +
                        "\" is not off, on, or LIMIT=VALUE with a positive VALUE";
      return;
    }
    if (key == "tensor_elements") p.limits.tensor_elements = int64_t(v);
    else if (key == "dim") p.limits.dim = int64_t(v);
    else if (key == "bin_samples") p.limits.bin_samples = int64_t(v);
    else if (key == "work") p.limits.work = v;
    else if (key == "file_bytes") p.limits.file_bytes = int64_t(v);
    else {
      p.setting_error = "OPLAB_LIMITS=" + echo(all) + ": unknown limit \"" + echo(key) +
                        "\" (known: tensor_elements, dim, bin_samples, work, file_bytes)";
      return;
    }
  }
}

std::mutex g_mutex;

Policy& policy_locked() {
  static Policy p = [] {
    Policy q;
    apply_environment(q);
    return q;
  }();
  return p;
}

Policy policy() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return policy_locked();
}

// 6.9e10 reads better as "68719476736" for integers below 1e15, and as 6.9e+10 above.
std::string num(double v) {
  if (v < 1e15 && v == std::floor(v)) return std::to_string(int64_t(v));
  std::ostringstream os;
  os.precision(3);
  os << v;
  return os.str();
}

[[noreturn]] void over(const std::string& op, const std::string& what, const std::string& limit, double value) {
  throw OverResourceLimit(one_line(op + ": " + what + ": over the resource limit " + limit + "=" + num(value) +
                             " (OPLAB_LIMITS; docs/semantics.md)"));
}

}  // namespace

ResourceLimits default_resource_limits() { return ResourceLimits{}; }

ResourceLimits resource_limits() { return policy().limits; }

std::optional<std::string> resource_limits_setting_error() { return policy().setting_error; }

void set_resource_limits(const ResourceLimits& limits) {
  std::lock_guard<std::mutex> lock(g_mutex);
  policy_locked().limits = limits;
}

bool limits_enforced() { return policy().enforced; }

void set_limits_enforced(bool on) {
  std::lock_guard<std::mutex> lock(g_mutex);
  policy_locked().enforced = on;
}

int64_t shape_span(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    const int64_t f = d > 1 ? d : 1;
    if (n > std::numeric_limits<int64_t>::max() / f) return std::numeric_limits<int64_t>::max();
    n *= f;
  }
  return n;
}

void enforce_resource_limits(const std::string& op, const ResourceUse& use) {
  const Policy p = policy();
  if (p.setting_error) throw InvalidCase(one_line(op + ": " + *p.setting_error));
  if (!p.enforced) return;
  const ResourceLimits& L = p.limits;
  for (const auto& t : use.tensors) {
    for (int64_t d : t.shape)
      if (d > L.dim) over(op, t.what + " shape " + shape_str(t.shape) + " has a dimension of " + std::to_string(d), "dim", double(L.dim));
    const int64_t span = shape_span(t.shape);
    if (span > L.tensor_elements) {
      const bool has_zero = shape_numel(t.shape) == 0;
      over(op,
           t.what + " shape " + shape_str(t.shape) + (has_zero ? " spans " : " has ") + num(double(span)) +
               (has_zero ? " elements (its zero dims counted as 1)" : " elements"),
           "tensor_elements", double(L.tensor_elements));
    }
  }
  if (use.bin_samples > double(L.bin_samples))
    over(op, num(use.bin_samples) + " samples per bin (" + use.bin_what + ")", "bin_samples", double(L.bin_samples));
  if (use.work > L.work) over(op, "a work estimate of " + num(use.work) + " (" + use.work_what + ")", "work", L.work);
}

}  // namespace oplab
