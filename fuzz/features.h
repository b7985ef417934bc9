#pragma once
// Names of the edge situations a case exercises (a sample exactly at y = -1, an empty bin,
// a reversed box, sf < 1, ...). Suites count them to show, not assume, that the generators
// reach the edges SPEC names.
#include <set>
#include <string>

#include "core/case.h"

namespace oplab::fuzz {

std::set<std::string> case_features(const Case& c);

// The parameter that drives float32 error in a case, for plots of error against it:
// deform_conv2d: max |offset| (px); RoI ops: the longest box side (feature px); interpolate:
// the largest output/input size ratio.
struct DrivingParameter {
  std::string name;
  double value = 0;
};
DrivingParameter driving_parameter(const Case& c);

}  // namespace oplab::fuzz
