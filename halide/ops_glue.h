#pragma once
// Per-op glue of the Halide backends. Each file in glue/ evaluates one op on the kernels of a
// device and registers itself with a file-scope HalideOpRegistrar, so adding an op's kernels
// means adding kernels/<op>.cmake, generators/<op>_generator.cpp and glue/<op>.cpp.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/case.h"
#include "core/op_desc.h"
#include "halide/halide_backend.h"

namespace oplab::halide_glue {

// A kernel path of an op (Backend::kernel_paths): a kernel the glue chooses, a specialisation
// a kernel runs, a block of channels past the first. The CPU and GPU schedules differ (the GPU
// ones have no channel blocks, no channels-last copy, no specialisations): a path says where
// it exists.
enum class PathOn { All, Cpu, Gpu };
struct KernelPath {
  const char* name;
  PathOn on = PathOn::All;
};
std::vector<std::string> paths_on(const std::vector<KernelPath>& paths, HalideDevice device);

// The path of a case with nothing to compute (an empty batch, channel axis, grid or image):
// every output and gradient is 0 (or the bias), written by the glue without a kernel call.
constexpr const char* kNoKernelCall = "nothing to compute: zeros without a kernel call";

// The paths one call took, each once (a benchmark calls the same kernels many times).
class PathLog {
 public:
  void take(const char* path);
  const std::vector<std::string>& list() const { return taken_; }

 private:
  std::vector<std::string> taken_;
};

struct HalideOp {
  std::string op;
  // Evaluates a validated case (forward, and backward when it has grad_output).
  Result (*run)(const Case& c, const ValidParams& vp, HalideDevice device) = nullptr;
  // Why this valid case cannot be evaluated by these kernels (e.g. a mode not built), or empty.
  std::optional<std::string> (*unsupported)(const Case& c) = nullptr;
  // For the benchmark: converts the case to float32 buffers once and returns a call of the
  // kernels alone (the forward, or the whole backward when `backward`). Optional.
  std::function<void()> (*prepare)(const Case& c, const ValidParams& vp, HalideDevice device, bool backward) = nullptr;
  // Every path its kernels can take; a call's Result names those it took (the call object's
  // taken_paths()), and the backend refuses to answer with one not listed here.
  std::vector<KernelPath> paths;
  // The backends whose kernels these are: float32 (halide-cpu, ...) or float16 (halide-cpu-f16, ...).
  HalideStorage storage = HalideStorage::Float32;
  // True when the kernels compute the forward only: the backends then take no grad_output
  // for the op (Backend::computes_grads).
  bool forward_only = false;
};

struct HalideOpRegistrar {
  explicit HalideOpRegistrar(HalideOp op);
};

// nullptr when no kernels of that storage exist for the op
const HalideOp* find_halide_op(const std::string& op, HalideStorage storage = HalideStorage::Float32);

// The kernel NAME compiled for `device`: every kernel exists as NAME_cpu, NAME_cuda and
// NAME_opencl with one signature (halide/CMakeLists.txt, oplab_halide_kernel).
template <class F>
F pick_kernel(HalideDevice device, F cpu, F cuda, F opencl) {
  switch (device) {
    case HalideDevice::Cuda: return cuda;
    case HalideDevice::OpenCL: return opencl;
    case HalideDevice::Cpu: break;
  }
  return cpu;
}
#define OPLAB_KERNEL(NAME, DEVICE) ::oplab::halide_glue::pick_kernel(DEVICE, NAME##_cpu, NAME##_cuda, NAME##_opencl)

// Every op's glue is a call object built from a validated case and its typed params (its tensors converted to
// float32 buffers once) with forward(), backward() (a no-op without grad_output), sync(bool
// backward) (waits for the GPU; a no-op on the CPU), before_timed_backward() (the untimed
// work a timed backward needs, e.g. roi_pool's argmax from the forward), result() and
// taken_paths() (the kernel paths forward() and backward() took, HalideOp::paths). These
// two give HalideOp::run and HalideOp::prepare from it.
template <class Call>
Result run_call(const Case& c, const ValidParams& vp, HalideDevice device) {
  Call call(c, vp, device);
  call.forward();
  call.backward();
  Result r = call.result();
  r.kernel_paths = call.taken_paths();
  return r;
}

template <class Call>
std::function<void()> prepare_call(const Case& c, const ValidParams& vp, HalideDevice device, bool backward) {
  if (backward && !c.grad_output) return {};
  auto call = std::make_shared<Call>(c, vp, device);
  if (backward) call->before_timed_backward();
  return [call, backward] {
    if (backward)
      call->backward();
    else
      call->forward();
    call->sync(backward);
  };
}

}  // namespace oplab::halide_glue
