#include "peer/opencv_backend.h"

#include "peer/feature_values.h"
#include "peer/plane_resize_repro.h"

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

// Resizes every [H, W] plane of the case's input to the case's output size, on planes of the
// given cv type: CV_64F, CV_32F (a float32 image pipeline) or CV_8U (8-bit images, the pixels
// the harness sent: integers, so the conversion is exact). cv::resize given an output size
// ignores fx, fy and takes the scale in/out (its source: inv_scale = dsize/ssize).
Tensor resize_planes(const Case& c, const InterpParams& p, int threads, int type) {
  const Tensor& x = c.in("input");
  const int64_t H = p.axes[0].in, W = p.axes[1].in, Ho = p.axes[0].out, Wo = p.axes[1].out;
  Tensor out(p.output_shape());
  std::lock_guard<std::mutex> lock(g_cv_mutex);
  cv::setNumThreads(threads);
  for (int64_t n = 0; n < p.N * p.C; ++n) {
    const cv::Mat plane64(int(H), int(W), CV_64F, const_cast<double*>(x.data.data() + n * H * W));
    cv::Mat src, dst;
    plane64.convertTo(src, type);
    try {
      cv::resize(src, dst, cv::Size(int(Wo), int(Ho)), 0, 0, cv_flag(p.mode));
    } catch (const cv::Exception& e) {
      throw std::runtime_error("opencv: cv::resize raised: " + e.err);
    }
    if (dst.rows != int(Ho) || dst.cols != int(Wo) || dst.type() != type)
      throw std::runtime_error("opencv: cv::resize answered another size or type than asked");
    cv::Mat out64(int(Ho), int(Wo), CV_64F, out.data.data() + n * Ho * Wo);
    dst.convertTo(out64, CV_64F);
    if (out64.data != reinterpret_cast<uchar*>(out.data.data() + n * Ho * Wo))
      throw std::runtime_error("opencv: the output plane was reallocated");
  }
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
  // `opencv` on CV_64F planes (the semantic baseline); `opencv-f32` on CV_32F planes and
  // `opencv-uint8` on CV_8U ones (opt-in, each judged at its own precision).
  explicit OpencvBackend(OpencvDepth depth = OpencvDepth::F64) : depth_(depth) {}
  std::string name() const override {
    return depth_ == OpencvDepth::F32 ? "opencv-f32" : depth_ == OpencvDepth::U8 ? "opencv-uint8" : "opencv";
  }
  std::string description() const override {
    const char* data = depth_ == OpencvDepth::F32   ? "CV_32F data (the float32 pipeline users run)"
                       : depth_ == OpencvDepth::U8 ? "CV_8U data (8-bit images; INTER_LINEAR and INTER_CUBIC weights in 11-bit fixed point)"
                                                   : "CV_64F data (weights and coordinates in float32)";
    return "OpenCV " + opencv_version().value_or("(not built)") + " cv::resize, 2-D interpolate per [H, W] plane on " + data +
           ", one thread, forward only";
  }
  bool opt_in() const override { return depth_ != OpencvDepth::F64; }
  DType dtype(const std::string&) const override { return depth_ == OpencvDepth::U8 ? DType::UInt8 : DType::Float32; }
  double uint8_error(const Case& c) const override { return depth_ == OpencvDepth::U8 ? opencv_uint8_error(c) : 0.0; }
  std::optional<std::string> unavailable_reason() const override {
#ifdef OPLAB_HAVE_OPENCV
    return std::nullopt;
#else
    return std::string("built without OpenCV: install libopencv-dev (scripts/setup.sh) and reconfigure");
#endif
  }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (auto why = why_unsupported(c)) return why;
    // Measured (cv::resize, area and bilinear): NaN where the spec gives Inf, Inf where it
    // gives NaN, and a neighbour of a NaN moved; uint8 images are quantised, finite.
    if (depth_ != OpencvDepth::U8 && any_non_finite(c.in("input")))
      return std::string("cv::resize weighs a NaN or Inf pixel otherwise than the spec (its own taps and weights)");
    return std::nullopt;
  }
  // OpenCV keeps data in double but its linear, cubic and area coefficient tables and the
  // source coordinate they come from in float32 (resize.cpp): judged by the float32 bound.
  bool is_float32() const override { return true; }
  bool computes_grads(const std::string&) const override { return false; }
  const std::vector<Divergence>& divergences() const override { return opencv_divergences(); }
  bool writes_repro() const override { return true; }
  std::optional<ReproScript> repro_script(const ReproRequest& r) const override {
    return opencv_repro(r, depth_ == OpencvDepth::F32 ? "float32" : depth_ == OpencvDepth::U8 ? "uint8" : "float64");
  }

  Result run(const Case& c, const ValidParams& vp) override {
#ifdef OPLAB_HAVE_OPENCV
    const InterpParams& p = vp.as<InterpParams>();
    Result r;
    r.op = c.op;
    r.backend = name();
    const int type = depth_ == OpencvDepth::F32 ? CV_32F : depth_ == OpencvDepth::U8 ? CV_8U : CV_64F;
    r.outputs["output"] = resize_planes(c, p, 1, type);
    return r;
#else
    throw BackendUnavailable("opencv: " + *unavailable_reason());
#endif
  }

 private:
  OpencvDepth depth_;
};

}  // namespace

std::unique_ptr<Backend> make_opencv_backend(OpencvDepth depth) { return std::make_unique<OpencvBackend>(depth); }

namespace {
std::unique_ptr<Backend> make_f64() { return make_opencv_backend(OpencvDepth::F64); }
std::unique_ptr<Backend> make_f32() { return make_opencv_backend(OpencvDepth::F32); }
std::unique_ptr<Backend> make_u8() { return make_opencv_backend(OpencvDepth::U8); }
const BackendRegistrar kRegistrar(kOrderOpencv, make_f64), kF32(kOrderOpencv + 1, make_f32),
    kU8(kOrderOpencv + 2, make_u8);
}  // namespace

double opencv_uint8_error(const Case& c) {
  const InterpParams p = parse_interpolate(c);
  if (p.axes.size() != 2) return 0;
  // INTER_LINEAR and INTER_CUBIC on CV_8U (resize.cpp): weights rounded to 11 fractional bits
  // (INTER_RESIZE_COEF_BITS), the horizontal pass kept in int, the vertical one shifted back
  // with rounding: each weight within 2^-12, times a pixel of at most 255 and the other pass's
  // weights (|w| sums: 1 for linear, up to 1.27 for cubic's A = -0.75 taps).
  // INTER_AREA's weights are float (cvRound of a float sum: a float rounding, and a tie to
  // even, 2^-16 suffices); the nearest flags copy pixels.
  // INTER_AREA growing an axis runs the linear path (opencv-area-grow-linear), fixed point too.
  const double linear = 255.0 * 0x1p-12 * (2 * 1.0 + 2);
  switch (p.mode) {
    case InterpMode::Bilinear: return linear;
    case InterpMode::Bicubic: return 255.0 * 0x1p-12 * (4 * 1.27 + 4);
    case InterpMode::Area:
      for (const InterpAxis& a : p.axes)
        if (a.out > a.in) return linear;
      return 0x1p-16 * 255.0;
    default: return 0;
  }
}

std::optional<std::string> opencv_version() {
#ifdef OPLAB_HAVE_OPENCV
  return std::string(CV_VERSION);
#else
  return std::nullopt;
#endif
}

std::function<double(int)> start_opencv_bench(const Case& c, int threads) {
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
  return [planes, threads](int pre_runs) {
    for (int i = 0; i < pre_runs; ++i) resize_float32_planes(*planes, threads);
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
