#pragma once
// Shared pieces of the per-op glue: core tensors <-> Halide buffers (dimensions reversed:
// NCHW becomes x, y, c, n), and a call context that turns Halide's error handler into a
// C++ exception carrying the message, never an abort.
#include <string>
#include <vector>

#include <HalideBuffer.h>

#include "core/case.h"
#include "halide/halide_backend.h"

namespace oplab::halide_glue {

// Wraps host memory as a Halide buffer (no copy), marked host-dirty: the host copy is the
// truth, so a GPU pipeline copies it to the device on first use. (Unmarked, the runtime takes
// the device copy as current and the kernels read uninitialised device memory.)
template <class T>
Halide::Runtime::Buffer<T> host_buffer(T* data, const std::vector<int>& sizes) {
  Halide::Runtime::Buffer<T> b(data, sizes);
  b.set_host_dirty();
  return b;
}

// The int32 that a Halide buffer extent or a kernel parameter takes. Throws Unsupported naming
// `what` rather than narrow a larger value (3e9 would become negative). Validation keeps every
// size of a valid case within int32 (SPEC §7, core/ops/checks.h), so this guards the glue
// against a case that reached it another way.
int to_int32(int64_t v, const char* what);

// Views a float tensor as a Halide buffer (no copy, host-dirty); dims are reversed. Also
// installs the error handler that fills CallContext.
Halide::Runtime::Buffer<float> view(TensorF& t);

// Passed as user_context to every pipeline; collects the error message.
struct CallContext {
  std::string error;
};

// Throws std::runtime_error("<what>: <Halide's message>") when a pipeline returned non-zero.
void check(int status, const CallContext& ctx, const std::string& what);

// After a call: brings outputs back from the GPU (no-op on the CPU) and frees device memory.
void finish(HalideDevice device, Halide::Runtime::Buffer<float>& out);
void release(Halide::Runtime::Buffer<float>& buf);

}  // namespace oplab::halide_glue
