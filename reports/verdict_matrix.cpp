#include "reports/verdict_matrix.h"

#include <algorithm>
#include <map>
#include <vector>

#include "notebooks-cpp/page.h"

namespace oplab::report {

namespace {

using json = nlohmann::json;

int64_t n(const json& r, const char* verdict) { return r.at("verdicts").value(verdict, int64_t(0)); }

// One cell: the worst thing that happened on the pair first.
std::string cell(const json& r) {
  const int64_t cases = r.value("cases", int64_t(0)), agree = n(r, "agree"), named = n(r, "named-divergence"),
                flips = n(r, "boundary-flip"), unsupported = n(r, "unsupported"),
                failed = n(r, "DISAGREE") + n(r, "ERROR");
  const bool seeded = r.value("role", "") == "seeded-bug";
  if (cases == 0 || unsupported == cases) return "·";
  std::string s;
  if (failed) s = (seeded ? "🐞 caught: " : "🟥 ") + std::to_string(failed) + " fail";
  else if (r.contains("finding")) s = "🟧 flips over budget";
  else if (named || flips) s = "🟦 " + std::to_string(agree) + " agree";
  else s = "🟩 " + std::to_string(agree) + " agree";
  if (named) s += ", " + std::to_string(named) + " named";
  if (flips) s += ", " + std::to_string(flips) + " flips";
  if (unsupported) s += ", " + std::to_string(unsupported) + " unsupp.";
  return s;
}

}  // namespace

std::string verdict_matrix(const json& records) {
  std::vector<std::string> ops, backends;
  std::map<std::string, std::string> role;
  std::map<std::pair<std::string, std::string>, std::string> cells;
  for (const json& r : records) {
    if (r.value("property", "") != "differential") continue;
    const std::string op = r.at("op"), b = r.at("backend");
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
    if (std::find(backends.begin(), backends.end(), b) == backends.end()) backends.push_back(b);
    role[b] = r.value("role", "implementation");
    cells[{b, op}] = cell(r);
  }
  if (ops.empty()) return "";
  // Implementations first: their row is the verdict; variants follow, as evidence of power.
  std::stable_sort(backends.begin(), backends.end(), [&](const std::string& a, const std::string& b) {
    return (role[a] == "implementation") > (role[b] == "implementation");
  });
  std::string md = "| backend (role) |";
  for (const auto& op : ops) md += " " + op + " |";
  md += "\n|---|";
  for (size_t i = 0; i < ops.size(); ++i) md += "---|";
  md += "\n";
  for (const auto& b : backends) {
    md += "| " + nb::md_cell(b + " (" + role[b] + ")") + " |";
    for (const auto& op : ops) {
      auto it = cells.find({b, op});
      md += " " + nb::md_cell(it == cells.end() ? "·" : it->second) + " |";
    }
    md += "\n";
  }
  md += "\n🟩 every case agrees with `ref` · 🟦 agrees but for named divergences or float32 boundary flips (within "
        "budget) · 🟧 boundary flips over the op's budget (a finding) · 🟥 failing cases (a finding) · 🐞 a seeded "
        "bug caught · `·` every case unsupported. Details and replayable cases: the Accuracy section.\n";
  return md;
}

}  // namespace oplab::report
