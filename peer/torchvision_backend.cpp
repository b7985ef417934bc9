#include "peer/torchvision_backend.h"
#include "peer/divergences.h"
#include "peer/feature_values.h"
#include "peer/torchvision_repro.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <utility>
#include <mutex>
#include <stdexcept>
#include <string>
#include <filesystem>
#include <thread>
#include <vector>

#include "core/case_io.h"
#include "core/op_desc.h"
#include "external/protocol_client.h"

#ifndef OPLAB_PYTHON
#define OPLAB_PYTHON "/usr/bin/python3"
#endif
#ifndef OPLAB_PEER_SCRIPT
#define OPLAB_PEER_SCRIPT "torchvision_bridge.py"
#endif

namespace oplab {

namespace {

std::string env_or(const char* var, const char* fallback) {
  const char* v = std::getenv(var);
  return (v && *v) ? std::string(v) : std::string(fallback);
}

// The bridge script: the one an install put beside the running executable (PREFIX/bin/oplab
// reads PREFIX/share/oplab/), else one packed in the executable's own folder (scripts/gpu.sh),
// else the one of the source tree the build was configured from. Any other kernel is tested
// as an external backend under its own name (--exec, docs/protocol.md), never as this peer.
std::string peer_script() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const std::filesystem::path& candidate :
         {exe.parent_path().parent_path() / "share" / "oplab" / "torchvision_bridge.py",
          exe.parent_path() / "torchvision_bridge.py"})
      if (std::filesystem::exists(candidate, ec)) return candidate.string();
  }
  return OPLAB_PEER_SCRIPT;
}

// Hello answers (nullopt: no answer) by interpreter and script, shared so that reports need not
// start another interpreter: importing torch takes seconds.
std::mutex g_versions_mutex;
std::map<std::pair<std::string, std::string>, std::optional<json>> g_versions;

// `PYTHON -u SCRIPT`, with oplab's working directory and stderr.
LineChildOptions bridge_options(const std::string& python, const std::string& script, DType dtype, TorchDevice device) {
  LineChildOptions o;
  o.argv = {python, "-u", script};
  if (dtype != DType::Float64) o.argv.insert(o.argv.end(), {"--dtype", dtype_name(dtype)});
  if (device == TorchDevice::Cuda) o.argv.insert(o.argv.end(), {"--device", "cuda"});
  return o;
}

// The name a user sees: "torchvision" (the float64 oracle), "torchvision-f32", "-f16", "-bf16";
// torch's CUDA kernels "torchvision-cuda-f32", "torchvision-cuda-f16".
std::string torch_backend_name(DType dtype, TorchDevice device) {
  const std::string base = device == TorchDevice::Cuda ? "torchvision-cuda" : "torchvision";
  switch (dtype) {
    case DType::Float64: return base;
    case DType::Float32: return base + "-f32";
    case DType::Float16: return base + "-f16";
    case DType::BFloat16: return base + "-bf16";
    case DType::UInt8: return base + "-uint8";
  }
  return base;
}

// What torch 1.13's CPU kernels have in each reduced dtype (SPEC §15, measured): float32 every
// op the peer has; float16 the four RoI ops; bfloat16 interpolate (the bridge declines a mode
// torch lacks, such as nearest-exact, from torch's own "not implemented" error).
bool torch_has_dtype(const std::string& op, DType dtype, TorchDevice device) {
  // torchvision's and torch's CUDA kernels dispatch float16 for every op the peer has (the
  // bridge declines a mode torch lacks from torch's own "not implemented" error).
  if (device == TorchDevice::Cuda) return dtype != DType::BFloat16 || op == "interpolate";
  switch (dtype) {
    case DType::Float64:
    case DType::Float32: return true;
    case DType::Float16: return op == "roi_align" || op == "roi_pool" || op == "ps_roi_align" || op == "ps_roi_pool";
    case DType::BFloat16: return op == "interpolate";
    // torch 1.13's uint8 interpolate: nearest and nearest-exact (the bridge declines the modes
    // whose kernels raise "not implemented for 'Byte'").
    case DType::UInt8: return op == "interpolate";
  }
  return false;
}

class TorchvisionBackend : public Backend {
 public:
  explicit TorchvisionBackend(DType dtype = DType::Float64, TorchDevice device = TorchDevice::Cpu)
      : dtype_(dtype),
        device_(device),
        python_(env_or("OPLAB_PYTHON", OPLAB_PYTHON)),
        script_(peer_script()),
        // The bridge speaks the line protocol (docs/protocol.md) like any --exec backend; its
        // stderr stays oplab's, and it has no timeout (a large case may take torch a while).
        client_(torch_backend_name(dtype, device), bridge_options(python_, script_, dtype, device), 0) {}

