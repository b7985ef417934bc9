// Seeded bug `bug-aa-support-unscaled`: antialias's support and argument not scaled by the
// downscale factor (the plain filter: aliasing). interpolate with antialias (bilinear and bicubic)
// only; the kernel is the naive resample of antialias_steps.h with one knob turned.
#include <memory>

#include "variants/antialias_steps.h"

namespace oplab {
namespace {

std::unique_ptr<Backend> make() {
  antialias_steps::Knobs k;
  k.scale_support = false;
  return std::make_unique<antialias_steps::SeededBug>(
      "bug-aa-support-unscaled",
      "antialias's support and argument not scaled by the downscale factor (the plain filter: aliasing)", k, false);
}

}  // namespace

static const BackendRegistrar r(121, make);

}  // namespace oplab
