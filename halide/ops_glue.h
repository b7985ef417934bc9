#pragma once
// Per-op glue of the Halide backends. Each file in glue/ evaluates one op on the kernels of a
// device and registers itself with a file-scope HalideOpRegistrar, so adding an op's kernels
// means adding kernels/<op>.cmake, generators/<op>_generator.cpp and glue/<op>.cpp.
#include <functional>
#include <optional>
#include <string>

#include "core/case.h"
#include "halide/halide_backend.h"

namespace oplab::halide_glue {

struct HalideOp {
  std::string op;
  // Evaluates a validated case (forward, and backward when it has grad_output).
  Result (*run)(const Case& c, HalideDevice device) = nullptr;
  // Why this valid case cannot be evaluated by these kernels (e.g. a mode not built), or empty.
  std::optional<std::string> (*unsupported)(const Case& c) = nullptr;
  // For the benchmark: converts the case to float32 buffers once and returns a call of the
  // kernels alone (the forward, or the whole backward when `backward`). Optional.
  std::function<void()> (*prepare)(const Case& c, HalideDevice device, bool backward) = nullptr;
};

struct HalideOpRegistrar {
  explicit HalideOpRegistrar(HalideOp op);
};

const HalideOp* find_halide_op(const std::string& op);  // nullptr when no kernels exist

}  // namespace oplab::halide_glue
