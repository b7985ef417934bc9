// Image.resize and cv2.resize take one image and an output size (width, height): the script
// loops over the case's [N, C] planes and asks each for the spec's output size, as the peers
// do (peer/pillow_bridge.py, peer/opencv_backend.cpp).
#include "peer/plane_resize_repro.h"

#include <stdexcept>

#include "core/params.h"
#include "peer/repro_python.h"

namespace oplab {

namespace {

std::string mode_of(const Case& c) { return c.params.value("mode", std::string("nearest")); }

// The loop over planes around `resize_plane`, an expression of `plane` (a 2-D numpy array).
std::string plane_loop(const ReproRequest& r, const std::string& resize_plane) {
  const Shape& s = r.spec.at("output").shape;
  if (s.size() != 4) throw std::runtime_error("repro: a plane-by-plane resize takes 4-D cases only");
  const std::string ho = std::to_string(s[2]), wo = std::to_string(s[3]);
  return "def library():\n"
         "    x = inputs[\"input\"]\n"
         "    out = np.zeros((x.shape[0], x.shape[1], " + ho + ", " + wo + "))\n"
         "    for n in range(x.shape[0]):\n"
         "        for c in range(x.shape[1]):\n"
         "            plane = x[n, c]\n"
         "            out[n, c] = np.asarray(" + resize_plane + ", dtype=np.float64)\n"
         "    return {\"output\": out}\n";
}

}  // namespace

ReproScript pillow_repro(const ReproRequest& r, bool uint8) {
  const std::string mode = mode_of(r.c);
  const std::string filter = mode == "bilinear" ? "BILINEAR" : mode == "bicubic" ? "BICUBIC" : mode == "area" ? "BOX" : "NEAREST";
  const Shape& s = r.spec.at("output").shape;
  const std::string size = "(" + std::to_string(s.at(3)) + ", " + std::to_string(s.at(2)) + ")";
  const std::string image = uint8 ? "Image.fromarray(plane.astype(np.uint8), mode=\"L\")"
                                  : "Image.fromarray(plane.astype(np.float32), mode=\"F\")";
  PythonRepro p;
  p.needs = "Pillow and numpy";
  p.imports = "import PIL\nfrom PIL import Image";
  p.library = "RESAMPLING = getattr(Image, \"Resampling\", Image)  # Pillow >= 9.1 names the filters Image.Resampling.*\n\n\n" +
              plane_loop(r, image + ".resize(" + size + ", resample=RESAMPLING." + filter + ")");
  p.about = std::string("Pillow's Image.resize on mode ") + (uint8 ? "L (8-bit)" : "F (float32)") + " images, " + filter;
  return python_repro(r, p);
}

ReproScript opencv_repro(const ReproRequest& r, const std::string& np_dtype) {
  const std::string mode = mode_of(r.c);
  const std::string flag = mode == "nearest"         ? "INTER_NEAREST"
                           : mode == "nearest-exact" ? "INTER_NEAREST_EXACT"
                           : mode == "bilinear"      ? "INTER_LINEAR"
                           : mode == "bicubic"       ? "INTER_CUBIC"
                                                     : "INTER_AREA";
  const Shape& s = r.spec.at("output").shape;
  const std::string size = "(" + std::to_string(s.at(3)) + ", " + std::to_string(s.at(2)) + ")";
  PythonRepro p;
  p.needs = "OpenCV's cv2 and numpy";
  p.imports = "import cv2\ncv2.setNumThreads(1)";
  p.library = plane_loop(r, "cv2.resize(np.ascontiguousarray(plane, dtype=np." + np_dtype + "), " + size +
                                ", interpolation=cv2." + flag + ")");
  p.about = "OpenCV's cv2.resize on " + np_dtype + " images, " + flag;
  return python_repro(r, p);
}

}  // namespace oplab
