#include "halide/halide_backend.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "halide/ops_glue.h"
#include "halide/thread_pool.h"

namespace oplab {

std::optional<std::string> started_before_fork(HalideDevice d);  // below

namespace {

using namespace halide_glue;

class HalideBackend : public Backend {
 public:
  HalideBackend(HalideDevice d, HalideStorage s) : device_(d), storage_(s) {}
  std::string name() const override { return halide_backend_name(device_, storage_); }
  std::string description() const override {
    if (half())
      return std::string("Halide kernels storing float16 and computing in float32, for the ops designed so (deform_roi_pool's "
                         "forward, NHWC, as the MLU design specifies it), ") +
             (device_ == HalideDevice::Cpu      ? "compiled for the CPU"
              : device_ == HalideDevice::Cuda ? "compiled to CUDA PTX"
                                              : "compiled to OpenCL C (float16 as its bits where the device lacks cl_khr_fp16)");
    switch (device_) {
      case HalideDevice::Cuda: return "Halide float32 kernels, ahead-of-time compiled to CUDA PTX";
      case HalideDevice::OpenCL:
        return "Halide float32 kernels with the CUDA kernels' GPU schedules, compiled to OpenCL C (runs on any "
               "OpenCL device, pocl's CPU device included)";
      case HalideDevice::Cpu: break;
    }
    return "Halide float32 kernels, ahead-of-time compiled for the CPU";
  }
  std::optional<std::string> unavailable_reason() const override { return device_unavailable_reason(device_); }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    const HalideOp* op = find_halide_op(c.op, storage_);
    if (!op) return std::string("no Halide ") + (half() ? "float16 " : "") + "kernel for " + c.op + " yet";
    return op->unsupported ? op->unsupported(c) : std::nullopt;
  }
  bool is_float32() const override { return !half(); }
  // The float16 kernels take their inputs as the judge rounds them (compare/dtype_case.h) and
  // hold every value in float16 storage; their sums are float32 (the default accumulation).
  DType dtype(const std::string& op) const override { return half() ? DType::Float16 : Backend::dtype(op); }
  bool computes_grads(const std::string& op) const override {
    const HalideOp* o = find_halide_op(op, storage_);
    return !(o && o->forward_only);
  }
  // The float32 kernels form their geometry with the reference's double operations
  // (strict_float) from the float32 inputs they round themselves. The float16 ones do the same
  // from float16 inputs, which the judge must round for them (compare/dtype_case.h: a backend
  // that declares this gets the case unrounded).
  bool geometry_as_reference() const override { return !half(); }
  bool slow_start() const override { return device_ == HalideDevice::OpenCL; }
  // The GPU backwards scatter into their gradients with float atomic adds (the generators'
  // schedules; on the CPU a task owns its block and adds in order): the order, and so the last
  // bits, is the device's. interpolate's backwards gather and are exact in their order.
  std::optional<std::string> nondeterministic(const std::string& op) const override {
    if (device_ == HalideDevice::Cpu || op == "interpolate" || !computes_grads(op)) return std::nullopt;
    return std::string("the GPU backward adds into its gradients with float atomics, in the order the device runs them");
  }
  Result run(const Case& c, const ValidParams& vp) override {
    const HalideOp* op = find_halide_op(c.op, storage_);
    if (!op) throw Unsupported(name() + ": no Halide kernel for " + c.op);
    if (auto why = device_unavailable_reason(device_)) throw BackendUnavailable(name() + ": " + *why);
    if (auto why = started_before_fork(device_)) throw BackendUnavailable(name() + ": " + *why);
    halide_glue::ThreadPoolBusy busy;
    Result r = op->run(c, vp, device_);
    // A path the glue does not list would be counted nowhere: the list and the calls must agree.
    const std::vector<std::string> listed = paths_on(op->paths, device_);
    for (const std::string& path : r.kernel_paths)
      if (std::find(listed.begin(), listed.end(), path) == listed.end())
        throw std::logic_error(name() + ": " + c.op + " took kernel path \"" + path + "\", which its glue does not list");
    return r;
  }
  std::vector<std::string> kernel_paths(const std::string& op) const override {
    const HalideOp* o = find_halide_op(op, storage_);
    return o ? paths_on(o->paths, device_) : std::vector<std::string>{};
  }

 private:
  bool half() const { return storage_ == HalideStorage::Float16; }
  HalideDevice device_;
  HalideStorage storage_;
};

}  // namespace

namespace halide_glue {

static std::vector<HalideOp>& halide_ops() {
  static std::vector<HalideOp> ops;
  return ops;
}

HalideOpRegistrar::HalideOpRegistrar(HalideOp op) { halide_ops().push_back(std::move(op)); }

std::vector<std::string> paths_on(const std::vector<KernelPath>& paths, HalideDevice device) {
  std::vector<std::string> out;
  for (const KernelPath& p : paths)
    if (p.on == PathOn::All || (p.on == PathOn::Gpu) == on_gpu(device)) out.emplace_back(p.name);
  return out;
}

void PathLog::take(const char* path) {
  if (std::find(taken_.begin(), taken_.end(), path) == taken_.end()) taken_.emplace_back(path);
}

const HalideOp* find_halide_op(const std::string& op, HalideStorage storage) {
  for (const auto& o : halide_ops())
    if (o.op == op && o.storage == storage) return &o;
  return nullptr;
}

}  // namespace halide_glue

