#pragma once
// The double reference behind the plugin ABI (include/oplab/plugin.h), for the seeded cheaters
// (variants/cheat_*.cpp): kernels that give the reference's numbers and cheat the judge some
// other way, called through the ABI exactly as a loaded plugin is (its buffers, its checks).
#include <cstddef>
#include <cstdint>

#include "oplab/plugin.h"

namespace oplab {

// Reads the call's params and float64 buffers as a case, runs the reference, writes its output
// (and gradients) into `out` and `grads` (the call's own, or a kernel's scratch copies of them).
// OPLAB_OK, or OPLAB_FAILED with the reason in `message`.
int32_t abi_reference(const oplab_call_v1* call, oplab_tensor_v1* out, oplab_tensor_v1* grads, char* message,
                      size_t message_size);

// The float64 roi_align declaration the cheaters share (forward and backward).
extern const oplab_op_v1 kCheaterOps[1];

}  // namespace oplab
