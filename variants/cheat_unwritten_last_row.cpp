// Seeded cheater `cheat-unwritten-last-row`: a roi_align kernel (the reference's numbers, through
// the plugin ABI) that never writes the last row of its output, the shortcut of a kernel whose
// loop bound is one short and that counts on a zero-filled buffer (an all-zero kernel passes
// every problem whose answer is zero: KernelBench issue 165). oplab hands a plugin's output
// filled with a signalling NaN and fails every element left so (external/plugin_backend.cpp),
// whatever the reference's value there.
#include <cstring>
#include <vector>

#include "core/backend.h"
#include "external/plugin_backend.h"
#include "variants/abi_reference.h"

namespace oplab {
namespace {

int32_t evaluate(const oplab_call_v1* call, char* message, size_t message_size) {
  // The reference into scratch, then every row but the last copied out.
  oplab_tensor_v1 scratch = call->outputs[0];
  std::vector<double> data(size_t(scratch.numel));
  scratch.data = data.data();
  if (const int32_t code = abi_reference(call, &scratch, call->grads, message, message_size)) return code;
  const oplab_tensor_v1& out = call->outputs[0];
  const int64_t W = out.shape[out.rank - 1], H = out.shape[out.rank - 2];
  for (int64_t at = 0; at < out.numel; ++at)
    if ((at / W) % H != H - 1) static_cast<double*>(out.data)[at] = data[size_t(at)];
  return OPLAB_OK;
}

const oplab_plugin_v1 kApi = {OPLAB_PLUGIN_ABI_VERSION, "cheat-unwritten-last-row",
                              "seeded cheater: roi_align that leaves the last row of its output unwritten", 1,
                              kCheaterOps, evaluate};

std::unique_ptr<Backend> make() {
  return plugin_backend_from_api(&kApi, "variants/cheat_unwritten_last_row.cpp", BackendRole::SeededBug);
}

}  // namespace
}  // namespace oplab

static const oplab::BackendRegistrar r(140, oplab::make);
