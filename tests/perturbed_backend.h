#pragma once
// A test double for the comparison layer's bounds: the reference's answer with `delta` added
// to one output element, as a float32 kernel's rounding might move it.
#include <cstddef>
#include <memory>
#include <string>

#include "core/backend.h"
#include "reference/ref_backend.h"

namespace oplab {

class PerturbedBackend : public Backend {
 public:
  PerturbedBackend(double delta, size_t element) : delta_(delta), element_(element) {}
  std::string name() const override { return "perturbed"; }
  std::string description() const override { return "test double: the reference, one output element moved"; }
  // Held to the kernel-rounding rule (compare/flip_rule.h), the one whose bound the tests
  // derive by hand: a float32 kernel with the reference's geometry, as the Halide kernels.
  bool is_float32() const override { return true; }
  bool geometry_as_reference() const override { return true; }
  using Backend::run;
  Result run(const Case& c, const ValidParams&) override {
    Result r = ref_->run(c);
    r.outputs.at("output").data.at(element_) += delta_;
    return r;
  }

 private:
  std::unique_ptr<Backend> ref_ = make_ref_backend();
  double delta_;
  size_t element_;
};

}  // namespace oplab
