#pragma once
// Which tolerance and which named divergences apply to a backend: the one place where a
// backend's precision plugs into the metamorphic properties (SPEC §15: an identity's
// tolerance comes from the backend's dtype, never from double). The tolerance follows what the
// backend declares for the op: its dtype (Backend::dtype) and the type it accumulates in
// (Backend::accumulation). float64 backends (ref, torchvision in float64, the study and
// seeded-bug variants built on the reference) get the default Tolerance (1e-10 relative,
// README "Agreement"); a float32, float16 or bfloat16 one the rule of tolerance.cpp. The
// differential property judges every non-float64 backend by the per-element bound of
// compare/float_compare.h instead. register_tolerance() overrides the rule for one backend.
#include <string>
#include <vector>

#include "core/backend.h"
#include "compare/differential.h"
#include "peer/divergences.h"

namespace oplab::compare {

// The tolerance of an identity both of whose sides `b` computes in its dtype for `op`.
Tolerance tolerance_for(const Backend& b, const std::string& op);
// The same from the types alone (what tolerance_for uses; for tests and docs).
Tolerance tolerance_for_types(DType dtype, DType accumulation);
// Two backends compared with each other: the looser of their tolerances.
Tolerance tolerance_between(const Backend& a, const Backend& b, const std::string& op);
void register_tolerance(const std::string& backend_name, const Tolerance& tol);

// What the backend is known to do differently from SPEC (only the torchvision peer has any).
const std::vector<Divergence>& divergences_for(const Backend& b);

}  // namespace oplab::compare