  std::string name() const override { return torch_backend_name(dtype_, device_); }
  bool out_of_process() const override { return true; }  // the Python bridge is a child process
  // torch's semantics are the same in every dtype: the float64 peer's named divergences hold.
  const std::vector<Divergence>& divergences() const override { return torchvision_divergences(); }
  DType dtype(const std::string&) const override { return dtype_; }
  // torchvision's and torch's CUDA backwards add into their gradients with atomicAdd (vision
  // issue 7579); the CPU kernels run one thread here.
  std::optional<std::string> nondeterministic(const std::string&) const override {
    if (device_ == TorchDevice::Cpu) return std::nullopt;
    return std::string("torch's CUDA backward adds into its gradients with atomicAdd (vision issue 7579)");
  }
  bool writes_repro() const override { return true; }
  std::optional<ReproScript> repro_script(const ReproRequest& r) const override {
    std::string versions;
    if (auto v = torchvision_versions())
      versions = "torch " + v->value("torch", std::string("?")) + ", torchvision " + v->value("torchvision", std::string("?"));
    return torchvision_repro(r, dtype_, device_ == TorchDevice::Cuda, versions,
                             std::filesystem::path(script_).parent_path().string());
  }
  // 8-bit images have no backward (torch's uint8 tensors take no gradient).
  bool computes_grads(const std::string&) const override { return dtype_ != DType::UInt8; }
  bool opt_in() const override { return dtype_ != DType::Float64 || device_ == TorchDevice::Cuda; }
  // Measured on torch 1.13 (SPEC §15): the CPU RoI kernels in float16 add every sample, and
  // every bin's gradient, in half (a 64x64 map of ones pooled into one bin of 4096 samples
  // gives 0.5). Its bfloat16 interpolate adds the forward in float32 (an area mean of 2^20
  // values of 0.01 gives 0.01001) but the backward in bfloat16 (1 -> 2000 along x with a
  // grad_output of ones gives each input 256, not 1000): declared bfloat16, the narrower.
  // On CUDA, not yet measured: the narrowest (the dtype itself) is declared, which forgives a
  // half kernel that adds in float32 nothing it does not forgive one that adds in half.
  DType accumulation(const std::string&) const override { return dtype_; }

  std::string description() const override {
    return "PyTorch / torchvision (torchvision.ops, torch.nn.functional.interpolate) in " + std::string(dtype_name(dtype_)) +
           (device_ == TorchDevice::Cuda ? " on the GPU (CUDA)" : " on the CPU, one thread") + ", via a Python bridge (" +
           python_ + ")" +
           (dtype_ == DType::Float64 ? "" : ": the kernels users deploy, judged at their own precision");
  }

