// Fuzz campaigns from `oplab fuzz`: cases run, cases/s, checks, and every failure with its
// minimal case and the command that replays it.
#include <map>
#include <string>
#include <vector>

#include "fuzz/replay_command.h"
#include "notebooks-cpp/page.h"
#include "reports/sections.h"

namespace oplab::report {

json fuzz_section(const json& summaries, const std::string& pages) {
  nb::Page page(pages, "fuzz", "Fuzz campaigns", "What did the property-based campaigns run, and what did they find?");
  std::vector<std::vector<std::string>> rows, fails;
  int64_t cases = 0, failures = 0;
  RoleFailures by_role;
  double secs = 0;
  for (const auto& [dir, s] : summaries.items()) {
    const json opts = s.value("options", json::object());
    std::string per_op;
    for (const auto& [op, n] : member(s["cases"], "per_op").items()) per_op += op + " " + n.dump() + "  ";
    const json& f = s.value("failures", json::array());
    cases += s["cases"].value("total", int64_t(0)), failures += int64_t(f.size()), secs += s.value("elapsed_s", 0.0);
    std::string backends;
    for (const auto& b : opts.value("backends", json::array())) backends += (backends.empty() ? "" : ", ") + b.get<std::string>();
    const std::string status = s.value("status", "") + (s.contains("state_detail") ? " (" + s["state_detail"].get<std::string>() + ")" : "");
    rows.push_back({dir, status, backends, nb::fmt(s.value("elapsed_s", 0.0)),
                    s["cases"].value("total", json(0)).dump(), nb::fmt(s.value("cases_per_second", 0.0)),
                    s.contains("shrink_share") ? nb::fmt(100 * s["shrink_share"].get<double>()) + "%" : "-", per_op,
                    std::to_string(f.size())});
    for (const auto& [backend, role] : member(opts, "backend_roles").items())
      if (role == "seeded-bug") by_role.add("seeded-bug", backend, 0);  // tried, caught or not
    for (const json& x : f) {
      by_role.add(role_of(opts, json(), x.value("backend", "")), x.value("backend", ""), 1);
      fails.push_back({x.value("op", ""), x.value("backend", ""), x.value("property", ""), x.value("detail", ""),
                       "`" +
                           fuzz::replay_command(x.value("record", std::string()), x.value("backend", ""),
                                                member(opts, "backend_origins").value(x.value("backend", ""), std::string())) +
                           "`"});
    }
  }
  page.answer(std::to_string(summaries.size()) + (summaries.size() == 1 ? " campaign ran " : " campaigns ran ") +
              std::to_string(cases) + " cases in " + nb::fmt(secs) + " s: " + by_role.sentence() + (failures ? " (each below, shrunk and replayable)." : "."));
  // cases/s leaves out the time spent shrinking failures, which is its own column (the share of
  // the campaign's time).
  page.table({"campaign", "status", "backend", "seconds", "cases", "cases/s", "shrinking", "cases per op", "failures"}, rows);
  // Seeded bugs: which were caught, how soon, and by what (the harness's own proof of power).
  std::map<std::string, std::vector<std::string>> first_catch;  // bug backend -> row
  for (const auto& [dir, s] : summaries.items()) {
    const json opts = s.value("options", json::object());
    for (const json& x : s.value("failures", json::array())) {
      const std::string b = x.value("backend", "");
      if (role_of(opts, json(), b) != "seeded-bug") continue;
      const double t = x.value("found_after_s", 0.0);
      auto it = first_catch.find(b);
      if (it == first_catch.end() || t < std::stod(it->second[1]))
        first_catch[b] = {b, nb::fmt(t), x.value("op", ""), x.value("property", ""), x.value("detail", "")};
    }
    for (const auto& [b, role] : member(opts, "backend_roles").items())
      if (role == "seeded-bug" && !first_catch.count(b)) first_catch[b] = {b, "not caught", "-", "-", "-"};
  }
  if (!first_catch.empty()) {
    page.text("### Seeded bugs: first catch");
    std::vector<std::vector<std::string>> rows_bugs;
    for (auto& [b, row] : first_catch) {
      if (row[1] != "not caught") row[1] += " s";
      rows_bugs.push_back(row);
    }
    page.table({"seeded bug", "caught after", "op", "property", "first failure"}, rows_bugs);
  }
  if (!fails.empty()) {
    page.text("### Failures (minimal cases)");
    page.table({"op", "backend", "property", "what", "replay"}, fails);
  }
  page.number("cases", cases);
  page.number("failures", failures);
  page.write();
  return json{{"name", "fuzz"}, {"cases", cases}, {"failures", failures}};
}

}  // namespace oplab::report
