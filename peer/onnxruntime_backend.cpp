#include "peer/onnxruntime_backend.h"
#include "peer/feature_values.h"
#include "peer/onnxruntime_repro.h"

#include <unistd.h>

#include <cmath>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "core/case_io.h"
#include "core/line_child.h"
#include "core/params.h"
#include "external/exec_backend.h"
#include "peer/uint8_two_pass.h"
#include "reference/interp_coordinates.h"

#ifndef OPLAB_ORT_SCRIPT
#define OPLAB_ORT_SCRIPT "onnxruntime_bridge.js"
#endif

namespace oplab {

namespace fs = std::filesystem;

namespace {

std::string env_or(const char* var, const std::string& fallback) {
  const char* v = std::getenv(var);
  return (v && *v) ? std::string(v) : fallback;
}

std::string script_path() { return env_or("OPLAB_ORT_SCRIPT", OPLAB_ORT_SCRIPT); }

// The node interpreter: OPLAB_NODE, else the first `node` on PATH; empty when there is none.
std::string node_path() {
  if (const char* v = std::getenv("OPLAB_NODE"); v && *v) return access(v, X_OK) == 0 ? std::string(v) : std::string();
  std::stringstream path(env_or("PATH", "/usr/bin:/bin"));
  std::string dir;
  while (std::getline(path, dir, ':')) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / "node";
    if (access(p.c_str(), X_OK) == 0) return p.string();
  }
  return {};
}

fs::path modules_dir() { return fs::path(script_path()).parent_path() / "onnxruntime" / "node_modules"; }

// Single-quoted for /bin/sh.
std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// The one-node model and feeds the bridge runs for `c` ({"model": base64, "feeds": ..}, its
// `--model` mode): what a reproduction script carries.
json model_of(const Case& c, OrtPrecision precision) {
  if (auto why = onnxruntime_missing()) throw BackendUnavailable("onnxruntime: " + *why);
  LineChildOptions o;
  o.argv = {node_path(), script_path(), "--model"};
  if (precision != OrtPrecision::Mixed) o.argv.insert(o.argv.end(), {"--dtype", precision == OrtPrecision::Float32 ? "float32" : "uint8"});
  o.stderr_path = "/dev/null";
  LineChild bridge(std::move(o));
  const std::string reply = bridge.request(case_to_json(c).dump(), 60);
  const json j = json::parse(reply, nullptr, false);
  if (!j.is_object() || j.contains("error") || !j.contains("model"))
    throw std::runtime_error("onnxruntime: the bridge built no model for the case: " + reply.substr(0, 200));
  return j;
}

class OnnxruntimeBackend : public Backend {
 public:
  // Float32: every op in float32 (`onnxruntime-f32`, the kernels a deployed float32 model runs);
  // UInt8: Resize on 8-bit images (`onnxruntime-uint8`); Mixed: double wherever ORT has a double
  // kernel (`onnxruntime`, the closer peer).
  explicit OnnxruntimeBackend(OrtPrecision precision)
      : precision_(precision), all_float32_(precision == OrtPrecision::Float32) {}
  std::string name() const override {
    return precision_ == OrtPrecision::Float32 ? "onnxruntime-f32" : precision_ == OrtPrecision::UInt8 ? "onnxruntime-uint8" : "onnxruntime";
  }
  std::string description() const override {
    return "ONNX Runtime " + onnxruntime_version().value_or("(not installed)") +
           " (onnxruntime-node), CPU execution provider, one thread, one one-node ONNX model per case via a Node bridge; " +
           (precision_ == OrtPrecision::UInt8 ? std::string("Resize on uint8 images, judged by the uint8 rule; forward only")
            : all_float32_ ? std::string("float32 for every op, judged at its own precision; forward only")
                         : std::string("float64 for deform_conv2d, roi_align, grid_sample, float32 for interpolate, "
                                       "roi_pool; forward only"));
  }
  bool opt_in() const override { return precision_ != OrtPrecision::Mixed; }
  bool out_of_process() const override { return true; }
  const std::vector<Divergence>& divergences() const override {
    return precision_ == OrtPrecision::UInt8 ? onnxruntime_uint8_divergences() : onnxruntime_divergences();
  }
  // uint8: Resize computes its coordinates, weights and sums in float32 (then truncates, a named
  // divergence): n taps of pixels up to 255, each term a few float32 roundings.
  bool writes_repro() const override { return true; }
  std::optional<ReproScript> repro_script(const ReproRequest& r) const override {
    return onnxruntime_repro(r, model_of(r.c, precision_), onnxruntime_version().value_or(""));
  }
  double uint8_error(const Case& c) const override { return uint8_errors(c).rounding; }
  double uint8_clipping(const Case& c) const override { return uint8_errors(c).clipping; }
  Uint8Error uint8_errors(const Case& c) const {
    if (precision_ != OrtPrecision::UInt8 || c.op != "interpolate") return {};
    const InterpParams p = parse_interpolate(c);
    if (p.antialias) {
      // Measured: ORT's antialias on uint8 rounds (no truncation) after two passes in fixed
      // point; which pass comes first is not documented, so both orders are bounded.
      AxisWeights rows, cols;
      for (const auto& [axis, out] : {std::pair{&p.axes[0], &rows}, std::pair{&p.axes[1], &cols}})
        for (const auto& taps : ref::interp_antialias_taps(p.mode, *axis)) {
          out->emplace_back();
          for (const auto& t : taps) out->back().push_back({t.src, t.weight});
        }
      const Tensor& x = c.in("input");
      const Uint8Error a = two_pass_uint8_error(rows, cols, x, true, 22), b = two_pass_uint8_error(rows, cols, x, false, 22);
      return {std::max(a.rounding, b.rounding), std::max(a.clipping, b.clipping)};
    }
    double n = 1;
    for (const InterpAxis& a : p.axes)
      n *= p.antialias                                                                 ? double(interp_antialias_max_taps(p.mode, a))
           : p.mode == InterpMode::Bicubic                                             ? 4.0
           : p.mode == InterpMode::Nearest || p.mode == InterpMode::NearestExact ? 1.0
                                                                                       : 2.0;
    return {p.mode == InterpMode::Nearest || p.mode == InterpMode::NearestExact ? 0.0 : 8 * 255.0 * 0x1p-24 * (n + 4), 0.0};
  }

