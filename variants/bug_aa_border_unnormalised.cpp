// Seeded bug `bug-aa-border-unnormalised`: antialias weights divided by the uncut filter's sum at
// the borders, not renormalised over the taps kept (edge pixels darken). interpolate with
// antialias (bilinear and bicubic) only; the kernel is the naive resample of antialias_steps.h
// with one knob turned.
#include <memory>

#include "variants/antialias_steps.h"

namespace oplab {
namespace {

std::unique_ptr<Backend> make() {
  antialias_steps::Knobs k;
  k.renormalise = false;
  return std::make_unique<antialias_steps::SeededBug>(
      "bug-aa-border-unnormalised",
      "antialias weights divided by the uncut filter's sum at the borders, not renormalised over the taps kept (edge pixels darken)", k, false);
}

}  // namespace

static const BackendRegistrar r(122, make);

}  // namespace oplab
