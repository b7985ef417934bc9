// Accuracy per op x backend from `oplab campaign` (its summary.json records of the differential
// property, fuzz/campaign_records.h): verdicts against the reference, named divergences, cases/s,
// and for float32 kernels the SPEC §9 metrics, boundary flips against their budget, a ULP
// histogram, error against the driving parameter and a heatmap of error over the output plane.
#include <map>

#include "notebooks-cpp/page.h"
#include "reports/sections.h"

namespace oplab::report {

namespace {

int verdict(const json& r, const char* k) { return r["verdicts"].value(k, 0); }

json differential_records(const json& campaign) {
  json out = json::array();
  for (const json& r : campaign.at("records"))
    if (r.value("property", "") == "differential") out.push_back(r);
  return out;
}

}  // namespace

json accuracy_section(const json& campaign, const std::string& pages) {
  nb::Page page(pages, "accuracy", "Accuracy per op and backend",
                "How far is each backend from the double-precision reference, and where?");
  const json records = differential_records(campaign);
  const json opts = campaign.value("options", json::object());
  int failures = 0, flips = 0, divergences = 0, findings = 0;
  RoleFailures by_role;
  double worst_float = 0;
  std::vector<std::vector<std::string>> rows;
  for (const json& r : records) {
    const bool fl = r.contains("accuracy");
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
  page.text("Double backends (the peer, variants) must agree with `ref` to 1e-10 relative; float32 kernels must stay within "
            "8x the per-element error bound of SPEC §9. *diff3* is the max relative error where |ref| > 1e-6 / the max "
            "absolute error elsewhere. Boundary flips are cases where float32 legitimately took a discrete decision the "
            "other way (proven by re-running the reference on the case as the backend rounds it); they are counted "
            "against a budget per op, never passed, and over budget they are a finding.");
  page.table({"op", "backend", "dtype", "cases", "agree", "named div.", "fp32 flips", "unsupp.", "fail", "worst", "diff1", "diff2",
              "diff3", "max ULP", "cases/s"},
             rows);

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
