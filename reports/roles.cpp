// Roles of backends in the report's answers: a failure of an implementation is a finding, a
// failure of a seeded bug means the harness caught it, a study variant's is a known departure.
#include "reports/sections.h"

namespace oplab::report {

std::string role_of(const json& doc, const json& record, const std::string& backend) {
  if (record.is_object() && record.contains("role")) return record["role"].get<std::string>();
  const json& roles = member(doc, "backend_roles");
  auto it = roles.find(backend);
  return it == roles.end() ? "implementation" : it->get<std::string>();
}

void RoleFailures::add(const std::string& role, const std::string& backend, int64_t n) {
  if (role == "seeded-bug") {
    seeded_bug += n;
    per_seeded_bug[backend] += n;
  } else if (role == "study-variant") {
    study_variant += n;
  } else {
    implementation += n;
  }
}

std::string RoleFailures::sentence() const {
  int64_t caught = 0;
  for (const auto& [name, n] : per_seeded_bug) caught += n > 0;
  std::string s = std::to_string(implementation) + " failures of implementations";
  if (!per_seeded_bug.empty())
    s += "; seeded bugs caught: " + std::to_string(caught) + " of " + std::to_string(per_seeded_bug.size()) + " (" +
         std::to_string(seeded_bug) + " failing checks)";
  if (study_variant) s += "; " + std::to_string(study_variant) + " departures of the study variants";
  return s;
}

}  // namespace oplab::report
