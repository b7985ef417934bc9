// Accuracy per op x backend from `oplab campaign` (its summary.json records of the differential
// property, fuzz/campaign_records.h): verdicts against the reference, named divergences, cases/s,
// and for float32 kernels the SPEC §9 metrics, boundary flips against their budget, a ULP
// histogram, error against the driving parameter and a heatmap of error over the output plane.
#include <algorithm>
#include <map>

#include "notebooks-cpp/page.h"
#include "fuzz/replay_command.h"
#include "reports/html_finish.h"
#include "reports/sections.h"
#include "reports/verdict_matrix.h"

namespace oplab::report {

namespace {

int verdict(const json& r, const char* k) { return r["verdicts"].value(k, 0); }

json differential_records(const json& campaign) {
  json out = json::array();
  for (const json& r : campaign.at("records"))
    if (r.value("property", "") == "differential") out.push_back(r);
  return out;
}

// What needs a reviewer first: findings, flips near their budget, the largest errors.
void needs_attention(nb::Page& page, const json& campaign, const json& records) {
  std::vector<std::string> lines;
  for (const json& r : campaign.at("records")) {
    const std::string b = r["backend"], role = role_of(campaign, r, b);
    const int64_t f = failing_checks(r);
    if (role == "implementation" && f)
      lines.push_back("- **finding:** [" + r["op"].get<std::string>() + " on " + b + "](#" +
                      anchor_id(failing_cases_heading(r["op"], b)) + "): " + std::to_string(f) + " failing cases (" +
                      r.value("property", std::string("?")) + ")");
    if (r.contains("finding"))
      lines.push_back("- **finding:** " + r["op"].get<std::string>() + " on " + b + ": " + r["finding"].get<std::string>());
  }
  for (const json& r : records) {
    if (!r.contains("accuracy") || r.contains("finding")) continue;
    const json& a = r["accuracy"];
    const double budget = a.value("flip_budget", 0.0), cases = std::max(1.0, a.value("cases", 0.0) * 1.0);
    const double share = a.value("boundary_flips", 0.0) / cases;
    if (budget > 0 && share >= 0.5 * budget)
      lines.push_back("- flips near budget: " + r["op"].get<std::string>() + " on " + r["backend"].get<std::string>() +
                      ": " + nb::fmt(100 * share, 3) + "% of cases flipped, budget " + nb::fmt(100 * budget, 3) + "%");
  }
  std::vector<const json*> by_error;
  for (const json& r : records)
    if (r.contains("accuracy") && role_of(campaign, r, r["backend"]) == "implementation") by_error.push_back(&r);
  std::sort(by_error.begin(), by_error.end(), [](const json* a, const json* b) {
    return (*a)["accuracy"].value("worst_error_over_bound", 0.0) > (*b)["accuracy"].value("worst_error_over_bound", 0.0);
  });
  for (size_t i = 0; i < std::min<size_t>(3, by_error.size()); ++i) {
    const json& r = *by_error[i];
    lines.push_back("- largest error: " + r["op"].get<std::string>() + " on " + r["backend"].get<std::string>() + " (" +
                    r.value("dtype", std::string()) + "): " + nb::fmt(r["accuracy"].value("worst_error_over_bound", 0.0)) +
                    " x its bound");
  }
  std::string md = "### Needs attention\n\n";
  bool any_finding = false;
  for (const auto& l : lines) any_finding |= l.rfind("- **finding", 0) == 0;
  if (!any_finding) md += "No finding: no implementation fails a case, and none is over its flip budget.\n\n";
  for (const auto& l : lines) md += l + "\n";
  page.text(md);
}

// One table per pair with failing cases (the verdict grid links here), a few rows each.
void failing_cases(nb::Page& page, const json& campaign) {
  const json failures = campaign.value("failures", json::array());  // kept: by_pair points into it
  std::map<std::pair<std::string, std::string>, std::vector<const json*>> by_pair;
  for (const json& f : failures) by_pair[{f.value("op", ""), f.value("backend", "")}].push_back(&f);
  if (by_pair.empty()) return;
  const json& origins = member(member(campaign, "options"), "backend_origins");
  constexpr size_t kShown = 5;
  for (const auto& [pair, list] : by_pair) {
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < std::min(kShown, list.size()); ++i) {
      const json& f = *list[i];
      rows.push_back({f.value("property", ""), nb::md_plain(f.value("detail", "")), "`" + f.value("case", std::string()) + "`",
                      "`" + fuzz::replay_command(f.value("record", std::string()), pair.second,
                                                 origins.value(pair.second, std::string())) + "`"});
    }
    page.text("### " + failing_cases_heading(pair.first, pair.second) + "\n\n" + std::to_string(list.size()) +
              " failing case" + (list.size() == 1 ? "" : "s") + " (role " + role_of(campaign, json(), pair.second) + ")" +
              (list.size() > kShown ? "; the first " + std::to_string(kShown) + " below, every one in the campaign's failures/ folder." : "."));
    page.table({"property", "what failed", "case", "replay"}, rows);
  }
}

}  // namespace

