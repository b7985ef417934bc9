#pragma once
// What a cubic convolution weight (A = -0.75, SPEC §6 and §12) computed in floating point errs
// by. Horner's rule rounds each partial result, so a weight errs by u times the sum of its
// partials' magnitudes, not by u of itself: near |d| = 1 and |d| = 2 the outer polynomial
// cancels from partials of about 3 to a weight near 0 (torch's float32 W(1.857) is 4.8e-7 from
// the double one: 2 ulps of 3, 37 ulps of W; ONNX Runtime's float64 W(1 + 1.5e-9) carries
// 1e-16 of absolute error on a weight of 7e-10). A bound of the kernel's Σ |terms| has to count
// those partials (interpolate.cpp, grid_sample.cpp beside this file).
#include <cmath>

namespace oplab::compare {

// Σ |partial results| of Horner's rule for W(d): ((A+2)|d| - (A+3)) |d| |d| + 1 inside 1,
// ((A |d| - 5A) |d| + 8A) |d| - 4A from 1 to 2, 0 beyond.
// A = -0.5 for antialias (SPEC §16).
inline double cubic_partials(double d, double A = -0.75) {
  const double t = std::fabs(d);
  double sum = 0;
  auto step = [&sum](double v) { sum += std::fabs(v); return v; };
  if (t <= 1) step(step(step(step(step((A + 2) * t) - (A + 3)) * t) * t) + 1);
  else if (t < 2) step(step(step(step(step(step(A * t) - 5 * A) * t) + 8 * A) * t) - 4 * A);
  return sum;
}

// The magnitude a tap of weight W(d) brings into a bound: |W(d)|, and where the kernel evaluates
// the polynomial in the bound's own type (`partials`), a quarter of its partials' sum too (the
// bound takes 8 u n of it, n >= 8 terms: above Horner's 6 roundings).
inline double cubic_tap_magnitude(double w, double d, bool partials) {
  return std::fabs(w) + (partials ? cubic_partials(d) / 4 : 0.0);
}

}  // namespace oplab::compare
