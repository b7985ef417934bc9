#include "gradcheck/aim.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "gradcheck/eval.h"
#include "gradcheck/kinks.h"
#include "gradcheck/random.h"

namespace oplab::gradcheck {

namespace {

constexpr size_t kMaxSources = 20000;  // enough to choose from; bounds the work on big grids

// The integer of [lo, hi] nearest to v.
double nearest_kink(const KinkSource& s) {
  return std::min(std::max(std::round(s.value), double(s.lo)), double(s.hi));
}

}  // namespace

std::optional<Case> aim_at_kinks(const Case& c, const std::string& input, uint64_t seed, int count) {
  std::vector<KinkSource> sources;
  size_t total = 0;
  op_kinks(c.op).sources(c, input, [&](const KinkSource& s) {
    ++total;
    if (sources.size() < kMaxSources && !s.grad.empty()) sources.push_back(s);
  });
  // Each attempt re-enumerates the sources to verify the hit: a case with very many (a huge
  // adaptive grid) is left to the generators' own edges.
  if (sources.empty() || total > kMaxSources) return std::nullopt;
  Rng rng = Rng::derive(seed, "aim/" + c.op + "/" + input);
  // A deterministic shuffle: which kinks get aimed at should not depend on the scan order only.
  for (size_t i = sources.size(); i > 1; --i) std::swap(sources[i - 1], sources[size_t(rng.next() % i)]);

  Case cur = c;
  std::set<int64_t> aimed;
  const size_t tries = std::min(sources.size(), size_t(8 * count));
  for (size_t t = 0; t < tries && int(aimed.size()) < count; ++t) {
    const KinkSource& s = sources[t];
    // The element that moves the source fastest; the step puts the source on its nearest kink.
    auto best = std::max_element(s.grad.begin(), s.grad.end(),
                                 [](const auto& a, const auto& b) { return std::fabs(a.second) < std::fabs(b.second); });
    if (best->second == 0 || aimed.count(best->first)) continue;
    const int64_t i = best->first;
    const double x0 = cur.in(input).data[size_t(i)];
    const double target = x0 + (nearest_kink(s) - s.value) / best->second;
    if (!std::isfinite(target)) continue;
    // Rounding may leave the source a hair off its integer: try the neighbouring doubles.
    double x = target;
    for (int step = 0; step <= 16; ++step) {
      Tensor moved = cur.in(input);
      moved.data[size_t(i)] = x;
      Case cand = with_input(cur, input, std::move(moved));
      if (reach_each(cand, input)[size_t(i)].on_kink()) {
        cur = std::move(cand);
        aimed.insert(i);
        break;
      }
      // 0, +1, -1, +2, -2, ... ulps away from the target
      x = target;
      const int k = step / 2 + 1;
      for (int j = 0; j < k; ++j) x = std::nextafter(x, step % 2 == 0 ? INFINITY : -INFINITY);
    }
  }
  if (aimed.empty()) return std::nullopt;
  return cur;
}

}  // namespace oplab::gradcheck
