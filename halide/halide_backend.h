#pragma once
#include <memory>

#include "core/backend.h"

namespace oplab {

enum class HalideDevice { Cpu, Cuda };

// The `halide-cpu` and `halide-cuda` backends: float32 Halide kernels compiled ahead of time.
std::unique_ptr<Backend> make_halide_backend(HalideDevice device);

// Why CUDA kernels cannot run here (no driver, no device), or empty when they can.
std::optional<std::string> cuda_unavailable_reason();

}  // namespace oplab
