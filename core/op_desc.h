#pragma once
// One description per op: its inputs (required/optional, differentiable, coordinates) and
// validation that returns the op's typed parameters and output shape. Each op registers its
// description from its own file in core/ops/ (OpRegistrar); checks, generators and reports
// iterate over all_ops() and never name an op themselves.
#include <any>
#include <functional>
#include <string>
#include <typeinfo>
#include <vector>

#include "core/case.h"
#include "core/op_traits.h"

namespace oplab {

struct InputSpec {
  std::string name;
  bool required;
  bool differentiable;
  // Carries positions (boxes, offsets) rather than values: it keeps its sign in magnitude
  // cases, sets the coordinate scale of float32 bounds, and is what flip checks nudge.
  bool coordinate = false;
  // A column of the last dimension that holds integer indices (rois' batch index): kept exact
  // when the inputs are rounded to a kernel's dtype (docs/protocol.md, "Judging by dtype");
  // kIndexTensor: every value is an index (spatial shapes, start offsets).
  int index_column = -1;
  static constexpr int kIndexTensor = -2;
};

// A validated case's typed parameters (the op's *Params struct of core/params.h) and output
// shape: what every backend and check reads instead of the raw JSON params.
struct ValidParams {
  std::any typed;
  Shape output_shape;

  template <class P>
  const P& as() const {
    const P* p = std::any_cast<P>(&typed);
    if (!p) throw std::logic_error(std::string("typed params requested as ") + typeid(P).name() + ", held as " + typed.type().name());
    return *p;
  }
};

struct OpDesc {
  static constexpr const char* kLayer = "op description";
  std::string name;
  int order = 0;  // place in tables and listings (lowest first)
  std::vector<InputSpec> inputs;
  std::function<ValidParams(const Case&)> parse;  // throws InvalidCase (SPEC §7)

  Shape validate(const Case& c) const { return parse(c).output_shape; }
};
using OpRegistrar = OpTraits<OpDesc>::Registrar;

// Wraps an op's parse_* function as OpDesc::parse.
template <class P>
std::function<ValidParams(const Case&)> typed_parser(P (*parse)(const Case&)) {
  return [parse](const Case& c) {
    P p = parse(c);
    Shape out = p.output_shape();
    return ValidParams{std::any(std::move(p)), std::move(out)};
  };
}

const std::vector<OpDesc>& all_ops();            // in display order
const OpDesc& op_desc(const std::string& name);  // throws InvalidCase for an unknown op
std::vector<std::string> op_names();             // in display order

// Whether `input` of `op` carries coordinates (InputSpec::coordinate).
bool is_coordinate_input(const std::string& op, const std::string& input);

// Names of the differentiable inputs that the case supplies: the keys of Result::grads.
std::vector<std::string> grad_inputs(const Case& c);

}  // namespace oplab
