#pragma once
// The `torchvision` peer backend: evaluates cases with Debian's torch / torchvision in float64
// on the CPU, through one long-lived Python child process (peer/torchvision_bridge.py) that
// answers one JSON line per case. The interpreter and the script default to the values the
// build chose (OPLAB_PYTHON, OPLAB_PEER_SCRIPT) and can be overridden by the environment
// variables of the same names at run time.
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/backend.h"

namespace oplab {

std::unique_ptr<Backend> make_torchvision_backend();

// The bridge's answer to hello, {"torch": .., "torchvision": .., "python": ..}, or nullopt
// when the peer cannot run here. Cached for the process; starts a bridge only if no
// torchvision backend has said hello yet.
std::optional<nlohmann::json> torchvision_versions();

// Sends {"bench": request} to a bridge of its own and returns the answer ({"median_ms": ..,
// "ms": [..]}); throws std::runtime_error with the bridge's one-line error.
nlohmann::json torchvision_bench(const nlohmann::json& request);

}  // namespace oplab
