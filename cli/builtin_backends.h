#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "core/backend.h"

namespace oplab {
// Every backend built into this binary, in the order `oplab backends` lists them.
Registry& builtin_backends();

// Failures of the backends a command ran, told apart by role (core/backend.h), and the exit
// status they give: failures of implementations always count; those of study and seeded-bug
// variants only when the user named the backend (under `--backend all` they are expected:
// a seeded bug failing means it was caught).
struct FailureTally {
  int64_t implementation = 0, study_variant = 0, seeded_bug = 0;
  int64_t counted = 0;  // the ones that decide the exit status
  void add(const Backend* b, bool named_explicitly, int64_t n = 1);
  std::string describe() const;  // "findings: 0 of implementations; expected: 2 on seeded bugs (caught), 1 on study variants (departures)"
  nlohmann::json to_json() const;
};
}  // namespace oplab
