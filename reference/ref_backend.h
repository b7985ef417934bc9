#pragma once
#include <memory>

#include "core/backend.h"
#include "core/op_desc.h"
#include "core/op_traits.h"

namespace oplab {
// The `ref` backend: the double-precision reference of every op.
std::unique_ptr<Backend> make_ref_backend();

// How the reference evaluates one op: registered next to the op's reference (reference/<op>.cpp).
struct RefOp {
  static constexpr const char* kLayer = "reference";
  Result (*run)(const Case&, const ValidParams&) = nullptr;
};
using RefOpRegistrar = OpTraits<RefOp>::Registrar;
}  // namespace oplab
