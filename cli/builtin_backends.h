#pragma once
#include "core/backend.h"

namespace oplab {
// Every backend built into this binary, in the order `oplab backends` lists them.
Registry& builtin_backends();
}  // namespace oplab
