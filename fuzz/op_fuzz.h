#pragma once
// What the fuzz layer knows of one op: its edge-aimed case generator, the SPEC §7 rules its
// invalid cases break, the edge situations a case exercises, how permutations of what it treats alike act on it, and the inputs it is
// linear in. Each op registers them from its own file in fuzz/ops/; the generic generators,
// features and properties ask through op_fuzz(op) and never test an op's name.
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "core/case.h"
#include "core/op_traits.h"

namespace oplab::fuzz {

// Breaks one rule of SPEC §7 in a valid case.
using Mutation = std::function<void(Case&)>;

// A case with relabelled batch/channel/roi indices, and how each tensor of the original
// result maps onto the relabelled one ("outputs.output", "grads.input", ...).
struct Permuted {
  Case c;
  std::function<Tensor(const std::string& key, const Tensor&)> map;
};

struct OpFuzz {
  static constexpr const char* kLayer = "fuzz";
  rc::Gen<Case> (*gen)() = nullptr;               // valid cases aimed at the op's edges
  std::vector<Mutation> (*invalid)() = nullptr;   // the op's own rules, each broken alone
  void (*features)(const Case&, std::set<std::string>&) = nullptr;
  Permuted (*permute)(const Case&) = nullptr;     // a relabelling that must commute with the op
  // Whether the output is linear in the feature input for this case (max modes are not).
  bool (*linear_in_input)(const Case&) = nullptr;
  // Inputs in which the op is positively homogeneous of degree one (f(x) = J x at fixed other
  // inputs), so that <f(x), y> = <x, J^T y> holds: the adjoint property checks each.
  std::vector<std::string> adjoint_inputs;
  // Inputs the linearity property varies when linear_in_input holds, each alone (the others
  // fixed); empty means {"input"}, the feature map of the ops that have one.
  std::vector<std::string> linear_inputs = {};
  // The feature map (its values flow through IEEE arithmetic): gen_case sets one of its
  // elements NaN or +-Inf in about one case in eight. Empty: none.
  std::string feature_map = "input";
};
using OpFuzzRegistrar = OpTraits<OpFuzz>::Registrar;
inline const OpFuzz& op_fuzz(const std::string& op) { return OpTraits<OpFuzz>::of(op); }

// Shared by every op's linearity trait.
inline bool always_linear(const Case&) { return true; }

}  // namespace oplab::fuzz
