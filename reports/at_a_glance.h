#pragma once
// The report's first screen, in words a reviewer reads before anything else: the findings (none,
// or which op x backend and how many cases), whether every seeded bug was caught, the worst error
// of a reduced-precision kernel against its own bound, and ours against the fastest peer per op
// (from the benchmark run beside the campaign). Markdown, as a block quote the stylesheet frames.
#include <string>

#include <nlohmann/json.hpp>

namespace oplab::report {

// `campaign`: the campaign's summary.json, or null; `bench`: bench.json, or null.
std::string at_a_glance(const nlohmann::json& campaign, const nlohmann::json& bench);

}  // namespace oplab::report
