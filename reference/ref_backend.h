#pragma once
#include <memory>

#include "core/backend.h"

namespace oplab {
// The `ref` backend: the double-precision reference of every op.
std::unique_ptr<Backend> make_ref_backend();
}  // namespace oplab
