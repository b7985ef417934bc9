// Gradient checks from `oplab gradcheck`: per op, input and method, the worst error against
// its tolerance and the points moved, shrunk or skipped at kinks; then which side of each
// kink every backend's gradient takes.
#include "notebooks-cpp/page.h"
#include "reports/sections.h"

namespace oplab::report {

namespace {
std::string num(const json& v) { return v.is_number() ? nb::fmt(v.get<double>()) : v.dump(); }
}  // namespace

json gradcheck_section(const json& g, const std::string& pages) {
  nb::Page page(pages, "gradcheck", "Gradient checks", "Is every backward right, including at the kinks of these ops?");
  std::vector<std::vector<std::string>> rows;
  int64_t checks = 0, fails = 0, moved = 0, skipped = 0, not_evidence = 0;
  RoleFailures by_role;
  for (const json& r : g.value("summary", json::array())) {
    const json v = r.value("verdicts", json::object());
    const int64_t f = v.value("DISAGREE", int64_t(0)) + v.value("ERROR", int64_t(0));
    const int64_t no_evidence = v.value("skipped", int64_t(0));  // e.g. empty tensors: nothing to difference
    not_evidence += no_evidence;
    checks += r.value("checks", int64_t(0)), fails += f;
    by_role.add(role_of(g, json(), r.value("backend", "")), r.value("backend", ""), f);
    moved += r.value("moved", int64_t(0)) + r.value("shrunk", int64_t(0)), skipped += r.value("skipped", int64_t(0));
    rows.push_back({r.value("op", ""), r.value("backend", ""), r.value("input", ""), r.value("method", ""),
                    std::to_string(r.value("checks", 0)), std::to_string(f), std::to_string(no_evidence), num(r.value("worst_error", json(0))),
                    num(r.value("tolerance", json(0))), std::to_string(r.value("moved", 0)), std::to_string(r.value("shrunk", 0)),
                    std::to_string(r.value("skipped", 0))});
  }
  page.answer(std::to_string(checks) + " checks (seed " + g.value("seed", json(0)).dump() + "), " + by_role.sentence() + "; " + std::to_string(moved) + " points moved or steps shrunk off kinks and " + std::to_string(skipped) +
              " skipped, all counted below; " + std::to_string(not_evidence) +
              " checks were no evidence either way (empty tensors), each with its reason in the JSON.");
  page.text("Methods: `fd-projection` (v^T J u by central differences), `fd-jacobian` (full Jacobian on small cases), "
            "`adjoint` (<J x, y> = <x, J^T y>, exact), `vs-ref` (a backend's gradient against the reference's), "
            "`one-sided` (derivatives either side of a kink), and structural checks (`shapes`, `zero-grad`, "
            "`optional-absent`). A finite difference whose step crosses a kink is not evidence: such points are moved, "
            "their step shrunk, or skipped — and counted.");
  page.table({"op", "backend", "input", "method", "checks", "fail", "no evidence", "worst", "tolerance", "moved", "shrunk", "skipped"}, rows);
  std::vector<std::vector<std::string>> sides;
  for (const json& s : g.value("sides", json::array())) {
    std::string which;
    for (const auto& [side, n] : member(s, "sides").items()) which += side + " " + n.dump() + "  ";
    sides.push_back({s.value("op", ""), s.value("backend", ""), s.value("input", ""), s.value("kink", ""), which,
                     std::to_string(s.value("jumps", 0))});
  }
  if (!sides.empty()) {
    page.text("### Which side each backend takes at a kink");
    page.table({"op", "backend", "input", "kink", "gradient equals the derivative from", "forward jumps"}, sides);
  }
  page.number("checks", checks);
  page.number("failures", fails);
  page.write();
  return json{{"name", "gradcheck"}, {"checks", checks}, {"failures", fails}};
}

}  // namespace oplab::report
