#pragma once
// Which tolerance and which named divergences apply to a backend: the one place where a
// backend's precision plugs into the fuzz properties. The double backends (ref, torchvision
// in float64, the study and seeded-bug variants built on the reference) get the default
// Tolerance (1e-10 relative, README "Agreement"). A float32 backend (Backend::is_float32():
// halide-cpu, -cuda, -opencl) gets the float rule of tolerance.cpp in the metamorphic properties
// and the per-element error bound of compare/float_compare.h in the differential one;
// register_tolerance() overrides the rule for one backend by name.
#include <string>
#include <vector>

#include "core/backend.h"
#include "compare/differential.h"
#include "peer/divergences.h"

namespace oplab::compare {

Tolerance tolerance_for(const Backend& b);
// Two backends compared with each other: the looser of their tolerances.
Tolerance tolerance_between(const Backend& a, const Backend& b);
void register_tolerance(const std::string& backend_name, const Tolerance& tol);

// What the backend is known to do differently from SPEC (only the torchvision peer has any).
const std::vector<Divergence>& divergences_for(const Backend& b);

}  // namespace oplab::compare
