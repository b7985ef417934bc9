#pragma once
// What a standalone reproduction shows (core/repro.h), built and checked before a script is
// written: the one judge (compare/judge.h) must still find the claim on the case — a named
// divergence on its smallest case (Divergence::example), a failure record's disagreement —
// else nothing is written. The script's threshold is set between the library's distance from
// the spec and from the claimed values, as measured now.
#include <stdexcept>
#include <string>

#include "core/backend.h"

namespace oplab {

// The case no longer shows the claim (the judge's verdict says what it shows instead).
struct ReproNotShown : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Divergence `d` of backend `b` on its example.
ReproRequest divergence_repro(Backend& ref, Backend& b, const Divergence& d, const std::string& command);

// A failure found on `b` (a record: its id, case and detail).
ReproRequest failure_repro(Backend& ref, Backend& b, const Case& c, const std::string& id, const std::string& detail,
                           const std::string& command);

}  // namespace oplab
