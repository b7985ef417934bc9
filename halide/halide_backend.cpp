#include "halide/halide_backend.h"

#include <dlfcn.h>

#include <HalideRuntime.h>

#include <vector>

#include "halide/ops_glue.h"

namespace oplab {

namespace {

using namespace halide_glue;

class HalideBackend : public Backend {
 public:
  explicit HalideBackend(HalideDevice d) : device_(d) {}
  std::string name() const override { return device_ == HalideDevice::Cpu ? "halide-cpu" : "halide-cuda"; }
  std::string description() const override {
    return device_ == HalideDevice::Cpu ? "Halide float32 kernels, ahead-of-time compiled for this CPU"
                                        : "Halide float32 kernels, ahead-of-time compiled to CUDA PTX";
  }
  std::optional<std::string> unavailable_reason() const override {
    if (device_ == HalideDevice::Cuda) return cuda_unavailable_reason();
    return std::nullopt;
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    const HalideOp* op = find_halide_op(c.op);
    if (!op) return "no Halide kernel for " + c.op + " yet";
    return op->unsupported ? op->unsupported(c) : std::nullopt;
  }
  bool is_float32() const override { return true; }
  Result run(const Case& c) override {
    const HalideOp* op = find_halide_op(c.op);
    if (!op) throw Unsupported(name() + ": no Halide kernel for " + c.op);
    return op->run(c, device_);
  }

 private:
  HalideDevice device_;
};

}  // namespace

namespace halide_glue {

static std::vector<HalideOp>& halide_ops() {
  static std::vector<HalideOp> ops;
  return ops;
}

HalideOpRegistrar::HalideOpRegistrar(HalideOp op) { halide_ops().push_back(std::move(op)); }

const HalideOp* find_halide_op(const std::string& op) {
  for (const auto& o : halide_ops())
    if (o.op == op) return &o;
  return nullptr;
}

}  // namespace halide_glue

std::optional<std::string> cuda_unavailable_reason() {
  // The Halide CUDA runtime loads the driver library itself; ask it the same questions first
  // so that a machine without a GPU gets a clear sentence instead of a failed kernel call.
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) lib = dlopen("libcuda.so", RTLD_LAZY | RTLD_LOCAL);
  if (!lib) return std::string("no CUDA driver (libcuda.so) on this machine");
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(lib, "cuDeviceGetCount"));
  int n = 0;
  if (!init || !count) return std::string("the CUDA driver library lacks cuInit/cuDeviceGetCount");
  if (int e = init(0); e != 0) return "the CUDA driver failed to initialise (cuInit error " + std::to_string(e) + ")";
  if (count(&n) != 0 || n == 0) return std::string("no CUDA device on this machine");
  return std::nullopt;
}

void set_halide_threads(int n) { halide_set_num_threads(n); }

std::function<void()> halide_prepared_call(const Case& c, HalideDevice device, bool backward) {
  const halide_glue::HalideOp* op = halide_glue::find_halide_op(c.op);
  if (!op || !op->prepare) return {};
  return op->prepare(c, device, backward);
}

std::unique_ptr<Backend> make_halide_backend(HalideDevice device) { return std::make_unique<HalideBackend>(device); }

}  // namespace oplab
