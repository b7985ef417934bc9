#pragma once
// A backend evaluates valid cases of one or more ops (forward, and backward when the case
// has grad_output). The registry binds names to backends; `evaluate` is the one entry point
// every check uses: validate first (same rules for every backend), then run.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/case.h"
#include "core/divergence.h"
#include "core/op_desc.h"
#include "core/repro.h"

namespace oplab {

// What a backend is for, which decides how its disagreements read:
//  * Implementation: a kernel people use (ref, the peer, the Halide kernels). Any failure is
//    a finding and makes the checks exit non-zero.
//  * StudyVariant: an implementation from the seeds or from another library, kept to show
//    where and by how much it departs (dcn-4uiiurz1, dcn-onnx, drp-mmcv-grad).
//  * SeededBug: a published bug reproduced on purpose; a failure means the harness caught it.
// Variants' failures count toward the exit status only when the backend was named on the
// command line (not under `--backend all`).
enum class BackendRole { Implementation, StudyVariant, SeededBug };
const char* backend_role_name(BackendRole r);  // "implementation", "study-variant", "seeded-bug"

// The type a backend computes an op in. A backend of a floating dtype T is sent inputs rounded
// to T, the reference is evaluated on exactly those values, and its outputs are held to the
// SPEC §9 bound with T's unit roundoff; float64 backends to double agreement (docs/protocol.md).
// UInt8 (SPEC §16): images of 8-bit pixels, the inputs quantised to 0..255
// (compare/dtype_case.h), the outputs held to the reference rounded half up and clipped, one
// off only within the kernel's stated fixed-point error (Backend::uint8_error,
// compare/uint8_compare.h).
enum class DType { Float64, Float32, Float16, BFloat16, UInt8 };
const char* dtype_name(DType t);  // "float64", "float32", "float16", "bfloat16", "uint8"
std::optional<DType> dtype_from_name(const std::string& name);  // nullopt for any other name
// 2^-53, 2^-24, 2^-11, 2^-8; uint8: 2^-9 (half a step of 1/256, for messages only: the uint8
// rule counts in pixel steps).
double unit_roundoff(DType t);
// float32 for float16 and bfloat16, the type itself otherwise (Backend::accumulation).
inline DType default_accumulation(DType t) { return t == DType::Float16 || t == DType::BFloat16 ? DType::Float32 : t; }

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  // What runs when this backend evaluates, for records and replays: "exec: COMMAND" or
  // "plugin: PATH" for an external backend (docs/protocol.md); empty for one built into oplab.
  virtual std::string origin() const { return {}; }
  // Empty when the backend can run on this machine; otherwise why not (one line).
  virtual std::optional<std::string> unavailable_reason() const { return std::nullopt; }
  // Empty when this backend can evaluate the (already validated) case; otherwise why not.
  virtual std::optional<std::string> unsupported_reason(const Case& c) const { return std::nullopt; }
  // Evaluate a validated, supported case; `vp` holds its typed params (the op's *Params of
  // core/params.h, read with vp.as<P>()) and output shape, from the one validation evaluate() did.
  virtual Result run(const Case& c, const ValidParams& vp) = 0;
  // Validates `c` and runs it (evaluate() without its availability and support checks).
  Result run(const Case& c) { return run(c, op_desc(c.op).parse(c)); }
  // True when the backend already evaluates in a process of its own (the torchvision bridge):
  // the fuzz campaign then need not, and must not, fork around it (fuzz/isolate.h).
  virtual bool out_of_process() const { return false; }
  // True when a process's first evaluation costs far more than the next (an OpenCL platform
  // builds and loads its kernels in every new process): the fuzz campaign then isolates it in
  // one long-lived worker process rather than a child per evaluation (fuzz/worker.h).
  virtual bool slow_start() const { return false; }
  // True for float32 kernels: they are judged by the per-element error bound of SPEC §9
  // (compare/float_compare.h), not by double-precision agreement.
  virtual bool is_float32() const { return false; }
  // The type this backend computes `op` in; built-in backends say it through is_float32(),
  // external ones declare it per op (docs/protocol.md).
  virtual DType dtype(const std::string& op) const { return is_float32() ? DType::Float32 : DType::Float64; }
  // The type its sums are accumulated in (SPEC §15): a float16 or bfloat16 kernel is assumed to
  // accumulate in float32, as production half kernels do, unless it says otherwise (torch's CPU
  // RoI kernels in float16 add every sample in half). The bound's gamma_n takes this type's u.
  virtual DType accumulation(const std::string& op) const { return default_accumulation(dtype(op)); }
  // For a uint8 op: how far, in pixel steps, the kernel's own arithmetic (fixed-point weights,
  // rounded and clipped intermediate images) may move an output from the exact value before it
  // rounds, on this case (as it is sent). 0: it rounds the exact value half up, as the spec.
  virtual double uint8_error(const Case&) const { return 0; }
  // For a uint8 op: how far an intermediate image stored in 8 bits may be clipped to 0..255, in
  // output pixel steps (a two-pass bicubic's first pass overshooting a sharp edge). Not an error
  // of rounding: where only it explains a pixel, the case is beyond what the uint8 rule can
  // judge (precision-exhausted, shown apart), never an agreement.
  virtual double uint8_clipping(const Case&) const { return 0; }
  // False when the backend evaluates only the forward of `op`: cases with grad_output are then
  // sent without it and its gradients are not judged.
  virtual bool computes_grads(const std::string& op) const { return true; }
  // For a float32 backend: true when it forms boxes, bins, grids and sample positions from its
  // float32 inputs with the reference's double operations, rounding in float32 only where its
  // op's comparison traits emulate it (the Halide kernels). A sample exactly on a cut-off is
  // then decided as the reference decides it, and only that rounding may explain a boundary
  // flip (compare/flip_rule.h); false leaves the backend's rounding undeclared.
  virtual bool geometry_as_reference() const { return false; }
  virtual BackendRole role() const { return BackendRole::Implementation; }
  // True for a backend that `--backend all` leaves out: it runs only when named. torch's
  // reduced-precision kernels (torchvision-f32, -f16, -bf16) are, while their calibration
  // against the precision rule is under way (README, "What a kernel is held to").
  virtual bool opt_in() const { return false; }
  // Why two evaluations of one case of `op` may give different bits (float atomics in a
  // scatter, whose order the hardware picks); nullopt: the same bits every time, as the
  // determinism property (fuzz/prop_determinism.cpp) holds it to. Declared, the two answers are
  // held to the backend's bound instead, and the record says why.
  virtual std::optional<std::string> nondeterministic(const std::string& op) const { return std::nullopt; }
  // Every kernel path this backend's kernels for `op` can take (Result::kernel_paths names the
  // ones a call took): a fast kernel branches (a kernel chosen by size, a specialisation, a
  // block of channels past the first), and a path no case reaches is untested. The campaign
  // counts the cases reaching each and names those none reached. Empty: the backend does not say.
  virtual std::vector<std::string> kernel_paths(const std::string& op) const { return {}; }
  // What this backend is known to do differently from SPEC, each proven on its equivalent
  // case (core/divergence.h). A disagreement one of them explains is not a failure.
  virtual const std::vector<Divergence>& divergences() const {
    static const std::vector<Divergence> none;
    return none;
  }
  // A standalone script that shows `r` with this backend's library and without oplab
  // (core/repro.h); nullopt for a backend that is not a library one can call outside oplab (our
  // kernels, the variants, external backends). May start a process of the peer's (its bridge).
  virtual std::optional<ReproScript> repro_script(const ReproRequest& r) const { return std::nullopt; }
  // Whether repro_script writes scripts at all: asked before any work.
  virtual bool writes_repro() const { return false; }
};

