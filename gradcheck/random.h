#pragma once
// Deterministic random numbers for the gradient checks. The standard distributions of
// <random> are implementation-defined, so a fixed seed would not give the same directions
// on another standard library; splitmix64 and Box-Muller written out here do.
#include <cmath>
#include <cstdint>
#include <string>

#include "core/tensor.h"

namespace oplab::gradcheck {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  // A generator for one named purpose, independent of every other name under the same seed.
  static Rng derive(uint64_t seed, const std::string& purpose) {
    uint64_t h = seed ^ 0x9e3779b97f4a7c15ull;
    for (unsigned char ch : purpose) h = (h ^ ch) * 0x100000001b3ull;
    return Rng(h);
  }

  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {
    const double u1 = 1.0 - uniform(), u2 = uniform();  // u1 in (0, 1]: log is finite
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  double sign() { return (next() & 1) ? 1.0 : -1.0; }

  Tensor normal_tensor(const Shape& shape) {
    Tensor t(shape);
    for (double& v : t.data) v = normal();
    return t;
  }

 private:
  uint64_t state_;
};

}  // namespace oplab::gradcheck
