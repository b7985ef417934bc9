#include "reports/at_a_glance.h"

#include <algorithm>
#include <map>
#include <vector>

#include "compare/float_compare.h"
#include "fuzz/campaign_records.h"
#include "notebooks-cpp/page.h"
#include "reports/html_finish.h"
#include "reports/sections.h"
#include "reports/verdict_matrix.h"

namespace oplab::report {

namespace {

std::string findings_line(const json& campaign) {
  // op x backend -> failing cases by property, for implementations; and flip budgets exceeded.
  std::map<std::pair<std::string, std::string>, std::map<std::string, int64_t>> failing;
  std::vector<std::string> over_budget;
  std::map<std::string, int64_t> seeded;  // seeded bug -> failures, over every op and property
  for (const json& r : campaign.value("records", json::array())) {
    const std::string op = r.value("op", ""), b = r.value("backend", ""), role = role_of(campaign, r, b);
    if (role == "seeded-bug") {
      // Only a bug that met its op counts: one whose every case was unsupported (its op was not
      // in the campaign) was neither caught nor missed.
      const int64_t unsupported = member(r, "verdicts").value("unsupported", int64_t(0));
      if (r.value("cases", int64_t(0)) > unsupported || failing_checks(r)) seeded[b] += failing_checks(r);
      continue;
    }
    if (role != "implementation") continue;
    if (const int64_t f = failing_checks(r)) failing[{op, b}][r.value("property", "?")] += f;
    if (r.contains("finding")) over_budget.push_back(op + " on " + b + " (" + r["finding"].get<std::string>() + ")");
  }
  std::string s = "**Findings:** ";
  if (failing.empty() && over_budget.empty()) {
    s += "none — every implementation agrees with the reference, or differs only as a named divergence or a "
         "float32 flip within its op's budget.";
  } else {
    std::vector<std::string> items;
    for (const auto& [pair, by_property] : failing) {
      std::string item = "[" + pair.first + " on " + pair.second + "](#" +
                         anchor_id(failing_cases_heading(pair.first, pair.second)) + "): ";
      bool first = true;
      for (const auto& [property, n] : by_property)
        item += (first ? "" : ", ") + std::to_string(n) + " failing (" + property + ")", first = false;
      items.push_back(item);
    }
    for (const auto& o : over_budget) items.push_back(o);
    s += std::to_string(items.size()) + " — ";
    for (size_t i = 0; i < items.size(); ++i) s += (i ? "; " : "") + items[i];
    s += ".";
  }
  if (!seeded.empty()) {
    std::vector<std::string> missed;
    for (const auto& [b, n] : seeded)
      if (n == 0) missed.push_back(b);
    s += "  \n> **Seeded bugs:** " + std::to_string(seeded.size() - missed.size()) + " of " + std::to_string(seeded.size()) +
         " caught";
    if (!missed.empty()) {
      s += "; **missed**: ";
      for (size_t i = 0; i < missed.size(); ++i) s += (i ? ", " : "") + missed[i];
    }
    s += ".";
  }
  return s;
}

std::string worst_error_line(const json& campaign) {
  double worst = -1;
  std::string where, dtype;
  for (const json& r : campaign.value("records", json::array())) {
    if (r.value("property", "") != "differential" || !r.contains("accuracy")) continue;
    if (role_of(campaign, r, r.value("backend", "")) != "implementation") continue;
    const double w = r["accuracy"].value("worst_error_over_bound", 0.0);
    if (w > worst) worst = w, where = r.value("op", "") + " on " + r.value("backend", ""), dtype = r.value("dtype", "");
  }
  if (worst < 0) return "**Worst error:** no reduced-precision implementation ran.";
  return "**Worst error:** " + nb::fmt(worst) + " x the per-element error bound of its dtype (" + where + ", " + dtype +
         "), the largest over every reduced-precision implementation's agreeing cases; a case passes up to " +
         nb::fmt(compare::kDefaultBoundMultiple) + " x.";
}

// How much of our kernels' branching the campaign exercised: every path a backend names
// (Backend::kernel_paths), and those no case reached, named (they are untested).
std::string kernel_paths_line(const json& campaign) {
  const json records = campaign.value("records", json::array());
  int64_t paths = 0;
  for (const json& r : records)
    if (r.contains("kernel_paths")) paths += int64_t(r["kernel_paths"].size());
  if (paths == 0) return "";
  const std::vector<std::string> unreached = fuzz::unreached_kernel_paths(records);
  std::string s = "**Kernel paths:** the campaign reached " + std::to_string(paths - int64_t(unreached.size())) + " of " +
                  std::to_string(paths) + " (each kernel chosen by size, each specialisation, each block of channels)";
  if (unreached.empty()) return s + ".";
  s += "; **never reached** (untested): ";
  for (size_t i = 0; i < unreached.size(); ++i) s += (i ? ", " : "") + nb::md_plain(unreached[i]);
  return s + ".";
}

std::string speed_line(const json& bench) {
  struct Span {
    double lo = 1e300, hi = 0;
    std::string lo_peer, lo_pass;
  };
  std::map<std::string, Span> by_op;
  std::vector<std::string> order;
  for (const json& r : bench.value("records", json::array())) {
    if (r.value("peer", json::object()).contains("baseline")) continue;  // no peer has the op
    double x = 0;
    std::string peer;
    if (r.contains("ratio_to_fastest_peer")) x = r["ratio_to_fastest_peer"], peer = r.value("fastest_peer", "");
    else if (r.contains("ratio")) x = r["ratio"], peer = "torchvision";  // the one peer with backwards
    else continue;
    const std::string op = r.value("op", "");
    if (!by_op.count(op)) order.push_back(op);
    Span& s = by_op[op];
    if (x < s.lo) s.lo = x, s.lo_peer = peer, s.lo_pass = r.value("pass", "");
    s.hi = std::max(s.hi, x);
  }
  if (order.empty()) return "**Speed:** no benchmark beside this campaign.";
  std::string s = "**Speed, ours against the fastest peer** (its time / ours, every shape and pass; < 1: we trail): ";
  for (size_t i = 0; i < order.size(); ++i) {
    const Span& sp = by_op[order[i]];
    s += (i ? "; " : "") + order[i] + " " + (sp.lo < 1 ? "**" + nb::fmt(sp.lo, 2) + "x**" : nb::fmt(sp.lo, 2) + "x");
    if (sp.hi > sp.lo * 1.01) s += "–" + nb::fmt(sp.hi, 2) + "x";
    s += " (slowest: " + sp.lo_pass + " vs " + sp.lo_peer + ")";
  }
  return s + ".";
}

}  // namespace

std::string at_a_glance(const json& campaign, const json& bench) {
  std::string md;
  md += "> " + (campaign.is_object() ? findings_line(campaign) : std::string("**Findings:** no campaign was found.")) +
        "  \n";
  if (campaign.is_object()) md += "> " + worst_error_line(campaign) + "  \n";
  if (campaign.is_object())
    if (const std::string paths = kernel_paths_line(campaign); !paths.empty()) md += "> " + paths + "  \n";
  md += "> " + (bench.is_object() ? speed_line(bench) : std::string("**Speed:** no benchmark was found.")) + "\n";
  return md;
}

}  // namespace oplab::report