const char* halide_backend_name(HalideDevice d, HalideStorage s) {
  const bool half = s == HalideStorage::Float16;
  switch (d) {
    case HalideDevice::Cuda: return half ? "halide-cuda-f16" : "halide-cuda";
    case HalideDevice::OpenCL: return half ? "halide-opencl-f16" : "halide-opencl";
    case HalideDevice::Cpu: break;
  }
  return half ? "halide-cpu-f16" : "halide-cpu";
}

namespace {

// A driver library by its versioned name (what a driver package always ships: libcuda.so.1,
// libOpenCL.so.1), else its plain one (which comes with the -dev package); nullptr if neither.
void* open_driver(const std::string& name, int mode) {
  void* lib = dlopen((name + ".1").c_str(), RTLD_LAZY | mode);
  return lib ? lib : dlopen(name.c_str(), RTLD_LAZY | mode);
}

// The CUDA questions, asked in a child process like the OpenCL ones below: a process that has
// called cuInit and then forks leaves its children unable to use CUDA at all (the driver's
// state does not survive a fork), and the campaigns and fuzzers fork their workers after
// asking whether a backend can run. The parent only loads the driver library.
enum CudaProbe { kCudaOk = 0, kNoCudaLib = 10, kNoCudaSymbols, kCudaInitFailed, kNoCudaDevice };

int probe_cuda_here() {
  void* lib = open_driver("libcuda.so", RTLD_LOCAL);
  if (!lib) return kNoCudaLib;
  using InitFn = int (*)(unsigned);
  using CountFn = int (*)(int*);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CountFn>(dlsym(lib, "cuDeviceGetCount"));
  if (!init || !count) return kNoCudaSymbols;
  if (init(0) != 0) return kCudaInitFailed;
  int n = 0;
  if (count(&n) != 0 || n == 0) return kNoCudaDevice;
  return kCudaOk;
}

// Runs `probe` in a child and returns its exit code (-1: crashed; -2: no answer in 30 s;
// -3: fork failed).
int probe_in_child(int (*probe)()) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) _exit(probe());
  if (pid < 0) return -3;
  int status = 0;
  // A driver or platform that takes longer than this to answer is not usable for testing.
  for (int waited_ms = 0; waitpid(pid, &status, WNOHANG) == 0; waited_ms += 10) {
    if (waited_ms > 30000) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -2;
    }
    usleep(10000);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

std::optional<std::string> cuda_unavailable_reason() {
  switch (probe_in_child(probe_cuda_here)) {
    case kCudaOk: break;
    case kNoCudaLib: return std::string("no CUDA driver (libcuda.so) on this machine");
    case kNoCudaSymbols: return std::string("the CUDA driver library lacks cuInit/cuDeviceGetCount");
    case kCudaInitFailed: return std::string("the CUDA driver failed to initialise (cuInit)");
    case kNoCudaDevice: return std::string("no CUDA device on this machine");
    case -2: return std::string("the CUDA driver did not answer within 30 s");
    case -3: return std::string("cannot ask the CUDA driver (fork failed)");
    default: return std::string("the CUDA driver query crashed");
  }
  // The Halide CUDA runtime finds the driver's entry points in the process first and loads
  // "libcuda.so" only when they are not there; a driver may ship only libcuda.so.1, so it is
  // loaded here, globally. Loading it initialises nothing.
  if (!open_driver("libcuda.so", RTLD_GLOBAL))
    return std::string("no CUDA driver (libcuda.so) on this machine");
  return std::nullopt;
}

namespace {

// The OpenCL questions, asked in a child process: an OpenCL platform may start threads when
// first asked (pocl does), and a process that forks after that leaves its children with a
// platform whose threads are gone, so their kernels never finish. The fuzzers fork a child per
// evaluation, so the parent must not start OpenCL for a mere availability check.
enum OpenClProbe { kOpenClOk = 0, kNoLoader = 10, kNoSymbols, kNoPlatform, kNoDevice };

int probe_opencl_here() {
  void* lib = open_driver("libOpenCL.so", RTLD_LOCAL);
  if (!lib) return kNoLoader;
  using PlatformsFn = int (*)(unsigned, void**, unsigned*);
  using DevicesFn = int (*)(void*, unsigned long, unsigned, void**, unsigned*);
  auto platforms = reinterpret_cast<PlatformsFn>(dlsym(lib, "clGetPlatformIDs"));
  auto devices = reinterpret_cast<DevicesFn>(dlsym(lib, "clGetDeviceIDs"));
  if (!platforms || !devices) return kNoSymbols;
  unsigned n = 0;
  if (platforms(0, nullptr, &n) != 0 || n == 0) return kNoPlatform;
  std::vector<void*> ids(n);
  platforms(n, ids.data(), nullptr);
  const unsigned long kAllDevices = 0xFFFFFFFF;  // CL_DEVICE_TYPE_ALL
  for (void* p : ids) {
    unsigned d = 0;
    if (devices(p, kAllDevices, 0, nullptr, &d) == 0 && d > 0) return kOpenClOk;
  }
  return kNoDevice;
}

// The process that first ran a kernel on each GPU device (0: none yet).
pid_t g_started_in[3] = {0, 0, 0};

}  // namespace

