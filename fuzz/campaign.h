#pragma once
// A fuzz campaign: for case i = 0, 1, 2, ... of every selected op (round robin), the cases
// this shard owns are drawn (fuzz/seeds.h) and every selected property (fuzz/properties.h)
// judges them on every selected backend. A failure is shrunk by RapidCheck (fuzz/shrink.h)
// and saved, replayable, with its record (fuzz/campaign_log.h). In-process backends are
// evaluated in a forked child with a timeout (fuzz/isolate.h), so a crash or a hang is a
// recorded failure, not the end of the campaign. It stops after --cases per op, after --time,
// at the first failure (unless keep_going), or at Ctrl-C, always leaving its summary behind.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend.h"
#include "fuzz/isolate.h"
#include "fuzz/seeds.h"

namespace oplab::fuzz {

struct CampaignOptions {
  std::vector<std::string> ops;         // op names, or {"all"}
  std::vector<std::string> backends;    // subjects, or {"all"} (every backend that can run here)
  std::string against = "ref";          // the oracle of the differential property
  std::vector<std::string> properties;  // empty or {"all"}: every property
  std::optional<double> time_s;         // stop starting cases after this long
  std::optional<int64_t> cases;         // case indices 0..cases-1 per op (split among shards)
  uint64_t seed = 1;
  Shard shard;
  std::string out = "out/fuzz";
  bool keep_going = false;              // false: stop after the first failure (shrunk and saved)
  Isolation isolation;
  // true: the evaluations a case's properties will ask are sent to each backend's worker in one
  // batch (fuzz/prefetch.h); false: one round trip each, as they are asked. The verdicts are
  // the same either way; false is there to measure what batching buys.
  bool batch = true;
  double shrink_time_s = 30;            // per failure; 0: no shrinking (the case as drawn is saved)
  std::string mode = "fuzz";            // "campaign" for `oplab campaign`: readers tell the two apart
  bool oracle_excluded = false;         // under backends {"all"}: the oracle is no subject of its own
  bool quiet_expected_failures = false; // no per-case lines for seeded bugs' and study variants' failures
  bool live_progress = false;           // a terminal: one line rewritten in place
  double progress_every_s = 10;         // otherwise: a plain line this often
};

struct FailureSummary {
  std::string id, op, backend, property, detail;
  std::string record_path, case_path;
  nlohmann::json minimal_case;
  double found_after_s = 0;  // campaign time when the failing case was first evaluated
  int64_t found_after_cases = 0;  // cases the campaign had started by then, itself included
  double shrink_s = 0;
  bool shrunk = false;        // shrunk to the end (not interrupted)
  int64_t occurrences = 1;    // the same failure (op, backend, property, minimal case) met this often
};

struct CampaignResult {
  int64_t cases = 0;
  int64_t checks = 0;
  std::vector<FailureSummary> failures;
  double seconds = 0;
  double shrink_seconds = 0;  // of `seconds`, the time spent shrinking failures
  bool interrupted = false;
  nlohmann::json summary;  // what summary.json holds (its "records": fuzz/campaign_records.h)
};

// Throws std::invalid_argument with a one-line message for options that name an unknown op,
// backend or property, BackendUnavailable for a named backend (or --against) that cannot run
// here. Output paths that cannot be written throw std::runtime_error.
CampaignResult run_campaign(const CampaignOptions& opt, Registry& registry, std::ostream& progress);

}  // namespace oplab::fuzz