  std::optional<std::string> unavailable_reason() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return unavailable_locked();
  }

  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (c.op == "deform_roi_pool") return std::string("torchvision has no DeformRoIPool (it is an mmcv op)");
    if (!torch_has_dtype(c.op, dtype_, device_))
      return "torch has no " + std::string(dtype_name(dtype_)) + (device_ == TorchDevice::Cuda ? " CUDA" : " CPU") +
             " kernel of " + c.op;
    if (c.op == "roi_align") {
      const json mode = c.params.value("pool_mode", json("avg"));
      if (mode != "avg") return std::string("torchvision.ops.roi_align has no max mode (avg only)");
      // Measured on torchvision 0.14: roi_align with H = 0 or W = 0 and at least one roi
      // segfaults (the sampler indexes the empty image), so it is declined rather than crashed.
      const Tensor* x = c.opt("input");
      const Tensor* rois = c.opt("rois");
      if (x && rois && x->rank() == 4 && rois->rank() >= 1 && rois->dim(0) > 0 && (x->dim(2) == 0 || x->dim(3) == 0))
        return std::string("torchvision 0.14 roi_align crashes (SIGSEGV) on an input with H = 0 or W = 0");
      // SPEC §8: the CPU kernel reads an out-of-range sample as pixel (0, 0) times 0.
      if (x && device_ == TorchDevice::Cpu && corner_pixel_non_finite(*x))
        return std::string("torchvision's CPU roi_align reads an out-of-range sample as pixel (0, 0) times 0: NaN for a "
                           "NaN or Inf there, where SPEC §8 gives 0");
      return std::nullopt;
    }
    if (c.op == "roi_pool")
      // Measured (docs/semantics.md, "Max modes"): -FLT_MAX for a bin of NaN or of -Inf only.
      if (const Tensor* x = c.opt("input"); x && any_nan_or_minus_inf(*x))
        return std::string("torchvision roi_pool starts its max at -FLT_MAX: a bin of NaN or -Inf only gives -FLT_MAX");
    if (c.op == "deform_conv2d") {
      // A NaN offset makes torchvision floor NaN into an index and read out of bounds
      // (SIGSEGV measured); the project's rule for it (SPEC §2) has no peer to compare with.
      if (const Tensor* off = c.opt("offset"))
        for (double v : off->data)
          if (std::isnan(v)) return std::string("torchvision deform_conv2d reads out of bounds on a NaN offset");
      return std::nullopt;
    }
    if (c.op == "ps_roi_align") {
      // Measured on torchvision 0.14: like roi_align, ps_roi_align with H = 0 or W = 0 and at
      // least one roi segfaults (its sampler indexes row / column -1 of the empty image).
      const Tensor* x = c.opt("input");
      const Tensor* rois = c.opt("rois");
      if (x && rois && x->rank() == 4 && rois->rank() >= 1 && rois->dim(0) > 0 && (x->dim(2) == 0 || x->dim(3) == 0))
        return std::string("torchvision 0.14 ps_roi_align crashes (SIGSEGV) on an input with H = 0 or W = 0");
      return std::nullopt;
    }
    if (c.op == "ms_deform_attn") {
      // The pure-PyTorch formulation (peer/msda_pytorch.py) samples a non-finite location
      // through grid_sample, which gives NaN (measured); the spec samples nothing there.
      if (const Tensor* loc = c.opt("sampling_locations"))
        for (double v : loc->data)
          if (!std::isfinite(v)) return std::string("the pure-PyTorch ms_deform_attn gives NaN for a non-finite sampling location");
      // Measured: at x = -1 or y = -1 exactly, grid_sample reads pixel 0 at weight 0 where the
      // spec's open range (-1, size) samples nothing; only a non-finite value tells them apart.
      if (const Tensor* value = c.opt("value"); value && any_non_finite(*value))
        return std::string("the pure-PyTorch ms_deform_attn reads pixel 0 at weight 0 on a location at -1 exactly: NaN "
                           "for a non-finite value, where the spec samples nothing");
      return std::nullopt;
    }
    if (c.op == "grid_sample") {
      // Measured on torch 1.13 CPU, a NaN or Inf grid value: bilinear with border or reflection
      // padding segfaults (a float-to-int index of NaN), and the others give NaN (bilinear,
      // bicubic) or an edge pixel (nearest with border or reflection); only nearest with zeros
      // padding gives the spec's 0 (SPEC §12: samples nothing).
      const Tensor* g = c.opt("grid");
      const bool zeros_nearest = c.params.value("mode", json("bilinear")) == "nearest" &&
                                 c.params.value("padding_mode", json("zeros")) == "zeros";
      if (g && !zeros_nearest)
        for (double v : g->data)
          if (!std::isfinite(v))
            return std::string("torch 1.13 grid_sample crashes or gives NaN or an edge pixel for a non-finite grid value");
      return std::nullopt;
    }
    if (c.op == "interpolate" && dtype_ == DType::UInt8) {
      // Measured on torch 1.13: uint8 nearest and nearest-exact run; linear and cubic raise
      // "not implemented for 'Byte'", area "mean(): could not infer output dtype".
      const json mode = c.params.value("mode", json("nearest"));
      if (mode != "nearest" && mode != "nearest-exact")
        return "torch 1.13 has no uint8 kernel of interpolate mode " + mode.dump() + " (nearest and nearest-exact only)";
    }
    if (c.op == "interpolate" && dtype_ != DType::UInt8)
      // Measured: linear 2 -> 6 at scale 3 takes output 4's source index as 4.5 * (1/3) - 0.5,
      // an ulp below 1, and reads pixel 0 at weight 2e-16 where the spec reads pixel 1 alone:
      // within any bound on numbers, NaN for a NaN pixel.
      if (const Tensor* x = c.opt("input"); x && any_non_finite(*x))
        return std::string("torch's interpolate reaches pixels at weights of rounding size that the spec leaves out: NaN "
                           "for a NaN or Inf pixel");
    if (c.op == "roi_pool" || c.op == "ps_roi_pool" || c.op == "interpolate") return std::nullopt;
    return "the torchvision peer has no op " + c.op;
  }

  // One raw request/answer on this backend's bridge (used by the benchmark).
  json raw(const json& request) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto why = unavailable_locked()) throw BackendUnavailable("torchvision: " + *why);
    std::string reply;
    try {
      reply = client_.raw(request.dump(), 0);
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("torchvision: the bridge process: ") + e.what());
    }
    json j = json::parse(reply, nullptr, false);
    if (j.is_discarded()) throw std::runtime_error("torchvision: the bridge answered a line that is not JSON");
    if (j.is_object() && j.contains("error")) {
      const std::string e = "torchvision: " + j.value("error", std::string("unknown error"));
      // Its refusal of the op or mode is a peer without the case, not a failure.
      if (j.value("kind", "") == "unsupported") throw Unsupported(e);
      throw std::runtime_error(e);
    }
    return j;
  }

  Result run(const Case& c, const ValidParams& vp) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto why = unavailable_locked()) throw BackendUnavailable(name() + ": " + *why);

    try {
      Result r = client_.evaluate(c, vp);
      r.backend = name();
      return r;
    } catch (const KernelCrash& e) {
      // The bridge died mid-case: torch crashed on it (a failure of that case); the client
      // starts a new bridge on the next call.
      throw KernelCrash(std::string(e.what()) + "; a new bridge starts on the next call");
    }
  }

 private:
  // Starts the bridge and says hello once; the answer (or the reason there is none) is kept.
  const std::optional<std::string>& unavailable_locked() const {
    if (checked_) return unavailable_;
    checked_ = true;
    if (client_.unavailable()) {
      if (client_.refused() && device_ == TorchDevice::Cuda)
        unavailable_ = python_ + ": " + *client_.refused();  // most often: no CUDA device here
      else
        unavailable_ = client_.refused() ? python_ + " cannot import torch/torchvision (" + *client_.refused() +
                                               "): install python3-torchvision"
                                         : python_ + " " + script_ + ": " + *client_.unavailable();
    } else if (client_.hello()) {
      versions_ = json::object();
      for (const auto& [k, v] : client_.hello()->versions) (*versions_)[k] = v;
    }
    std::lock_guard<std::mutex> g(g_versions_mutex);
    g_versions[{python_, script_}] = versions_;
    return unavailable_;
  }

  DType dtype_;
  TorchDevice device_;
  std::string python_, script_;
  mutable std::mutex mutex_;  // one child, one conversation at a time
  mutable ProtocolClient client_;
  mutable bool checked_ = false;
  mutable std::optional<std::string> unavailable_;
  mutable std::optional<json> versions_;
};

}  // namespace

