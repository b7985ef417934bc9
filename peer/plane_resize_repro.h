#pragma once
// Standalone reproductions (core/repro.h) of the peers that resize one [H, W] plane at a time
// in Python: Pillow's Image.resize and OpenCV's cv2.resize (peer/plane_resize_repro.cpp).
#include "core/backend.h"

namespace oplab {

// Image.resize on mode L (uint8) or F (float32) images.
ReproScript pillow_repro(const ReproRequest& r, bool uint8);
// cv2.resize on planes of numpy dtype `np_dtype` ("float64", "float32", "uint8").
ReproScript opencv_repro(const ReproRequest& r, const std::string& np_dtype);

}  // namespace oplab
