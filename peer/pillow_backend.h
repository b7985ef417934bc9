#pragma once
// The `pillow` peer backend: Pillow's Image.resize on mode F (float32) images, driven through
// the line protocol (external/exec_backend.h) by the Python bridge peer/pillow_bridge.py
// (SPEC §16). Forward only, 2-D interpolate: bilinear and bicubic as Pillow's BILINEAR and
// BICUBIC (antialiased filters, a = -0.5), nearest-exact as NEAREST, area as BOX; Pillow takes
// output sizes only. The interpreter is OPLAB_PYTHON (as for the torchvision peer) and the
// script the build's or the installed copy, or OPLAB_PILLOW_SCRIPT.
#include <memory>
#include <vector>

#include "core/backend.h"

namespace oplab {

std::unique_ptr<Backend> make_pillow_backend();

// The pillow backend's named divergences (peer/pillow_divergences.cpp).
const std::vector<Divergence>& pillow_divergences();

}  // namespace oplab
