#pragma once
// Shared pieces of the per-op glue: core tensors <-> Halide buffers (dimensions reversed:
// NCHW becomes x, y, c, n), and a call context that turns Halide's error handler into a
// C++ exception carrying the message, never an abort.
#include <string>

#include <HalideBuffer.h>

#include "core/case.h"
#include "halide/halide_backend.h"

namespace oplab::halide_glue {

// Views a float tensor as a Halide buffer (no copy); dims are reversed.
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