  std::optional<std::string> unavailable_reason() const override {
    if (auto why = onnxruntime_missing()) return why;
    return inner().unavailable_reason();
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (onnxruntime_missing()) return std::nullopt;  // evaluate() reports the unavailability first
    if (c.op == "roi_align" && c.params.value("pool_mode", json("avg")) == "max")
      // Not SPEC's max (of interpolated values, mmcv's): ONNX's is the max of the weighted
      // corners of each sample, with out-of-range samples as 0 (docs/divergences.md, a finding).
      return std::string("ONNX RoiAlign max mode is the max of the weighted corners, not of the interpolated values");
    if (c.op == "grid_sample")
      if (const Tensor* g = c.opt("grid"))
        for (double v : g->data)
          if (!std::isfinite(v))
            // Measured: ORT reads an edge pixel where SPEC §12 samples nothing (a finding).
            return std::string("ONNX Runtime GridSample reads an edge pixel at a non-finite grid value (SPEC: 0)");
    if (c.op == "interpolate" && precision_ != OrtPrecision::UInt8)
      if (const Tensor* x = c.opt("input"); x && any_non_finite(*x))
        // Measured (Resize, linear family): Inf where the spec gives NaN (an axis of one pixel,
        // whose second tap the spec reads at weight 0) and 0 where it gives NaN.
        return std::string("ONNX Runtime Resize weighs a NaN or Inf pixel otherwise than the spec (taps at weight 0)");
    if (c.op == "roi_align")
      if (const Tensor* x = c.opt("input"); x && corner_pixel_non_finite(*x))
        // Measured: as torchvision's CPU kernel (SPEC §8), an out-of-range sample reads pixel (0, 0) times 0.
        return std::string("ONNX Runtime RoiAlign reads an out-of-range sample as pixel (0, 0) times 0: NaN for a NaN or "
                           "Inf there, where SPEC §8 gives 0");
    if (c.op == "roi_pool")
      if (const Tensor* x = c.opt("input"); x && any_nan_or_minus_inf(*x))
        // Measured: -FLT_MAX for a bin of -Inf only, NaN for a bin holding NaN and a number.
        return std::string("ONNX Runtime MaxRoiPool starts its max at -FLT_MAX and lets NaN through: a bin with NaN or of "
                           "-Inf only differs");
    if (c.op == "deform_conv2d")
      if (const Tensor* x = c.opt("input"); x && any_non_finite(*x))
        // Measured: NaN where SPEC §2 gives 0 or Inf, with a NaN or Inf pixel (corners read at weight 0).
        return std::string("ONNX Runtime's deform_conv2d reads corners SPEC §2 leaves out: NaN for a NaN or Inf pixel");
    if (c.op == "grid_sample" && c.params.value("padding_mode", json("zeros")) != "zeros")
      if (const Tensor* x = c.opt("input"))
        for (double v : x->data)
          if (!std::isfinite(v))
            // Measured: ORT pads by mapping the pixel each corner reads into the image, where
            // SPEC §12 pads the coordinate and a corner outside reads 0, so a non-finite pixel
            // meets other corners and weights (the same values where every pixel is finite).
            return std::string(
                "ONNX Runtime GridSample pads the corners, not the coordinate: a non-finite pixel is weighted "
                "otherwise under border and reflection padding (SPEC §12)");
    if (precision_ == OrtPrecision::UInt8 && c.op == "interpolate" && c.params.value("mode", json("")) == "bicubic" &&
        c.params.value("antialias", json(false)) != json(true))
      // Measured on onnxruntime-node 1.30: Resize cubic on uint8 fails ("Tensor type mismatch",
      // a float tensor asked of a uint8 one): a finding, declined rather than failed each time.
      return std::string("ONNX Runtime 1.30 Resize cubic (without antialias) fails on uint8 input: Tensor type mismatch");
    if (c.op == "roi_align") {
      // Measured on onnxruntime-node 1.30: RoiAlign with H = 0 or W = 0 and at least one roi
      // kills the process (SIGSEGV), so it is declined rather than crashed (a finding, SPEC §14).
      const Tensor* x = c.opt("input");
      const Tensor* rois = c.opt("rois");
      if (x && rois && x->rank() == 4 && rois->rank() >= 1 && rois->dim(0) > 0 && (x->dim(2) == 0 || x->dim(3) == 0))
        return std::string("ONNX Runtime 1.30 RoiAlign crashes (SIGSEGV) on an input with H = 0 or W = 0");
    }
    return inner().unsupported_reason(c);
  }
  DType dtype(const std::string& op) const override {
    return onnxruntime_missing() ? DType::Float32 : inner().dtype(op);
  }
  bool computes_grads(const std::string&) const override { return false; }
  Result run(const Case& c, const ValidParams& vp) override {
    if (auto why = onnxruntime_missing()) throw BackendUnavailable(name() + ": " + *why);
    Result r = inner().run(c, vp);
    r.backend = name();
    return r;
  }

