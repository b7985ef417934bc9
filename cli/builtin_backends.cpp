#include "cli/builtin_backends.h"

#include "halide/halide_backend.h"
#include "peer/torchvision_backend.h"
#include "reference/ref_backend.h"

namespace oplab {

Registry& builtin_backends() {
  static Registry* registry = [] {
    auto* r = new Registry;  // lives for the whole process: backends may own child processes
    r->add(make_ref_backend());
    r->add(make_torchvision_backend());
    r->add(make_halide_backend(HalideDevice::Cpu));
    r->add(make_halide_backend(HalideDevice::Cuda));
    for (BackendFactory f : registered_backend_factories()) r->add(f());
    return r;
  }();
  return *registry;
}

}  // namespace oplab
