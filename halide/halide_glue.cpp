#include "halide/halide_glue.h"

#include <HalideRuntime.h>

#include <mutex>
#include <stdexcept>

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

Halide::Runtime::Buffer<float> view(TensorF& t) {
  static std::once_flag once;
  std::call_once(once, [] { halide_set_error_handler(on_error); });
  std::vector<int> sizes(t.shape.rbegin(), t.shape.rend());
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
