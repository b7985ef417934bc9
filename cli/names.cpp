#include "cli/names.h"

#include <algorithm>
#include <cctype>

#include "cli/builtin_backends.h"
#include "core/op_desc.h"
#include "fuzz/properties.h"

namespace oplab::cli {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::optional<std::string> closest_name(const std::string& name, const std::vector<std::string>& valid) {
  if (name.size() > 200) return std::nullopt;  // nothing valid is that long; spare the quadratic work
  std::optional<std::string> best;
  size_t best_d = 3;
  for (const auto& v : valid) {
    const size_t d = edit_distance(name, v);
    if (d < best_d && d < std::max<size_t>(name.size(), 1)) best_d = d, best = v;
  }
  if (best || name.size() < 3) return best;
  // Further off, but the only name that begins with it ("c-roi-align" for the
  // "c-roi-align-clampbug" a plugin registered) or that it begins with.
  auto starts = [](const std::string& s, const std::string& prefix) {
    return s.size() >= prefix.size() && edit_distance(s.substr(0, prefix.size()), prefix) == 0;
  };
  for (const auto& v : valid)
    if (starts(v, name) || (v.size() >= 3 && starts(name, v))) {
      if (best) return std::nullopt;  // more than one: no single suggestion
      best = v;
    }
  return best;
}

std::string echo_name(const std::string& name) {
  constexpr size_t kMax = 60;
  std::string shown;
  for (char ch : name.substr(0, kMax)) shown += (ch == '\n' || ch == '\r' || ch == '\t') ? ' ' : ch;
  if (name.size() > kMax) shown += "...(" + std::to_string(name.size() - kMax) + " more chars)";
  return shown;
}

std::string unknown_name(const std::string& verb, const std::string& kind, const std::string& name,
                         const std::vector<std::string>& valid, const std::string& extra,
                         const std::vector<std::string>* suggest_from) {
  std::string line = verb + ": unknown " + kind + " \"" + echo_name(name) + "\"";
  if (auto close = closest_name(name, suggest_from ? *suggest_from : valid)) line += " (did you mean \"" + *close + "\"?)";
  line += "; valid: ";
  for (size_t i = 0; i < valid.size(); ++i) line += (i ? ", " : "") + valid[i];
  if (!extra.empty()) line += (valid.empty() ? "" : ", ") + extra;
  return line;
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (Backend* b : builtin_backends().all()) names.push_back(b->name());
  return names;
}

std::vector<std::string> op_names() {
  std::vector<std::string> names;
  for (const auto& d : all_ops()) names.push_back(d.name);
  return names;
}

std::vector<std::string> property_names() {
  std::vector<std::string> names;
  for (const auto& p : fuzz::all_properties()) names.push_back(p.name);
  return names;
}

}  // namespace oplab::cli
