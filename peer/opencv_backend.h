#pragma once
// The `opencv` peer backend: interpolate (2-D only) with OpenCV's cv::resize on CV_64F planes,
// one [H, W] plane at a time, at the output size the case computes (SPEC §14). Forward only.
// Built when CMake finds OpenCV (core, imgproc); otherwise the backend exists and says in one
// line that it cannot run here.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.h"

namespace oplab {

// The cv type of the planes cv::resize runs on: `opencv` (CV_64F), `opencv-f32` (CV_32F),
// `opencv-uint8` (CV_8U, judged by the uint8 rule, SPEC §16).
enum class OpencvDepth { F64, F32, U8 };
std::unique_ptr<Backend> make_opencv_backend(OpencvDepth depth = OpencvDepth::F64);

// How far cv::resize's CV_8U arithmetic may move an output pixel before its final rounding, in
// pixel steps (Backend::uint8_error).
double opencv_uint8_error(const Case& c);

// OpenCV's version ("4.6.0"), or nullopt when this binary was built without it.
std::optional<std::string> opencv_version();

// The opencv backend's named divergences (peer/opencv_divergences.cpp).
const std::vector<Divergence>& opencv_divergences();

// cv::resize of one case (validated, supported) on `threads` threads, warmed up once: a function
// that does `pre_runs` untimed runs and times one more (ms), to be called between other sides'
// runs. Unlike the evaluations (CV_64F), the timed run resizes float32 planes, as the other
// sides of a benchmark compute, into outputs allocated once, the planes split among the
// threads. Throws Unsupported / BackendUnavailable where it cannot run the case.
std::function<double(int pre_runs)> start_opencv_bench(const Case& c, int threads);

}  // namespace oplab
