// Seeded cheater `cheat-depends-on-previous-call`: a roi_align kernel (the reference's numbers,
// through the plugin ABI) whose answer also depends on the call before it, as a kernel reading
// a stale workspace or a cache keyed wrongly does (llm.c PR 851 re-validates after timing for
// this): each output is scaled by 1 + 1e-13 sin(S), S the sum of the previous call's outputs.
// Off by 1e-13 relative, it agrees with the reference to double's 1e-10; the determinism
// property, which evaluates a case twice in the same process, sees two answers.
#include <cmath>

#include "core/backend.h"
#include "external/plugin_backend.h"
#include "variants/abi_reference.h"

namespace oplab {
namespace {

double previous_sum = 0;  // the state carried from call to call: the cheat

int32_t evaluate(const oplab_call_v1* call, char* message, size_t message_size) {
  if (const int32_t code = abi_reference(call, call->outputs, call->grads, message, message_size)) return code;
  double* out = static_cast<double*>(call->outputs[0].data);
  const double factor = 1 + 1e-13 * std::sin(previous_sum);
  double sum = 0;
  for (int64_t at = 0; at < call->outputs[0].numel; ++at) {
    if (std::isfinite(out[at])) sum += out[at];
    out[at] *= factor;
  }
  previous_sum = sum;
  return OPLAB_OK;
}

const oplab_plugin_v1 kApi = {OPLAB_PLUGIN_ABI_VERSION, "cheat-depends-on-previous-call",
                              "seeded cheater: roi_align whose answer depends on the previous call (1e-13 relative)", 1,
                              kCheaterOps, evaluate};

std::unique_ptr<Backend> make() {
  return plugin_backend_from_api(&kApi, "variants/cheat_depends_on_previous_call.cpp", BackendRole::SeededBug);
}

}  // namespace
}  // namespace oplab

static const oplab::BackendRegistrar r(142, oplab::make);
