#pragma once
// `oplab report`: reads what the checks wrote under one folder and builds the design-review
// report: OUT/index.html (self-contained: SVG figures inlined), OUT/index.md (its Markdown
// twin, figures linked), OUT/report.json (the summary, schema in docs/report-schema.json),
// and one page per section under OUT/pages/.
//
// Inputs looked for under FROM (each optional; a missing one is named in the report):
//   campaign/summary.json    oplab campaign     accuracy per op x backend (its records)
//   gradcheck.json           oplab gradcheck    gradient checks
//   fuzz/                    oplab fuzz         campaign summaries (*.json with "records")
//   bench.json               oplab bench        performance
//   notebooks/<name>/page.json + page.md + *.svg   study notebooks
#include <string>

#include <nlohmann/json.hpp>

namespace oplab::report {

struct Options {
  std::string from = "out";
  std::string out = "out/report";
  std::string command;  // the command line that produced the inputs (for the reproduction page)
};

// Builds the report; returns report.json's content. Throws std::runtime_error on a broken input.
nlohmann::json build(const Options& opt);

}  // namespace oplab::report
