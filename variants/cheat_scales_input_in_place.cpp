// Seeded cheater `cheat-scales-input-in-place`: a roi_align kernel (the reference's numbers,
// through the plugin ABI) that then scales its input by 2 in place, as a kernel that reuses an
// input buffer as its workspace does (KernelBench PR 82 checks for kernels that mutate their
// inputs): its own answer is right, but whatever reads the input next reads something else.
// oplab checks every input of a plugin unchanged after the call (external/plugin_backend.cpp).
#include <cstring>

#include "core/backend.h"
#include "external/plugin_backend.h"
#include "variants/abi_reference.h"

namespace oplab {
namespace {

int32_t evaluate(const oplab_call_v1* call, char* message, size_t message_size) {
  if (const int32_t code = abi_reference(call, call->outputs, call->grads, message, message_size)) return code;
  for (int32_t i = 0; i < call->n_inputs; ++i)
    if (std::strcmp(call->inputs[i].name, "input") == 0)
      for (int64_t at = 0; at < call->inputs[i].numel; ++at) static_cast<double*>(call->inputs[i].data)[at] *= 2;
  return OPLAB_OK;
}

const oplab_plugin_v1 kApi = {OPLAB_PLUGIN_ABI_VERSION, "cheat-scales-input-in-place",
                              "seeded cheater: roi_align that scales its input by 2 in place after answering", 1,
                              kCheaterOps, evaluate};

std::unique_ptr<Backend> make() {
  return plugin_backend_from_api(&kApi, "variants/cheat_scales_input_in_place.cpp", BackendRole::SeededBug);
}

}  // namespace
}  // namespace oplab

static const oplab::BackendRegistrar r(141, oplab::make);