 private:
  Backend& inner() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!inner_) {
      ExecSpec s;
      s.name = name();
      s.command = "exec " + quoted(node_path()) + " " + quoted(script_path()) + (precision_ == OrtPrecision::Float32 ? " --dtype float32" : precision_ == OrtPrecision::UInt8 ? " --dtype uint8" : "");
      std::error_code ec;
      s.log = (fs::temp_directory_path(ec) / ("oplab-" + name() + "-" + std::to_string(getpid()) + ".stderr.log")).string();
      s.timeout_s = 60;  // a session per case: building one for a large DeformConv takes a while
      inner_ = make_exec_backend(s);
    }
    return *inner_;
  }

  OrtPrecision precision_;
  bool all_float32_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<Backend> inner_;
};

}  // namespace

std::unique_ptr<Backend> make_onnxruntime_backend(OrtPrecision precision) {
  return std::make_unique<OnnxruntimeBackend>(precision);
}

namespace {
std::unique_ptr<Backend> make_mixed() { return make_onnxruntime_backend(OrtPrecision::Mixed); }
std::unique_ptr<Backend> make_float32() { return make_onnxruntime_backend(OrtPrecision::Float32); }
std::unique_ptr<Backend> make_uint8() { return make_onnxruntime_backend(OrtPrecision::UInt8); }
const BackendRegistrar kMixed(kOrderOnnxruntime, make_mixed), kFloat32(kOrderOnnxruntime + 1, make_float32),
    kUint8(kOrderOnnxruntime + 2, make_uint8);
}  // namespace

