#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/backend.h"

namespace oplab {

enum class HalideDevice { Cpu, Cuda };

// The `halide-cpu` and `halide-cuda` backends: float32 Halide kernels compiled ahead of time.
std::unique_ptr<Backend> make_halide_backend(HalideDevice device);

// The kernels of a case alone, with its buffers converted once (for timing); empty when the
// op's glue does not provide it (then time the backend's run(), conversions included).
std::function<void()> halide_prepared_call(const Case& c, HalideDevice device, bool backward);

// Threads of the Halide CPU thread pool (the benchmark sets it equal to the peer's).
void set_halide_threads(int n);

// Why CUDA kernels cannot run here (no driver, no device), or empty when they can.
std::optional<std::string> cuda_unavailable_reason();

}  // namespace oplab