// Checks the case against SPEC §7 (throws InvalidCase), returns the output shape.
Shape validate_case(const Case& c);

// validate_case, then availability (BackendUnavailable), support (Unsupported), then run.
Result evaluate(Backend& backend, const Case& c);

// Every backend but ref registers itself from its own file with a file-scope BackendRegistrar
// (peers in peer/, our kernels in halide/, study and seeded-bug variants in variants/); the
// CLI's registry lists ref, then them by order. Adding a peer or a variant means adding a file.
using BackendFactory = std::unique_ptr<Backend> (*)();
struct BackendRegistrar {
  BackendRegistrar(int order, BackendFactory factory);
};
// The orders, so that `oplab backends` (and `--backend all`) lists the oracle peer and torch's
// CPU kernels, our kernels, the other peers, torch's CUDA kernels, then the variants (seeded
// bugs from 110, study variants from 210, as their files say).
constexpr int kOrderTorchvision = 10;  // torchvision, -f32, -f16, -bf16
constexpr int kOrderHalide = 20;       // halide-cpu, -cuda, -opencl, then their -f16
constexpr int kOrderOnnxruntime = 30;  // onnxruntime, onnxruntime-f32
constexpr int kOrderOpencv = 32;
constexpr int kOrderPillow = 34;      // pillow
constexpr int kOrderTorchCuda = 40;    // torchvision-cuda-f32, -f16
std::vector<BackendFactory> registered_backend_factories();  // in order (lowest first)

class Registry {
 public:
  void add(std::unique_ptr<Backend> b);
  Backend* find(const std::string& name) const;  // nullptr when absent
  std::vector<Backend*> all() const;
  std::vector<std::string> names() const;

 private:
  std::vector<std::unique_ptr<Backend>> backends_;
};

}  // namespace oplab
