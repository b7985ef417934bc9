#pragma once
// Names of the edge situations (the common ones, then the op's own fuzz traits') a case exercises (a sample exactly at y = -1, an empty bin,
// a reversed box, sf < 1, ...). Suites count them to show, not assume, that the generators
// reach the edges SPEC names.
#include <set>
#include <string>

#include "core/case.h"

namespace oplab::fuzz {

std::set<std::string> case_features(const Case& c);


}  // namespace oplab::fuzz
