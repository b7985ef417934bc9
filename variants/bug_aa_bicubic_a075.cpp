// Seeded bug `bug-aa-bicubic-a075`: antialias bicubic with Keys' a = -0.75 (plain bicubic's
// coefficient; Pillow and torch take -0.5). interpolate with antialias bicubic only; the kernel is
// the naive resample of antialias_steps.h with one knob turned.
#include <memory>

#include "variants/antialias_steps.h"

namespace oplab {
namespace {

std::unique_ptr<Backend> make() {
  antialias_steps::Knobs k;
  k.cubic_a = -0.75;
  return std::make_unique<antialias_steps::SeededBug>(
      "bug-aa-bicubic-a075",
      "antialias bicubic with Keys' a = -0.75 (plain bicubic's coefficient; Pillow and torch take -0.5)", k, true);
}

}  // namespace

static const BackendRegistrar r(123, make);

}  // namespace oplab
