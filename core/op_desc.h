#pragma once
// One description per op: its inputs (required/optional, differentiable), parameter
// defaults, and validation that returns the output shape. Checks, generators and reports
// iterate over all_ops() and never name an op themselves.
#include <functional>
#include <string>
#include <vector>

#include "core/case.h"

namespace oplab {

struct InputSpec {
  std::string name;
  bool required;
  bool differentiable;
};

struct OpDesc {
  std::string name;
  std::vector<InputSpec> inputs;
  json param_defaults;                                // every parameter with its default
  std::function<Shape(const Case&)> validate;         // throws InvalidCase; returns output shape
};

const std::vector<OpDesc>& all_ops();
const OpDesc& op_desc(const std::string& name);  // throws InvalidCase for an unknown op

// Names of the differentiable inputs that the case supplies: the keys of Result::grads.
std::vector<std::string> grad_inputs(const Case& c);

}  // namespace oplab
