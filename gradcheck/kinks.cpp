// Generic half of the kink machinery: what a step along a direction meets, from the sources
// the per-op finders enumerate (each registered next to its op's kink code).
#include <algorithm>
#include <cmath>
#include <map>

#include "gradcheck/kinks.h"
#include "gradcheck/kinks_ops.h"


namespace oplab::gradcheck {

std::string KinkSource::label(int64_t k) const {
  if (k == lo && *edge_lo) return edge_lo;
  if (k == hi && *edge_hi) return edge_hi;
  if (k == lo + 1 && *near_lo) return near_lo;
  if (k == hi - 1 && *near_hi) return near_hi;
  return lattice;
}

void KinkReach::add(double t) {
  if (t > 0) ahead = std::min(ahead, t);
  else if (t < 0) behind = std::min(behind, -t);
}

void add_source_reach(const KinkSource& s, double rate, KinkReach& r) {
  if (rate == 0 || !std::isfinite(rate) || !std::isfinite(s.value)) return;
  const double c = s.value, fl = std::floor(c);
  const double lo = double(s.lo), hi = double(s.hi);
  const bool on_integer = c == fl;
  if (on_integer && c >= lo && c <= hi) {
    r.at.insert(s.label(int64_t(c)));
    (rate > 0 ? r.at_up : r.at_down) = true;
    ++r.at_sources;
  }
  // The nearest integers of the range strictly above and strictly below c; a step reaches
  // the one above when the value rises (rate > 0) for t > 0, or for t < 0 when it falls.
  const double up = std::max(on_integer ? c + 1 : std::ceil(c), lo);
  const double down = std::min(on_integer ? c - 1 : fl, hi);
  if (up <= hi) r.add((up - c) / rate);
  if (down >= lo) r.add((down - c) / rate);
}

namespace {

// d value / d x_i summed over repeated entries (clamped corners can name a pixel twice).
std::vector<std::pair<int64_t, double>> merged(std::vector<std::pair<int64_t, double>> g) {
  std::sort(g.begin(), g.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<int64_t, double>> out;
  for (const auto& e : g) {
    if (!out.empty() && out.back().first == e.first) out.back().second += e.second;
    else out.push_back(e);
  }
  return out;
}

// Both bilinear rules (deform_conv2d's zero-padded one, RoIAlign's) cut a coordinate off at -1
// and at size and switch pieces at every integer between: the same kinks, which only their
// names tell apart (each rule names its own below).
KinkSource integer_axis(double value, int64_t size, std::vector<std::pair<int64_t, double>> grad) {
  KinkSource s;
  s.value = value;
  s.grad = std::move(grad);
  s.lo = -1;
  s.hi = size;
  return s;
}

}  // namespace

OpKinks affine_kinks() {
  OpKinks k;
  k.affine = [](const Case&, const std::string&) { return true; };
  k.sources = [](const Case&, const std::string&, const KinkVisitor&) {};
  return k;
}

const OpKinks& op_kinks(const std::string& op) { return OpTraits<OpKinks>::of(op); }

bool has_kink_finder(const std::string& op) { return OpTraits<OpKinks>::has(op); }

int piece_degree(const Case& c, const std::string& input) {
  const OpKinks& k = op_kinks(c.op);
  return k.piece_degree ? k.piece_degree(c, input) : 2;
}

double piece_width(const Case& c, const std::string& input) {
  const OpKinks& k = op_kinks(c.op);
  return k.piece_width ? k.piece_width(c, input) : 0.0;
}

double term_scale(const Case& c) {
  const OpKinks& k = op_kinks(c.op);
  return k.term_scale ? k.term_scale(c) : 0.0;
}

KinkReach reach_along(const Case& c, const std::string& input, const Tensor& u) {
  KinkReach r;
  op_kinks(c.op).sources(c, input, [&](const KinkSource& s) {
    // Merged first: a gap between two samples on the same corners has coefficients that
    // cancel exactly, and must give a rate of exactly 0, not rounding noise.
    double rate = 0;
    for (const auto& [i, a] : merged(s.grad)) rate += a * u.data[size_t(i)];
    add_source_reach(s, rate, r);
  });
  return r;
}

std::vector<KinkReach> reach_each(const Case& c, const std::string& input) {
  std::vector<KinkReach> r(size_t(c.in(input).numel()));
  op_kinks(c.op).sources(c, input, [&](const KinkSource& s) {
    for (const auto& [i, a] : merged(s.grad)) add_source_reach(s, a, r[size_t(i)]);
  });
  return r;
}

KinkSource zero_padded_axis(double value, int64_t size, std::vector<std::pair<int64_t, double>> grad, bool is_y) {
  KinkSource s = integer_axis(value, size, std::move(grad));
  s.edge_lo = is_y ? "y=-1" : "x=-1";
  s.edge_hi = is_y ? "y=H" : "x=W";
  s.lattice = is_y ? "y=0..H-1" : "x=0..W-1";
  return s;
}

KinkSource roi_rule_axis(double value, int64_t size, std::vector<std::pair<int64_t, double>> grad, bool is_y) {
  KinkSource s = integer_axis(value, size, std::move(grad));
  s.edge_lo = is_y ? "y=-1 (jump)" : "x=-1 (jump)";
  s.edge_hi = is_y ? "y=H (jump)" : "x=W (jump)";
  s.near_lo = is_y ? "y=0 (clamp)" : "x=0 (clamp)";
  s.near_hi = is_y ? "y=H-1 (clamp)" : "x=W-1 (clamp)";
  s.lattice = is_y ? "y=1..H-2" : "x=1..W-2";
  return s;
}

KinkSource max_gap(double gap, std::vector<std::pair<int64_t, double>> grad, const char* label) {
  KinkSource s;
  s.value = gap;
  s.grad = std::move(grad);
  s.lo = s.hi = 0;
  s.edge_lo = s.edge_hi = s.lattice = label;
  return s;
}

}  // namespace oplab::gradcheck
