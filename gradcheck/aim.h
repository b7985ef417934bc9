#pragma once
// Kink-aimed variants of a case. The case generators aim at the edges SPEC names, but a
// sample lands exactly on a kink only when the numbers happen to be exact; this moves a few
// elements of one input so that one of their kinks lies exactly at the point: a deform sample
// exactly on y = -1 or on a lattice row, a max competitor exactly tied with its winner. The
// per-op finders say where the kinks are (kinks.h), so nothing here names an op.
#include <optional>

#include "core/case.h"

namespace oplab::gradcheck {

// The case with up to `count` elements of `input` moved onto a kink each (verified exactly by
// the finder), or nothing when the input has no kink that can be reached.
std::optional<Case> aim_at_kinks(const Case& c, const std::string& input, uint64_t seed, int count);

}  // namespace oplab::gradcheck
