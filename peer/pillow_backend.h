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
#include "core/params.h"
#include "peer/uint8_two_pass.h"

namespace oplab {

// uint8: `pillow-uint8`, mode L (8-bit) images, judged by the uint8 rule (SPEC §16); else
// `pillow`, mode F.
std::unique_ptr<Backend> make_pillow_backend(bool uint8 = false);

// Pillow's taps along one axis (Resample.c's precompute_coeffs): BILINEAR / BICUBIC for
// bilinear / bicubic (the antialias filters, SPEC §16), BOX for area; scale in/out, in double.
using PillowTaps = std::vector<std::vector<std::pair<int64_t, double>>>;
PillowTaps pillow_taps(InterpMode mode, int64_t in, int64_t out);

// How far Pillow's mode-L arithmetic may move an output pixel before its final rounding, in
// pixel steps (Backend::uint8_error): weights in fixed point with 22 fractional bits, and, when
// both axes change size, the horizontal pass's result rounded and clipped to 0..255 before the
// vertical pass weighs it.
Uint8Error pillow_uint8_error(const Case& c);

// The pillow backend's named divergences (peer/pillow_divergences.cpp).
const std::vector<Divergence>& pillow_divergences();

// A bench session of one case (the bench's CPU peer): its planes made Pillow images once in a
// bridge process of its own; the function times one Image.resize of every plane (ms) after
// `pre_runs` untimed ones in the same request, the planes split among `threads` threads. Throws
// BackendUnavailable or Unsupported (one line).
std::function<double(int pre_runs)> start_pillow_bench(const Case& c, int threads);

}  // namespace oplab
