#pragma once
// The `pillow` peer backend: Pillow's Image.resize on mode F (float32) images, driven through
// the line protocol (external/exec_backend.h) by the Python bridge peer/pillow_bridge.py
// (SPEC §16). Forward only, 2-D interpolate: bilinear and bicubic as Pillow's BILINEAR and
// BICUBIC (antialiased filters, a = -0.5), nearest-exact as NEAREST, area as BOX; Pillow takes
// output sizes only. The interpreter is OPLAB_PYTHON (as for the torchvision peer) and the
// script the build's or the installed copy, or OPLAB_PILLOW_SCRIPT.
#include <functional>
#include <memory>
#include <vector>

#include "core/backend.h"

namespace oplab {

std::unique_ptr<Backend> make_pillow_backend();

// The pillow backend's named divergences (peer/pillow_divergences.cpp).
const std::vector<Divergence>& pillow_divergences();

// A bench session of one case (the bench's CPU peer): its planes made Pillow images once in a
// bridge process of its own; the function times one Image.resize of every plane (ms), the
// planes split among `threads` threads. Throws BackendUnavailable or Unsupported (one line).
std::function<double()> start_pillow_bench(const Case& c, int threads);

}  // namespace oplab
