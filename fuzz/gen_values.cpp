#include "fuzz/gen_values.h"

#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

namespace oplab::fuzz {

rc::Gen<size_t> weighted_index(std::vector<int> weights) {
  return [weights](const rc::Random& random, int) {
    const uint64_t total = uint64_t(std::accumulate(weights.begin(), weights.end(), 0));
    uint64_t r = rc::Random(random).next() % total;
    size_t i = 0;
    while (r >= uint64_t(weights[i])) r -= uint64_t(weights[i++]);
    return rc::shrinkable::shrinkRecur(i, [](size_t x) { return rc::shrink::towards<size_t>(x, 0); });
  };
}

namespace {
thread_local bool usual_only = false;
}  // namespace

bool usual_cases_only() { return usual_only; }
UsualCasesOnly::UsualCasesOnly() : before_(usual_only) { usual_only = true; }
UsualCasesOnly::~UsualCasesOnly() { usual_only = before_; }

namespace {
double sign() { return pick_one<double>({{1, 1.0}, {1, -1.0}}); }
}  // namespace

double pick_real(double mag) {
  const double s = sign();
  const int64_t steps = 1 << 20;
  return s * mag * double(*rc::gen::inRange<int64_t>(0, steps + 1)) / double(steps);
}

double pick_value() {
  switch (pick_one<int>({{1, 0}, {3, 1}, {6, 2}})) {
    case 0: return 0.0;
    case 1: return sign() * double(*rc::gen::inRange<int>(1, 9)) / 4.0;
    default: return pick_real(2.0);
  }
}

Tensor pick_tensor(const Shape& shape) {
  // One pick of its own (a nested exec): RapidCheck replays the picks of a case by position,
  // so a tensor whose element count shrinks (a smaller H) would otherwise hand its unused
  // positions to whatever is drawn next (the boxes), and the shrink would change the case
  // beyond recognition and be rejected. Nested, the later picks keep their own streams.
  return *rc::gen::exec([shape] {
    Tensor t(shape);
    if (t.numel() > 1 && pick_one<int>({{9, 0}, {1, 1}}) == 1) {
      const double v = pick_value();  // constant: every max is a tie, every bin alike
      for (double& x : t.data) x = v;
      return t;
    }
    for (double& v : t.data) v = pick_value();
    return t;
  });
}

void sometimes_one_non_finite(Tensor& t) {
  const int64_t n = t.numel();
  // (index + 1, value), or (0, -) for none: one pick, whatever n, so a shrink of the map keeps it.
  const auto [at, v] = *rc::gen::exec([n] {
    if (n == 0 || pick_one<int>({{7, 0}, {1, 1}}) == 0) return std::make_pair(int64_t(0), 0.0);
    const int64_t i = *rc::gen::inRange<int64_t>(0, n);
    return std::make_pair(i + 1, pick_of<double>({std::numeric_limits<double>::quiet_NaN(), INFINITY, -INFINITY}));
  });
  if (at > 0) t.data[size_t(at - 1)] = v;
}

double pick_edge(const std::vector<double>& edges) {
  const double e = pick_of(edges);
  const double hair = pick_one<double>({{1, 0.0}, {1, 1e-9}, {1, -1e-9}});
  return e + hair;
}

int64_t pick_dim(int64_t lo, int64_t hi) { return *rc::gen::inRange<int64_t>(lo, hi + 1); }

int64_t pick_extent(int64_t lo, int64_t hi) {
  switch (pick_one<int>({{10, 0}, {1, 1}, {1, 2}})) {
    case 0: return pick_dim(lo, hi);
    case 1: return std::max<int64_t>(lo, 1);
    default: return std::max<int64_t>(lo, pick_of<int64_t>({5, 7, 11, 13}));
  }
}

double pick_coord(int64_t len) {
  const double L = double(len);
  switch (pick_one<int>({{4, 0}, {3, 1}, {2, 2}, {1, 3}})) {
    case 0: return pick_real(L + 2.0);                                              // smooth, mostly inside
    case 1: return pick_edge({0.0, -1.0, L - 1.0, L, -0.5, L - 0.5});               // the bilinear cut-offs
    case 2: return double(*rc::gen::inRange<int>(-8, 4 * int(len) + 9)) / 4.0;      // quarter lattice
    default: return sign() * (1000.0 + L);                                          // far outside
  }
}

}  // namespace oplab::fuzz
