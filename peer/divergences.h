#pragma once
// The torchvision peer's named divergences from SPEC (SPEC §8, core/divergence.h).
#include <vector>

#include "core/divergence.h"

namespace oplab {

// Divergences of the `torchvision` backend (torch 1.13 / torchvision 0.14 CPU).
const std::vector<Divergence>& torchvision_divergences();

}  // namespace oplab
