#pragma once
// The `onnxruntime` peer backend: ONNX Runtime's CPU kernels (onnxruntime-node), driven through
// the line protocol (external/exec_backend.h) by the Node bridge peer/onnxruntime_bridge.js,
// which builds one one-node ONNX model per case (SPEC §14). Forward only; double for the ops
// whose ORT kernels exist in double (RoiAlign, DeformConv, GridSample), float32 for the others
// (Resize, AveragePool, MaxRoiPool), as the bridge's hello declares. The node interpreter and
// the script default to `node` on PATH and the build's copy of the bridge, overridable by the
// environment variables OPLAB_NODE and OPLAB_ORT_SCRIPT; the bridge loads its packages from
// peer/onnxruntime/node_modules beside it (scripts/setup.sh installs them).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.h"

namespace oplab {

// Mixed: `onnxruntime`, double wherever ORT has a double kernel (DeformConv, RoiAlign,
// GridSample); Float32: `onnxruntime-f32`, every op in float32 (opt-in), judged at its own
// precision (SPEC §15); UInt8: `onnxruntime-uint8`, Resize on 8-bit images (opt-in, the uint8
// rule of SPEC §16).
enum class OrtPrecision { Mixed, Float32, UInt8 };
std::unique_ptr<Backend> make_onnxruntime_backend(OrtPrecision precision = OrtPrecision::Mixed);

// The installed onnxruntime-node version ("1.30.0"), or nullopt when it is not installed.
std::optional<std::string> onnxruntime_version();

// Why the onnxruntime peer cannot run here (no node, no node_modules), in one line; nullopt
// when it can (as far as can be told without starting it).
std::optional<std::string> onnxruntime_missing();

// The onnxruntime backend's named divergences (peer/onnxruntime_divergences.cpp), and those of
// its uint8 flavour (the same and its truncation).
const std::vector<Divergence>& onnxruntime_divergences();
const std::vector<Divergence>& onnxruntime_uint8_divergences();

// A bench session of one case: its ORT session (float32 kernels, as every side of the bench)
// built once, on `threads` intra-op threads, in a bridge process of its own (which lives as
// long as `run`). `run` times one run (ms) and may be called between other sides' runs;
// probe_ms is the first run, after one warm-up. Throws BackendUnavailable, Unsupported (the
// bridge's refusal of the op or mode) or std::runtime_error (any other failure).
// random_inputs ({name: {"shape", "low", "high"}}, the benchmark's own description of its
// random inputs) names the inputs the bridge draws itself, uniformly in [low, high), instead
// of receiving them: a case goes as one JSON line, which Node cannot hold past 2^29 characters
// (a standard RoI shape's feature map, 31 M values, is about 620 M), and the values of a
// uniform draw change nothing a timing depends on.
struct OnnxruntimeBench {
  std::function<double(int pre_runs)> run;  // pre_runs untimed runs, then one timed (ms)
  double probe_ms = 0;
};
OnnxruntimeBench start_onnxruntime_bench(const Case& c, int threads, const nlohmann::json& random_inputs = nlohmann::json::object());

}  // namespace oplab
