#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/backend.h"

namespace oplab {

// Where the kernels run. OpenCL runs the GPU schedules (the has_gpu_feature() branch of every
// generator: its own scatters, tiling and device buffers) on any OpenCL device, pocl's CPU
// device included, so the algorithm and schedule of the CUDA kernels are proven on every
// machine; only their PTX code generation is CUDA's own (checked at build time, ptx_check/).
enum class HalideDevice { Cpu, Cuda, OpenCL };
inline bool on_gpu(HalideDevice d) { return d != HalideDevice::Cpu; }
constexpr HalideDevice kHalideDevices[] = {HalideDevice::Cpu, HalideDevice::Cuda, HalideDevice::OpenCL};
// What the kernels store their tensors in: float32 (every op), or float16 with float32
// arithmetic (the ops whose design asks for it: deform_roi_pool's forward, NHWC, as the MLU
// design of seed 002 specifies it).
enum class HalideStorage { Float32, Float16 };
// halide-cpu, halide-cuda, halide-opencl; with float16 storage halide-cpu-f16, -cuda-f16, -opencl-f16.
const char* halide_backend_name(HalideDevice d, HalideStorage s = HalideStorage::Float32);

// The `halide-cpu`, `halide-cuda` and `halide-opencl` backends (float32 Halide kernels compiled
// ahead of time), and their float16 counterparts (the ops that have float16 kernels).
std::unique_ptr<Backend> make_halide_backend(HalideDevice device, HalideStorage storage = HalideStorage::Float32);

// The kernels of a case alone, with its buffers converted once (for timing); empty when the
// op's glue does not provide it (then time the backend's run(), conversions included).
std::function<void()> halide_prepared_call(const Case& c, HalideDevice device, bool backward,
                                           HalideStorage storage = HalideStorage::Float32);

// Threads of the Halide CPU thread pool (the benchmark sets it equal to the peer's).
void set_halide_threads(int n);

// Why CUDA kernels cannot run here (no driver, no device), or empty when they can.
std::optional<std::string> cuda_unavailable_reason();

// Why OpenCL kernels cannot run here (no ICD loader, no platform or device), or empty.
std::optional<std::string> opencl_unavailable_reason();

// The reason above for a device, asked once per process (none for the CPU). Loads the
// device's driver library where the Halide runtime finds it.
std::optional<std::string> device_unavailable_reason(HalideDevice d);

}  // namespace oplab
