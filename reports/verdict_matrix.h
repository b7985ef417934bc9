#pragma once
// The report's first table: one row per backend, one column per op, each cell the campaign's
// verdict on that pair at a glance — a status word (PASS, EXPLAINED, OVER-BUDGET, FAIL, CAUGHT,
// MISSED, DEPARTS; reports/html_finish.h colours them) and the counts — so that a reviewer sees
// which op x backend is clean, which differs by named divergences or float32 flips, and which
// fails, before any detail, in any font. Counts come from the differential records; failures
// from every property's (a cheater is caught by `determinism`). A cell links to the pair's
// failing cases in the Accuracy section, or to its accuracy table.
#include <string>

#include <nlohmann/json.hpp>

namespace oplab::report {

// Markdown: the matrix and its legend; "" when there are no records.
std::string verdict_matrix(const nlohmann::json& records);

// The Accuracy section's heading over one pair's failing cases (the grid's cells link to it).
std::string failing_cases_heading(const std::string& op, const std::string& backend);

// The Accuracy section's title (the link of a cell without failing cases).
extern const char* const kAccuracyTitle;

}  // namespace oplab::report
