#pragma once
// The report's first table: one row per backend, one column per op, each cell the campaign's
// verdict on that pair at a glance (colour, counts), so that a reviewer sees which op x backend
// is green, which differs by named divergences or float32 flips, and which fails, before any
// detail. Built from the campaign's differential records (fuzz/campaign_records.h).
#include <string>

#include <nlohmann/json.hpp>

namespace oplab::report {

// Markdown: the matrix and its legend; "" when there are no records.
std::string verdict_matrix(const nlohmann::json& records);

}  // namespace oplab::report
