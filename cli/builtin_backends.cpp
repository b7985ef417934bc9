#include "cli/builtin_backends.h"

#include "reference/ref_backend.h"

namespace oplab {

Registry& builtin_backends() {
  static Registry* registry = [] {
    auto* r = new Registry;  // lives for the whole process: backends may own child processes
    r->add(make_ref_backend());  // the oracle; every other backend registers itself (core/backend.h)
    for (BackendFactory f : registered_backend_factories()) r->add(f());
    return r;
  }();
  return *registry;
}

void FailureTally::add(const Backend* b, bool named_explicitly, int64_t n) {
  const BackendRole role = b ? b->role() : BackendRole::Implementation;
  switch (role) {
    case BackendRole::Implementation: implementation += n; break;
    case BackendRole::StudyVariant: study_variant += n; break;
    case BackendRole::SeededBug: seeded_bug += n; break;
  }
  if (role == BackendRole::Implementation || named_explicitly) counted += n;
}

std::string FailureTally::describe() const {
  // A finding is what the README's verdicts call one: an implementation's DISAGREE or ERROR, or
  // its record over the flip budget. Seeded bugs and study variants fail by design.
  return "findings: " + std::to_string(implementation) + " of implementations; expected: " + std::to_string(seeded_bug) +
         " on seeded bugs (caught), " + std::to_string(study_variant) + " on study variants (departures)";
}

nlohmann::json FailureTally::to_json() const {
  return {{"implementation", implementation}, {"seeded_bug", seeded_bug}, {"study_variant", study_variant},
          {"counted_for_exit", counted}};
}

}  // namespace oplab
