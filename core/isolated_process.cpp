#include "core/isolated_process.h"

namespace oplab {

namespace {
bool isolated = false;  // set in a forked child only; the parent's copy stays false
}

void mark_isolated_process() { isolated = true; }
bool in_isolated_process() { return isolated; }

}  // namespace oplab
