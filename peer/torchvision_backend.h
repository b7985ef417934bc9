#pragma once
// The `torchvision` peer backend: evaluates cases with Debian's torch / torchvision in float64
// on the CPU, through one long-lived Python child process (peer/torchvision_bridge.py) that
// answers one JSON line per case over the line protocol of external backends
// (docs/protocol.md, external/protocol_client.h). The interpreter is the one the build chose
// (OPLAB_PYTHON), which the environment variable of the same name overrides at run time; the
// script is found beside the program (an install) or in the source tree.
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/backend.h"

namespace oplab {

enum class TorchDevice { Cpu, Cuda };

// dtype float64: the peer oracle `torchvision`; float32, float16, bfloat16: torch's own kernels
// in that dtype (`torchvision-f32`, `-f16`, `-bf16`), judged at their own precision (SPEC §15).
// On TorchDevice::Cuda, torch's CUDA kernels (`torchvision-cuda-f32`, `-f16`): unavailable,
// saying why, where torch sees no GPU.
std::unique_ptr<Backend> make_torchvision_backend(DType dtype = DType::Float64, TorchDevice device = TorchDevice::Cpu);

// The bridge's answer to hello, {"torch": .., "torchvision": .., "python": ..}, or nullopt
// when the peer cannot run here. Cached for the process; starts a bridge only if no
// torchvision backend has said hello yet.
std::optional<nlohmann::json> torchvision_versions();

// Sends {"bench": request} to a bridge of its own and returns the answer ({"median_ms": ..,
// "ms": [..]}); throws Unsupported where torchvision lacks the op or mode, BackendUnavailable
// where it cannot run here, std::runtime_error with the bridge's one-line error otherwise.
nlohmann::json torchvision_bench(const nlohmann::json& request);

}  // namespace oplab