std::unique_ptr<Backend> make_torchvision_backend(DType dtype, TorchDevice device) {
  return std::make_unique<TorchvisionBackend>(dtype, device);
}

// The peer's backends, registered from here (core/backend.h): the float64 oracle first, then
// torch's CPU kernels in the dtypes users run them in (SPEC §15), and torch's CUDA kernels
// after the other peers (unavailable, saying why, where torch sees no GPU).
namespace {
std::unique_ptr<Backend> make_f64() { return make_torchvision_backend(DType::Float64); }
std::unique_ptr<Backend> make_f32() { return make_torchvision_backend(DType::Float32); }
std::unique_ptr<Backend> make_f16() { return make_torchvision_backend(DType::Float16); }
std::unique_ptr<Backend> make_bf16() { return make_torchvision_backend(DType::BFloat16); }
std::unique_ptr<Backend> make_uint8() { return make_torchvision_backend(DType::UInt8); }
std::unique_ptr<Backend> make_cuda_f32() { return make_torchvision_backend(DType::Float32, TorchDevice::Cuda); }
std::unique_ptr<Backend> make_cuda_f16() { return make_torchvision_backend(DType::Float16, TorchDevice::Cuda); }
const BackendRegistrar kF64(kOrderTorchvision, make_f64), kF32(kOrderTorchvision + 1, make_f32),
    kF16(kOrderTorchvision + 2, make_f16), kBf16(kOrderTorchvision + 3, make_bf16), kUint8(kOrderTorchvision + 4, make_uint8),
    kCudaF32(kOrderTorchCuda, make_cuda_f32), kCudaF16(kOrderTorchCuda + 1, make_cuda_f16);
}  // namespace

nlohmann::json torchvision_bench(const nlohmann::json& request) {
  static TorchvisionBackend bench_bridge;  // its own child: timings never share it with evaluations
  return bench_bridge.raw(json{{"bench", request}});
}

std::optional<nlohmann::json> torchvision_versions() {
  const std::pair<std::string, std::string> key{env_or("OPLAB_PYTHON", OPLAB_PYTHON),
                                                peer_script()};
  {
    std::lock_guard<std::mutex> g(g_versions_mutex);
    auto it = g_versions.find(key);
    if (it != g_versions.end()) return it->second;
  }
  TorchvisionBackend probe;
  (void)probe.unavailable_reason();  // records its answer in g_versions
  std::lock_guard<std::mutex> g(g_versions_mutex);
  return g_versions[key];
}

}  // namespace oplab
