#include "fuzz/gen_values.h"

namespace oplab::fuzz {

namespace {
double signed_pick(double magnitude) { return *rc::gen::element(1.0, -1.0) * magnitude; }
}  // namespace

double pick_real(double mag) {
  const int64_t steps = 1 << 20;
  return signed_pick(mag * double(*rc::gen::inRange<int64_t>(0, steps + 1)) / double(steps));
}

double pick_value() {
  switch (*rc::gen::weightedElement<int>({{6, 0}, {3, 1}, {1, 2}})) {
    case 0: return pick_real(2.0);
    case 1: return signed_pick(double(*rc::gen::inRange<int>(0, 9)) / 4.0);
    default: return 0.0;
  }
}

Tensor pick_tensor(const Shape& shape) {
  Tensor t(shape);
  for (double& v : t.data) v = pick_value();
  return t;
}

double pick_edge(const std::vector<double>& edges) {
  const double e = *rc::gen::elementOf(edges);
  const double hair = *rc::gen::element(0.0, 1e-9, -1e-9);
  return e + hair;
}

int64_t pick_dim(int64_t lo, int64_t hi) { return *rc::gen::inRange<int64_t>(lo, hi + 1); }

double pick_coord(int64_t len) {
  const double L = double(len);
  switch (*rc::gen::weightedElement<int>({{4, 0}, {3, 1}, {2, 2}, {1, 3}})) {
    case 0: return pick_real(L + 2.0);                                            // smooth, mostly inside
    case 1: return pick_edge({-1.0, 0.0, L - 1.0, L, -0.5, L - 0.5});             // the bilinear cut-offs
    case 2: return double(*rc::gen::inRange<int>(-8, 4 * int(len) + 9)) / 4.0;    // quarter lattice
    default: return signed_pick(1000.0 + L);                                       // far outside
  }
}

}  // namespace oplab::fuzz
