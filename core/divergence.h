#pragma once
// A known, named divergence of a backend from SPEC (SPEC §8). A disagreement with the reference
// counts as a named divergence only when the reference, run on the divergence's equivalent
// case, reproduces the backend's answer: the name is proven, not guessed. A backend states its
// own (Backend::divergences()); checks ask it rather than testing its name.
#include <functional>
#include <optional>
#include <string>

#include "core/case.h"

namespace oplab {

struct Divergence {
  std::string name;         // short id used in test output and reports
  std::string description;  // one line: what the backend does instead
  // When the case is affected: a case on which the reference computes what the backend
  // computes (for the forward, the backward, or both: the comparison says which).
  std::function<std::optional<Case>(const Case&)> peer_equivalent;
  // Or: the backend raises an error on such cases instead of computing (a defect of it).
  std::function<bool(const Case&)> peer_raises;
  // The smallest case that shows it, as case JSON (SPEC §1): what `oplab repro NAME` writes a
  // standalone script from, and what the test of every divergence runs (tests/test_repro.cpp).
  std::string example;
};

}  // namespace oplab
