#pragma once
// The torchvision peer's named divergences from SPEC (SPEC §8, core/divergence.h).
#include <vector>

#include "core/divergence.h"

namespace oplab {

// Divergences of the `torchvision` backend (torch 1.13 / torchvision 0.14 CPU).
const std::vector<Divergence>& torchvision_divergences();

// grid_sample's equivalent cases (peer/grid_sample_divergences.cpp).
std::optional<Case> grid_sample_3d_nearest_equivalent(const Case& c);

}  // namespace oplab
