#include "peer/opencv_backend.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <utility>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "core/op_desc.h"
#include "core/params.h"

#ifdef OPLAB_HAVE_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/core/utility.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace oplab {

namespace {

#ifdef OPLAB_HAVE_OPENCV
// The cv::resize flag of each 2-D mode; -1 for a mode OpenCV has no counterpart of.
int cv_flag(InterpMode m) {
  switch (m) {
    case InterpMode::Nearest: return cv::INTER_NEAREST;
    case InterpMode::NearestExact: return cv::INTER_NEAREST_EXACT;
    case InterpMode::Bilinear: return cv::INTER_LINEAR;
    case InterpMode::Bicubic: return cv::INTER_CUBIC;
    case InterpMode::Area: return cv::INTER_AREA;
    default: return -1;
  }
}

// OpenCV's thread pool is process-wide: every call sets the count it wants (one for
// evaluations, as the torchvision bridge; the benchmark's for timings).
std::mutex g_cv_mutex;

// Resizes every [H, W] plane of the case's input to the case's output size, on CV_64F data or
// (float32) on CV_32F data, the planes a float32 image pipeline hands cv::resize. cv::resize
// given an output size ignores fx, fy and takes the scale in/out (its source: inv_scale =
// dsize/ssize).
Tensor resize_planes(const Case& c, const InterpParams& p, int threads, bool float32) {
  const Tensor& x = c.in("input");
  const int64_t H = p.axes[0].in, W = p.axes[1].in, Ho = p.axes[0].out, Wo = p.axes[1].out;
  Tensor out(p.output_shape());
  std::vector<float> in32, out32;
  if (float32) in32.assign(x.data.begin(), x.data.end()), out32.assign(out.data.size(), 0.0f);
  std::lock_guard<std::mutex> lock(g_cv_mutex);
  cv::setNumThreads(threads);
  for (int64_t n = 0; n < p.N * p.C; ++n) {
    // cv::Mat over the tensor's own memory (or its float32 copy): no copy in, one copy out.
    void* in_plane = float32 ? static_cast<void*>(in32.data() + n * H * W) : const_cast<double*>(x.data.data() + n * H * W);
    void* out_plane = float32 ? static_cast<void*>(out32.data() + n * Ho * Wo) : static_cast<void*>(out.data.data() + n * Ho * Wo);
    const int type = float32 ? CV_32F : CV_64F;
    const cv::Mat src(int(H), int(W), type, in_plane);
    cv::Mat dst(int(Ho), int(Wo), type, out_plane);
    try {
      cv::resize(src, dst, cv::Size(int(Wo), int(Ho)), 0, 0, cv_flag(p.mode));
    } catch (const cv::Exception& e) {
      throw std::runtime_error("opencv: cv::resize raised: " + e.err);
    }
    if (dst.data != static_cast<uchar*>(out_plane))
      throw std::runtime_error("opencv: cv::resize reallocated its output");  // a size we did not ask for
  }
  if (float32) out.data.assign(out32.begin(), out32.end());
  return out;
}

// The benchmark's inputs: every [H, W] plane in float32, and room for every output plane.
struct Float32Planes {
  std::vector<float> in, out;
  int64_t count = 0;
  int H = 0, W = 0, Ho = 0, Wo = 0, flag = 0;
};

void resize_float32_planes(Float32Planes& f, int threads) {
  std::lock_guard<std::mutex> lock(g_cv_mutex);
  cv::setNumThreads(threads);
  std::atomic<bool> moved{false}, raised{false};
  cv::parallel_for_(cv::Range(0, int(f.count)), [&](const cv::Range& r) {
    for (int n = r.start; n < r.end; ++n) {
      const cv::Mat src(f.H, f.W, CV_32F, f.in.data() + int64_t(n) * f.H * f.W);
      float* o = f.out.data() + int64_t(n) * f.Ho * f.Wo;
      cv::Mat dst(f.Ho, f.Wo, CV_32F, o);
      try {
        cv::resize(src, dst, cv::Size(f.Wo, f.Ho), 0, 0, f.flag);
      } catch (const cv::Exception&) {
        raised = true;  // no exception may leave a worker thread
      }
      if (dst.data != reinterpret_cast<uchar*>(o)) moved = true;
    }
  });
  if (raised) throw std::runtime_error("opencv: cv::resize raised on a float32 plane");
  if (moved) throw std::runtime_error("opencv: cv::resize reallocated its output");  // a size we did not ask for
}
#endif

std::optional<std::string> why_unsupported(const Case& c) {
  if (c.op != "interpolate") return "the opencv peer has only interpolate (cv::resize), not " + c.op;
  const InterpParams p = parse_interpolate(c);
  if (p.axes.size() != 2) return std::string("OpenCV resizes 2-D images only (cv::resize), not 1-D or 3-D input");
  if (p.align_corners) return std::string("cv::resize has no align_corners (its linear grid is half-pixel)");
  if (p.antialias)
    return std::string("cv::resize has no antialiased bilinear or bicubic (its INTER_LINEAR and INTER_CUBIC keep 2 and 4 taps)");
  for (const InterpAxis& a : p.axes)
    if (a.in > (1 << 30) || a.out > (1 << 30)) return std::string("cv::resize takes int sizes");
  return std::nullopt;
}

class OpencvBackend : public Backend {
 public:
  // float32: `opencv-f32`, cv::resize on CV_32F planes (opt-in, judged at its own precision);
  // else `opencv`, on CV_64F planes, the semantic baseline.
  explicit OpencvBackend(bool float32 = false) : float32_(float32) {}
  std::string name() const override { return float32_ ? "opencv-f32" : "opencv"; }
  std::string description() const override {
    return "OpenCV " + opencv_version().value_or("(not built)") + " cv::resize, 2-D interpolate per [H, W] plane on " +
           (float32_ ? "CV_32F data (the float32 pipeline users run)" : "CV_64F data (weights and coordinates in float32)") +
           ", one thread, forward only";
  }
  bool opt_in() const override { return float32_; }
  std::optional<std::string> unavailable_reason() const override {
#ifdef OPLAB_HAVE_OPENCV
    return std::nullopt;
#else
    return std::string("built without OpenCV: install libopencv-dev (scripts/setup.sh) and reconfigure");
#endif
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override { return why_unsupported(c); }
  // OpenCV keeps data in double but its linear, cubic and area coefficient tables and the
  // source coordinate they come from in float32 (resize.cpp): judged by the float32 bound.
  bool is_float32() const override { return true; }
  bool computes_grads(const std::string&) const override { return false; }
  const std::vector<Divergence>& divergences() const override { return opencv_divergences(); }

  Result run(const Case& c, const ValidParams& vp) override {
#ifdef OPLAB_HAVE_OPENCV
    const InterpParams& p = vp.as<InterpParams>();
    Result r;
    r.op = c.op;
    r.backend = name();
    r.outputs["output"] = resize_planes(c, p, 1, float32_);
    return r;
#else
    throw BackendUnavailable("opencv: " + *unavailable_reason());
#endif
  }

 private:
  bool float32_;
};

}  // namespace

std::unique_ptr<Backend> make_opencv_backend(bool float32) { return std::make_unique<OpencvBackend>(float32); }

namespace {
std::unique_ptr<Backend> make_f64() { return make_opencv_backend(false); }
std::unique_ptr<Backend> make_f32() { return make_opencv_backend(true); }
const BackendRegistrar kRegistrar(kOrderOpencv, make_f64), kF32(kOrderOpencv + 1, make_f32);
}  // namespace

std::optional<std::string> opencv_version() {
#ifdef OPLAB_HAVE_OPENCV
  return std::string(CV_VERSION);
#else
  return std::nullopt;
#endif
}

std::function<double()> start_opencv_bench(const Case& c, int threads) {
  OpencvBackend b;
  if (auto why = b.unavailable_reason()) throw BackendUnavailable("opencv: " + *why);
  validate_case(c);
  if (auto why = b.unsupported_reason(c)) throw Unsupported("opencv: " + *why);
#ifdef OPLAB_HAVE_OPENCV
  // Timed as a user would run a float32 batch: the planes converted to float32 and the
  // outputs allocated once, outside the timing; the planes split among the threads
  // (cv::parallel_for_), each resized by one cv::resize call (nested parallelism inside
  // OpenCV runs serially). One cv::resize per plane with OpenCV's own threads on a 64 x 64
  // plane spends most of its time starting and joining them.
  const InterpParams p = parse_interpolate(c);
  auto planes = std::make_shared<Float32Planes>();
  const Tensor& x = c.in("input");
  planes->count = p.N * p.C;
  planes->H = int(p.axes[0].in), planes->W = int(p.axes[1].in);
  planes->Ho = int(p.axes[0].out), planes->Wo = int(p.axes[1].out);
  planes->flag = cv_flag(p.mode);
  planes->in.assign(x.data.begin(), x.data.end());
  planes->out.assign(size_t(planes->count) * size_t(planes->Ho) * size_t(planes->Wo), 0.0f);
  resize_float32_planes(*planes, threads);  // warm-up: OpenCV's pool and tables
  return [planes, threads] {
    const auto t0 = std::chrono::steady_clock::now();
    resize_float32_planes(*planes, threads);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
#else
  (void)threads;
  throw BackendUnavailable("opencv: this binary was built without OpenCV");
#endif
}

}  // namespace oplab
