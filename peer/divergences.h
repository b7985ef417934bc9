#pragma once
// Known, named divergences of a peer from SPEC (SPEC §8). A disagreement between a peer
// and the reference counts as a named divergence only when the reference, run on the
// divergence's equivalent case, reproduces the peer's answer: the name is proven, not guessed.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/case.h"

namespace oplab {

struct Divergence {
  std::string name;         // short id used in test output and reports
  std::string description;  // one line: what the peer does instead
  // When the case is affected: a case on which the reference computes what the peer computes
  // (for the forward, the backward, or both: the comparison says which).
  std::function<std::optional<Case>(const Case&)> peer_equivalent;
  // Or: the peer raises an error on such cases instead of computing (a peer defect).
  std::function<bool(const Case&)> peer_raises;
};

// Divergences of the `torchvision` backend (torch 1.13 / torchvision 0.14 CPU).
const std::vector<Divergence>& torchvision_divergences();

}  // namespace oplab