std::optional<std::string> opencl_unavailable_reason() {
  switch (probe_in_child(probe_opencl_here)) {
    case kOpenClOk: break;
    case -2: return std::string("the OpenCL platform query did not answer within 30 s");
    case -3: return std::string("cannot ask the OpenCL platforms (fork failed)");
    case kNoLoader: return std::string("no OpenCL ICD loader (libOpenCL.so.1) on this machine");
    case kNoSymbols: return std::string("the OpenCL library lacks clGetPlatformIDs/clGetDeviceIDs");
    case kNoPlatform: return std::string("no OpenCL platform on this machine (pocl-opencl-icd gives a CPU device)");
    case kNoDevice: return std::string("no OpenCL device on this machine");
    default: return std::string("the OpenCL platform query crashed");
  }
  // As for CUDA: the ICD loader is usually only libOpenCL.so.1 (the unversioned name comes
  // with the -dev package), so it is loaded here, globally, where the Halide runtime finds it.
  // Loading the loader starts no platform.
  if (!open_driver("libOpenCL.so", RTLD_GLOBAL))
    return std::string("no OpenCL ICD loader (libOpenCL.so.1) on this machine");
  return std::nullopt;
}

// Why this process must not run GPU kernels: it was forked after its parent had run them
// (neither an OpenCL platform's threads nor the CUDA driver's state survive a fork).
std::optional<std::string> started_before_fork(HalideDevice d) {
  if (d == HalideDevice::Cpu) return std::nullopt;
  pid_t& started = g_started_in[static_cast<int>(d)];
  const pid_t self = getpid();
  if (started == 0) {
    started = self;
    return std::nullopt;
  }
  if (started == self) return std::nullopt;
  const std::string what = d == HalideDevice::Cuda ? "CUDA" : "OpenCL";
  return what + " was started in the parent before this process was forked, and it does not survive a fork; run " +
         halide_backend_name(d) + " either only in forked children or only unforked";
}

std::optional<std::string> device_unavailable_reason(HalideDevice d) {
  // Asked once per process and device: the answer does not change, and asking has a cost
  // (the OpenCL question forks a child).
  switch (d) {
    case HalideDevice::Cuda: {
      static const std::optional<std::string> why = cuda_unavailable_reason();
      return why;
    }
    case HalideDevice::OpenCL: {
      static const std::optional<std::string> why = opencl_unavailable_reason();
      return why;
    }
    case HalideDevice::Cpu: break;
  }
  return std::nullopt;
}

// (Every CPU kernel's parallel loop runs on our pool; Halide's own pool is never started.)
void set_halide_threads(int n) { halide_glue::set_thread_pool_size(n); }

std::function<void()> halide_prepared_call(const Case& c, HalideDevice device, bool backward, HalideStorage storage) {
  const halide_glue::HalideOp* op = halide_glue::find_halide_op(c.op, storage);
  if (!op || !op->prepare) return {};
  std::function<void()> call = op->prepare(c, op_desc(c.op).parse(c), device, backward);
  if (!call) return {};
  return [call] {
    halide_glue::ThreadPoolBusy busy;
    call();
  };
}

std::unique_ptr<Backend> make_halide_backend(HalideDevice device, HalideStorage storage) {
  return std::make_unique<HalideBackend>(device, storage);
}

namespace {
std::unique_ptr<Backend> make_cpu() { return make_halide_backend(HalideDevice::Cpu); }
std::unique_ptr<Backend> make_cuda() { return make_halide_backend(HalideDevice::Cuda); }
std::unique_ptr<Backend> make_opencl() { return make_halide_backend(HalideDevice::OpenCL); }
std::unique_ptr<Backend> make_cpu_f16() { return make_halide_backend(HalideDevice::Cpu, HalideStorage::Float16); }
std::unique_ptr<Backend> make_cuda_f16() { return make_halide_backend(HalideDevice::Cuda, HalideStorage::Float16); }
std::unique_ptr<Backend> make_opencl_f16() { return make_halide_backend(HalideDevice::OpenCL, HalideStorage::Float16); }
const BackendRegistrar kCpu(kOrderHalide, make_cpu), kCuda(kOrderHalide + 1, make_cuda),
    kOpenCl(kOrderHalide + 2, make_opencl), kCpuF16(kOrderHalide + 3, make_cpu_f16),
    kCudaF16(kOrderHalide + 4, make_cuda_f16), kOpenClF16(kOrderHalide + 5, make_opencl_f16);
}  // namespace

}  // namespace oplab
