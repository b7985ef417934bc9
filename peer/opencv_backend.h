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

// float32: `opencv-f32` (CV_32F planes); else `opencv` (CV_64F planes).
std::unique_ptr<Backend> make_opencv_backend(bool float32 = false);

// OpenCV's version ("4.6.0"), or nullopt when this binary was built without it.
std::optional<std::string> opencv_version();

// The opencv backend's named divergences (peer/opencv_divergences.cpp).
const std::vector<Divergence>& opencv_divergences();

// cv::resize of one case (validated, supported) on `threads` threads, warmed up once: a function
// that times one run (ms), to be called between other sides' runs. Unlike the evaluations (CV_64F),
// the timed run resizes float32 planes, as the other sides of a benchmark compute, into outputs
// allocated once, the planes split among the threads. Throws Unsupported /
// BackendUnavailable where it cannot run the case.
std::function<double()> start_opencv_bench(const Case& c, int threads);

}  // namespace oplab
