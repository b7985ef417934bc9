#include "reports/verdict_matrix.h"

#include <algorithm>
#include <map>
#include <vector>

#include "notebooks-cpp/page.h"
#include "reports/html_finish.h"
#include "reports/sections.h"

namespace oplab::report {

const char* const kAccuracyTitle = "Accuracy per op and backend";

std::string failing_cases_heading(const std::string& op, const std::string& backend) {
  return "Failing cases of " + op + " on " + backend;
}

namespace {

using json = nlohmann::json;

int64_t n(const json& r, const char* verdict) { return r.at("verdicts").value(verdict, int64_t(0)); }

// One pair: its differential record, and the failures of every property's.
struct Pair {
  const json* differential = nullptr;
  int64_t failures = 0;
  std::vector<std::string> failing_properties;
  bool over_budget = false;
};

// The cell: the status word first (the worst thing that happened), then the counts.
std::string cell(const Pair& p, const std::string& role, bool row_caught_elsewhere, const std::string& op,
                 const std::string& backend) {
  if (!p.differential) return "·";
  const json& r = *p.differential;
  const int64_t cases = r.value("cases", int64_t(0)), agree = n(r, "agree"), named = n(r, "named-divergence"),
                flips = n(r, "boundary-flip"), unsupported = n(r, "unsupported");
  if ((cases == 0 || unsupported == cases) && p.failures == 0) return "·";
  std::string word;
  std::string s;
  if (p.failures) {
    word = role == "seeded-bug" ? "CAUGHT" : role == "study-variant" ? "DEPARTS" : "FAIL";
    s = std::to_string(p.failures) + " fail";
    if (p.failing_properties.size() > 1 || (p.failing_properties.size() == 1 && p.failing_properties[0] != "differential")) {
      s += " (";
      for (size_t i = 0; i < p.failing_properties.size(); ++i) s += (i ? ", " : "") + p.failing_properties[i];
      s += ")";
    }
    s += ", " + std::to_string(agree) + " agree";
  } else if (p.over_budget) {
    word = "OVER-BUDGET";
    s = std::to_string(agree) + " agree";
  } else if (role == "seeded-bug" && !row_caught_elsewhere) {
    word = "MISSED";
    s = std::to_string(agree) + " agree";
  } else {
    word = named || flips ? "EXPLAINED" : "PASS";
    s = std::to_string(agree) + " agree";
  }
  if (named) s += ", " + std::to_string(named) + " named";
  if (flips) s += ", " + std::to_string(flips) + " flips";
  if (unsupported) s += ", " + std::to_string(unsupported) + " unsupp.";
  const std::string target = p.failures ? failing_cases_heading(op, backend) : kAccuracyTitle;
  return "[**" + word + "** " + s + "](#" + anchor_id(target) + ")";
}

}  // namespace

std::string verdict_matrix(const json& records) {
  std::vector<std::string> ops, backends;
  std::map<std::string, std::string> role;
  std::map<std::pair<std::string, std::string>, Pair> pairs;
  for (const json& r : records) {
    const std::string op = r.at("op"), b = r.at("backend");
    Pair& p = pairs[{b, op}];
    if (const int64_t f = failing_checks(r)) {
      p.failures += f;
      p.failing_properties.push_back(r.value("property", std::string("?")));
    }
    if (r.value("property", "") != "differential") continue;
    p.differential = &r;
    p.over_budget = r.contains("finding");
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
    if (std::find(backends.begin(), backends.end(), b) == backends.end()) backends.push_back(b);
    role[b] = r.value("role", "implementation");
  }
  if (ops.empty()) return "";
  std::map<std::string, bool> caught;  // a seeded bug caught on some op of its row
  for (const auto& [key, p] : pairs) caught[key.first] = caught[key.first] || p.failures > 0;
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
      auto it = pairs.find({b, op});
      md += " " + (it == pairs.end() ? std::string("·") : nb::md_cell(cell(it->second, role[b], caught[b], op, b))) + " |";
    }
    md += "\n";
  }
  md += "\n";
  for (const Status& s : statuses()) md += "**" + std::string(s.word) + "** " + s.meaning + " · ";
  md += "`·` every case unsupported. Each cell links to its failing cases, or to the accuracy table.\n";
  return md;
}

}  // namespace oplab::report