namespace {

std::optional<std::string> missing_now() {
  if (node_path().empty()) {
    if (const char* v = std::getenv("OPLAB_NODE"); v && *v) return "OPLAB_NODE=" + std::string(v) + " is not an executable file";
    return std::string("no node interpreter on PATH (install nodejs, or set OPLAB_NODE)");
  }
  if (access(script_path().c_str(), R_OK) != 0) return "the bridge " + script_path() + " cannot be read (set OPLAB_ORT_SCRIPT)";
  if (!fs::exists(modules_dir() / "onnxruntime-node" / "package.json"))
    return "onnxruntime-node is not installed in " + modules_dir().string() + " (run scripts/setup.sh)";
  return std::nullopt;
}

}  // namespace

// Asked several times a case (support, dtype, run): the PATH walk and the file checks are made
// once per setting of the variables they read, not a dozen system calls each time.
std::optional<std::string> onnxruntime_missing() {
  static std::mutex m;
  static std::string key;
  static std::optional<std::string> answer;
  static bool known = false;
  auto var = [](const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) + '\n' : std::string("-\n");
  };
  const std::string now = var("OPLAB_NODE") + var("OPLAB_ORT_SCRIPT") + var("PATH");
  std::lock_guard<std::mutex> lock(m);
  if (!known || key != now) answer = missing_now(), key = now, known = true;
  return answer;
}

std::optional<std::string> onnxruntime_version() {
  std::ifstream f(modules_dir() / "onnxruntime-node" / "package.json");
  if (!f) return std::nullopt;
  const json j = json::parse(f, nullptr, false);
  if (!j.is_object() || !j.contains("version") || !j["version"].is_string()) return std::nullopt;
  return j["version"].get<std::string>();
}

namespace {

// One bench request to the bridge; its {"ms": [...]}, or the bridge's refusal thrown.
std::vector<double> bench_request(LineChild& bridge, const json& req) {
  const std::string reply = bridge.request(req.dump(), 600);  // a hung bridge is killed, not waited on
  const json j = json::parse(reply, nullptr, false);
  if (!j.is_object()) throw std::runtime_error("onnxruntime: the bench bridge answered: " + reply.substr(0, 120));
  if (j.contains("error")) {
    const std::string e = j["error"].is_string() ? j["error"].get<std::string>() : j["error"].dump();
    if (j.value("kind", "") == "unsupported") throw Unsupported("onnxruntime: " + e);
    throw std::runtime_error("onnxruntime: " + e);
  }
  // The bench compares float32 kernels: ORT's double kernels (its default for RoiAlign, DeformConv
  // and GridSample in the evaluating bridge) would be another function, slower.
  if (j.value("dtype", "") != "float32")
    throw std::runtime_error("onnxruntime: the bench bridge timed a " + j.value("dtype", std::string("?")) + " kernel, not float32");
  const std::vector<double> ms = j.at("ms").get<std::vector<double>>();
  if (ms.size() != size_t(req.value("repeats", 0))) throw std::runtime_error("onnxruntime: the bench bridge answered: " + reply.substr(0, 120));
  return ms;
}

}  // namespace

OnnxruntimeBench start_onnxruntime_bench(const Case& c, int threads, const json& random_inputs) {
  if (auto why = onnxruntime_missing()) throw BackendUnavailable("onnxruntime: " + *why);
  // The bridge keeps the session between requests: the case (its inputs) is sent once, less
  // the inputs it draws itself.
  Case sent = c;
  for (const auto& [name, spec] : random_inputs.items()) sent.inputs.erase(name);
  LineChildOptions o;
  // float32 on every op, as every side of the bench (the kernels a deployed model runs).
  o.argv = {node_path(), script_path(), "--bench", "--dtype", "float32"};
  o.stderr_path = "/dev/null";
  auto bridge = std::make_shared<LineChild>(std::move(o));
  OnnxruntimeBench b;
  b.probe_ms = bench_request(*bridge, json{{"case", case_to_json(sent)}, {"random_inputs", random_inputs}, {"repeats", 1},
                                           {"warmup", 1}, {"threads", threads}})
                   .front();
  b.run = [bridge](int pre_runs) { return bench_request(*bridge, json{{"repeats", 1}, {"warmup", pre_runs}}).front(); };
  return b;
}

}  // namespace oplab
