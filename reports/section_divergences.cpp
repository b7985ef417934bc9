// The divergence atlas of a campaign: every disagreement of a peer (torchvision, onnxruntime,
// opencv) or study variant that one of its named divergences explains, proven on the
// divergence's equivalent case (core/divergence.h); per op x backend how many, per divergence
// what the peer does and how often the campaign met it. docs/divergences.md has the smallest
// case of each.
#include <map>
#include <set>

#include "notebooks-cpp/page.h"
#include "peer/onnxruntime_backend.h"
#include "peer/opencv_backend.h"
#include "peer/divergences.h"
#include "reports/sections.h"

namespace oplab::report {

namespace {

// "name (forward only)" and "a+b" as the campaign records them -> the names.
std::vector<std::string> names_of(const std::string& key) {
  std::string k = key.substr(0, key.find(" ("));
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t plus; (plus = k.find('+', from)) != std::string::npos; from = plus + 1) out.push_back(k.substr(from, plus - from));
  out.push_back(k.substr(from));
  return out;
}

std::string description_of(const std::string& name) {
  for (const auto* list : {&torchvision_divergences(), &onnxruntime_divergences(), &opencv_divergences()})
    for (const Divergence& d : *list)
      if (d.name == name) return d.description;
  return "";
}

}  // namespace

json divergences_section(const json& campaign, const std::string& pages) {
  nb::Page page(pages, "divergences", "Divergence atlas",
                "Where do the peers depart from the spec, and is every departure a named, proven divergence?");
  std::map<std::pair<std::string, std::string>, int64_t> cell;  // (op, backend) -> cases
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> per;  // (name, backend, op)
  std::map<std::pair<std::string, std::string>, int64_t> unexplained;       // DISAGREE + ERROR
  std::set<std::string> ops, backends;
  int64_t total = 0;
  for (const json& r : campaign.value("records", json::array())) {
    const std::string op = r.value("op", ""), b = r.value("backend", "");
    const json& d = member(r, "divergences");
    const json& v = member(r, "verdicts");
    const int64_t bad = v.value("DISAGREE", int64_t(0)) + v.value("ERROR", int64_t(0));
    if (d.empty() && bad == 0) continue;
    ops.insert(op), backends.insert(b);
    unexplained[{op, b}] += bad;
    for (const auto& [key, n] : d.items()) {
      cell[{op, b}] += n.get<int64_t>();
      total += n.get<int64_t>();
      for (const std::string& name : names_of(key)) per[{name, b, op}] += n.get<int64_t>();
    }
  }
  const json options = campaign.value("options", json::object());
  const int64_t cases = options.value("cases", int64_t(0));
  // Unexplained disagreements of a seeded bug are the bug caught, of a study variant its known
  // departure: only those of implementations are findings.
  const json roles = options.value("backend_roles", json::object());
  int64_t open = 0, findings = 0;
  for (const auto& [k, n] : unexplained) {
    open += n;
    if (roles.value(k.second, std::string("implementation")) == "implementation") findings += n;
  }
  page.answer(std::to_string(total) + " disagreements explained by " + std::to_string(per.size()) +
              " named divergences (op x backend x name) in a campaign of " + std::to_string(cases) + " cases per op; " +
              std::to_string(findings) + " disagreements or errors of implementations that no divergence explains " +
              "(findings), and " + std::to_string(open - findings) +
              " of seeded bugs and study variants (caught bugs and their known departures).");
  page.text("A divergence counts only when the reference, run on the divergence's equivalent case, reproduces the "
            "peer's answer (double agreement for float64 peers, the float32 bound for float32 ones), or when the peer "
            "raises on a case it is known to refuse. The smallest case of each is in docs/divergences.md.");
  std::vector<std::vector<std::string>> rows;
  for (const auto& [k, n] : per) {
    const auto& [name, b, op] = k;
    rows.push_back({op, b, name, std::to_string(n), nb::md_plain(description_of(name))});
  }
  page.table({"op", "backend", "divergence", "cases", "what the backend does"}, rows);
  // Backend x op counts (a table, not a heat map: its labels stay readable at any count, and it
  // scrolls inside its box). Seeded bugs are left out: their failures are the bug caught, shown
  // in the verdict grid.
  std::vector<std::string> ol(ops.begin(), ops.end());
  std::vector<std::vector<std::string>> matrix;
  for (const std::string& b : backends) {
    if (roles.value(b, std::string("implementation")) == "seeded-bug") continue;
    std::vector<std::string> row{b};
    for (const std::string& op : ol) {
      const int64_t n = cell.count({op, b}) ? cell[{op, b}] : 0, u = unexplained.count({op, b}) ? unexplained[{op, b}] : 0;
      row.push_back(n == 0 && u == 0 ? "·" : std::to_string(n) + (u ? " (+" + std::to_string(u) + " unexplained)" : ""));
    }
    matrix.push_back(row);
  }
  std::vector<std::string> header{"backend"};
  header.insert(header.end(), ol.begin(), ol.end());
  page.text("### Divergences per backend and op (cases)\n\nCases explained by a named divergence; in brackets those "
            "no divergence explains (for a study variant, its known departure). Seeded bugs are left out.");
  page.table(header, matrix);
  page.number("explained", total);
  page.number("unexplained", open);
  page.number("findings", findings);
  page.write();
  return json{{"name", "divergences"}, {"explained", total}, {"unexplained", open}, {"findings", findings}};
}

}  // namespace oplab::report
