#include "halide/halide_glue.h"

#include <HalideRuntime.h>

#include <limits>
#include <mutex>
#include <stdexcept>

#include "core/limits.h"

namespace oplab::halide_glue {

namespace {

// Halide calls this instead of aborting; the message lands in the caller's context.
void on_error(void* user_context, const char* msg) {
  if (auto* ctx = static_cast<CallContext*>(user_context)) {
    std::string m = msg ? msg : "unknown Halide error";
    while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
    for (char& ch : m)
      if (ch == '\n') ch = ' ';
    if (ctx->error.empty()) ctx->error = m;
  }
}

}  // namespace

int to_int32(int64_t v, const char* what) {
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
    throw Unsupported(std::string("the Halide kernels take ") + what + " as an int32, and " + std::to_string(v) +
                      " does not fit");
  return int(v);
}

Halide::Runtime::Buffer<float> view(TensorF& t) {
  static std::once_flag once;
  std::call_once(once, [] { halide_set_error_handler(on_error); });
  // Halide keeps extents and strides as int32: the largest stride spans the other dims.
  (void)to_int32(shape_span(t.shape), "a buffer's index span");
  std::vector<int> sizes;
  for (auto d = t.shape.rbegin(); d != t.shape.rend(); ++d) sizes.push_back(to_int32(*d, "a buffer extent"));
  if (sizes.empty()) sizes.push_back(1);
  return host_buffer(t.data.data(), sizes);
}

void check(int status, const CallContext& ctx, const std::string& what) {
  if (status != 0)
    throw std::runtime_error(what + ": " + (ctx.error.empty() ? "Halide error " + std::to_string(status) : ctx.error));
}

void finish(HalideDevice device, Halide::Runtime::Buffer<float>& out) {
  if (on_gpu(device) && out.copy_to_host() != 0)
    throw std::runtime_error(std::string(halide_backend_name(device)) + ": copying the result back from the device failed");
  release(out);
}

void release(Halide::Runtime::Buffer<float>& buf) {
  if (buf.raw_buffer()->device) buf.device_free();
}

}  // namespace oplab::halide_glue
