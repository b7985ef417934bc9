// Invalid cases: a valid case of the op (gen_case) with exactly one rule of SPEC §7 broken,
// chosen by RapidCheck (so it shrinks, towards the first mutation of the list and the
// simplest underlying case). The `rejects` property holds every backend to refusing them
// with the oracle's one-line error.
#include <functional>

#include "core/op_desc.h"
#include "core/params.h"
#include "fuzz/gen_values.h"
#include "fuzz/generators.h"
#include "fuzz/op_fuzz.h"

namespace oplab::fuzz {

namespace {

Shape with_last(Shape s, int64_t delta) {
  s.back() += delta;
  return s;
}

// The op's first input (its feature map: "input", or ms_deform_attn's "value").
std::string first_input(const Case& c) { return op_desc(c.op).inputs.front().name; }

// Mutations every op can suffer.
std::vector<Mutation> common_mutations() {
  return {
      [](Case& c) { c.params["bogus"] = 1; },                          // unknown parameter
      [](Case& c) { c.inputs["bogus"] = Tensor({1}, 0.5); },           // unknown input
      [](Case& c) { c.inputs.erase(first_input(c)); },                 // missing input
      [](Case& c) {                                                    // wrong rank: spatial dims flattened
        const Shape s = c.in(first_input(c)).shape;
        int64_t rest = 1;
        for (size_t i = 2; i < s.size(); ++i) rest *= s[i];
        c.inputs[first_input(c)] = Tensor({s[0], s[1] * rest}, 0.5);
      },
      [](Case& c) {                                                    // grad_output of the wrong shape
        if (c.grad_output) c.grad_output = Tensor(with_last(c.grad_output->shape, 1), 0.25);
      },
  };
}

}  // namespace

rc::Gen<Case> gen_invalid_case(const std::string& op) {
  const rc::Gen<Case> valid = gen_case(op);
  std::vector<Mutation> mutations = common_mutations();
  const std::vector<Mutation> specific = op_fuzz(op).invalid();
  // The op's own rules first: shrinking moves towards index 0.
  mutations.insert(mutations.begin(), specific.begin(), specific.end());
  return rc::gen::exec([valid, mutations] {
    Case c = *valid;
    const size_t which = size_t(*rc::gen::inRange<int>(0, int(mutations.size())));
    mutations[which](c);
    return c;
  });
}

}  // namespace oplab::fuzz
