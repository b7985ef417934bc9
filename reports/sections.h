#pragma once
// One function per report section: each builds a notebook-style Page (question, one-line
// answer with the numbers, tables, gnuplot figures) under PAGES/<name>/ from the JSON a check
// wrote, and returns {"name", "title", "answer", ...} for report.json.
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace oplab::report {

using json = nlohmann::json;

json accuracy_section(const json& campaign, const std::string& pages);
// The divergence atlas of the same campaign: named divergences per op x backend (peers, variants).
json divergences_section(const json& campaign, const std::string& pages);
json performance_section(const json& bench, const std::string& pages);
json gradcheck_section(const json& gradcheck, const std::string& pages);
json fuzz_section(const json& fuzz_summaries, const std::string& pages);
json cuda_kernels_section(const json& kernels, const std::string& pages);  // halide/ptx_check summaries
json machine_section(const json& inputs, const std::string& pages, const std::string& command);

// j[key] when present, else an empty object: safe to iterate with .items() (a temporary from
// json::value() would die before the loop body runs).
inline const json& member(const json& j, const char* key) {
  static const json empty = json::object();
  auto it = j.find(key);
  return it == j.end() ? empty : *it;
}

// A record's failing checks: its DISAGREE and ERROR verdicts (compare/verdict.h), the count every
// section, the grid and the first screen mean by "failing".
inline int64_t failing_checks(const json& record) {
  const json& v = member(record, "verdicts");
  return v.value("DISAGREE", int64_t(0)) + v.value("ERROR", int64_t(0));
}

// The role of a backend (core/backend.h) as the JSON that mentions it records it: a record's
// own "role", else the document's "backend_roles" map; "implementation" when neither says.
std::string role_of(const json& doc, const json& record, const std::string& backend);

// Failures counted by role, for the one-line answers: findings (implementations) are told
// apart from seeded bugs the harness caught and from the study variants' known departures.
struct RoleFailures {
  int64_t implementation = 0, seeded_bug = 0, study_variant = 0;
  std::map<std::string, int64_t> per_seeded_bug;  // backend -> failures (caught when > 0)
  void add(const std::string& role, const std::string& backend, int64_t n);
  std::string sentence() const;  // "0 failures of implementations; 5 seeded bugs caught (...); 12 study-variant departures"
};

// A page that says an input was not found, so the report never silently lacks a section.
json missing_section(const std::string& name, const std::string& title, const std::string& what,
                     const std::string& pages);

}  // namespace oplab::report
