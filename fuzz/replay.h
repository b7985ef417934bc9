#pragma once
// Re-running a saved case: a case file (SPEC §1; `oplab eval` reads the same) or a failure
// record of a campaign (fuzz/campaign_log.h), on any backend. A record brings its property,
// backend and oracle along; each can be overridden. A plain case is judged by every property
// that applies to it (rejects for an invalid case, the others for a valid one).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend.h"
#include "fuzz/properties.h"

namespace oplab::fuzz {

struct ReplayOptions {
  std::string file;
  std::vector<std::string> backends;    // empty: the record's backend, or ref
  std::string against;                  // empty: the record's, or ref
  std::vector<std::string> properties;  // empty: the record's property, or every one that applies
  Isolation isolation;
};

struct ReplayCheck {
  std::string backend, property;
  CheckResult result;
};

struct ReplayOutcome {
  Case the_case;
  nlohmann::json record;  // null for a plain case file
  std::vector<ReplayCheck> checks;
  bool still_fails = false;
};

// Throws FormatError for a file that is neither a case nor a failure record, and
// std::invalid_argument for an unknown or unavailable backend or an unknown property.
ReplayOutcome replay_file(const ReplayOptions& opt, Registry& registry);

}  // namespace oplab::fuzz