json accuracy_section(const json& campaign, const std::string& pages) {
  nb::Page page(pages, "accuracy", kAccuracyTitle,
                "How far is each backend from the double-precision reference, and where?");
  const json records = differential_records(campaign);
  const json opts = campaign.value("options", json::object());
  int failures = 0, flips = 0, divergences = 0, findings = 0;
  RoleFailures by_role;
  double worst_float = 0;
  std::vector<std::vector<std::string>> rows;
  std::map<std::string, std::vector<std::string>> not_applicable;  // backend -> ops it declined entirely
  for (const json& r : records) {
    const bool fl = r.contains("accuracy");
    const int cases = r.value("cases", 0);
    if (cases > 0 && verdict(r, "unsupported") == cases) {
      not_applicable[r["backend"]].push_back(r["op"]);
      continue;
    }
    failures += verdict(r, "DISAGREE") + verdict(r, "ERROR");
    by_role.add(role_of(campaign, r, r["backend"]), r["backend"], verdict(r, "DISAGREE") + verdict(r, "ERROR"));
    const int named = verdict(r, "named-divergence"), flipped = verdict(r, "boundary-flip");
    divergences += named, flips += flipped;
    if (fl) worst_float = std::max(worst_float, r["accuracy"].value("worst_error_over_bound", 0.0));
    if (r.contains("finding")) {
      ++findings;
      by_role.add(role_of(campaign, r, r["backend"]), r["backend"], 1);
    }
    const json a = fl ? r["accuracy"] : json::object();
    rows.push_back({r["op"], r["backend"], r.value("dtype", std::string("float64")), std::to_string(r.value("cases", 0)), std::to_string(verdict(r, "agree")),
                    std::to_string(named), std::to_string(flipped) + (r.contains("finding") ? " (over budget)" : ""),
                    std::to_string(verdict(r, "unsupported")),
                    std::to_string(verdict(r, "DISAGREE") + verdict(r, "ERROR")),
                    fl ? nb::fmt(a.value("worst_error_over_bound", 0.0)) + " x bound" : nb::fmt(r.value("worst_agreeing", 0.0)) + " rel",
                    fl ? nb::fmt(a.value("diff1", 0.0)) : "-", fl ? nb::fmt(a.value("diff2", 0.0)) : "-",
                    fl ? nb::fmt(a["diff3"].value("max_rel_above_th", 0.0)) + " / " + nb::fmt(a["diff3"].value("max_abs_below_th", 0.0)) : "-",
                    fl ? nb::fmt(a.value("max_ulp", 0.0)) : "-", nb::fmt(r.value("cases_per_second", 0.0))});
  }
  page.answer(std::to_string(records.size()) + " op x backend pairs over " + opts.value("cases", json(0)).dump() +
              " cases per op (seed " + opts.value("seed", json(0)).dump() + ", campaign " +
              campaign.value("status", std::string("?")) + "): " + by_role.sentence() + "; " +
              std::to_string(divergences) + " cases explained by named peer divergences, " +
              std::to_string(flips) + " float32 boundary flips (" + std::to_string(findings) +
              " op x backend pairs over their flip budget); worst float32 error " + nb::fmt(worst_float) +
              " x its own error bound (pass: <= 8).");
  needs_attention(page, campaign, records);
  page.text("### Every op x backend\n\nDouble backends (the peer, variants) must agree with `ref` to 1e-10 relative; float32 kernels must stay within "
            "8x the per-element error bound of SPEC §9. *diff3* is the max relative error where |ref| > 1e-6 / the max "
            "absolute error elsewhere. Boundary flips are cases where float32 legitimately took a discrete decision the "
            "other way (proven by re-running the reference on the case as the backend rounds it); they are counted "
            "against a budget per op, never passed, and over budget they are a finding.");
  page.table({"op", "backend", "dtype", "cases", "agree", "named div.", "fp32 flips", "unsupp.", "fail", "worst", "diff1", "diff2",
              "diff3", "max ULP", "cases/s"},
             rows);
  if (!not_applicable.empty()) {
    std::string line = "Not in the table, every case unsupported (" ;
    size_t pairs = 0;
    for (const auto& [b, list] : not_applicable) pairs += list.size();
    line += std::to_string(pairs) + " pairs): ";
    bool first = true;
    for (const auto& [b, list] : not_applicable) {
      line += std::string(first ? "" : "; ") + nb::md_plain(b) + " (" + std::to_string(list.size()) + " ops)";
      first = false;
    }
    page.text(line + ".");
  }
  failing_cases(page, campaign);

  // Named divergences, by name.
  std::vector<std::vector<std::string>> div_rows;
  for (const json& r : records)
    for (const auto& [name, n] : member(r, "divergences").items())
      div_rows.push_back({r["op"], r["backend"], name, std::to_string(n.get<int>())});
  if (!div_rows.empty()) {
    page.text("### Named divergences\n\nEach is proven: the reference, run on the divergence's equivalent case, reproduces "
              "the backend's answer (docs/semantics.md lists them).");
    page.table({"op", "backend", "divergence", "cases"}, div_rows);
  }

  // Float32 details per op.
  std::map<std::string, std::vector<const json*>> by_op;
  for (const json& r : records)
    if (r.contains("accuracy") && r["accuracy"].value("cases", 0) > 0) by_op[r["op"]].push_back(&r);
  for (const auto& [op, list] : by_op) {
    page.text("### " + op + ": float32 error");
    std::vector<std::string> buckets{"0"};
    for (int b = 1; b < 26; ++b) buckets.push_back(b == 25 ? ">=2^24" : "<2^" + std::to_string(b));
    std::vector<std::string> names;
    std::vector<std::vector<double>> hist;
    std::vector<nb::Series> scatter;
    for (const json* r : list) {
      names.push_back((*r)["backend"]);
      std::vector<double> h;
      for (const auto& v : (*r)["accuracy"]["ulp_histogram"]) h.push_back(v.get<double>());
      hist.push_back(h);
      nb::Series s;
      s.label = (*r)["backend"];
      s.with = "points";
      for (const auto& p : (*r)["accuracy"]["error_vs_driving"]) s.x.push_back(p[0]), s.y.push_back(std::max(p[1].get<double>(), 1e-6));
      scatter.push_back(s);
    }
    nb::PlotOptions ho;
    ho.title = op + ": ULP distance of float32 outputs from the reference";
    ho.xlabel = "ULP bucket";
    ho.ylabel = "elements";
    ho.logy = true;
    page.bar_plot(op + "_ulp", ho, buckets, names, hist);
    nb::PlotOptions so;
    so.title = op + ": worst error of a case (multiples of its bound) against " +
               list.front()->at("accuracy").value("driving_parameter", std::string("its size"));
    so.xlabel = list.front()->at("accuracy").value("driving_parameter", std::string("parameter"));
    so.ylabel = "error / bound (floor 1e-6)";
    so.logy = true;
    page.line_plot(op + "_driving", so, scatter);
    const json& heat = list.front()->at("accuracy")["heatmap_mean_error_over_bound"];
    std::vector<std::vector<double>> values;
    std::vector<std::string> labels;
    for (size_t i = 0; i < heat.size(); ++i) labels.push_back(std::to_string(i));
    for (const auto& row : heat) {
      std::vector<double> v;
      for (const auto& x : row) v.push_back(x.get<double>());
      values.push_back(v);
    }
    nb::PlotOptions mo;
    mo.title = op + " on " + list.front()->at("backend").get<std::string>() + ": mean error / bound over the output plane";
    mo.xlabel = "relative x (8 cells)";
    mo.ylabel = "relative y (8 cells)";
    page.heatmap(op + "_heat", mo, labels, labels, values, "mean error / bound", true, 1e-6);
  }
  page.number("failures", failures);
  page.number("flip_budget_findings", findings);
  page.number("fp32_boundary_flips", flips);
  page.number("worst_fp32_error_over_bound", worst_float);
  page.write();
  return json{{"name", "accuracy"}, {"failures", failures}, {"flip_budget_findings", findings}, {"fp32_boundary_flips", flips},
              {"worst_fp32_error_over_bound", worst_float}};
}

}  // namespace oplab::report
