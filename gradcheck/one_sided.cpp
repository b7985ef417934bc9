#include "gradcheck/one_sided.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "gradcheck/fd.h"
#include "gradcheck/kinks.h"

namespace oplab::gradcheck {

namespace {

struct Side {
  double slope = 0, limit = 0;
};

// s at t = sign*h, sign*2h, sign*3h: the quadratic through them, its slope and value at 0.
Side fit(double s1, double s2, double s3, double h, double sign) {
  Side r;
  r.slope = sign * (-5 * s1 + 8 * s2 - 3 * s3) / (2 * h);
  r.limit = 3 * s1 - 3 * s2 + s3;
  return r;
}

std::string join(const std::set<std::string>& kinds) {
  std::string s;
  for (const auto& k : kinds) s += (s.empty() ? "" : " & ") + k;
  return s;
}

}  // namespace

std::vector<CheckRecord> one_sided(const CheckContext& ctx, const Case& c, const std::string& input, const Tensor& grad,
                                   int max_elements) {
  std::vector<CheckRecord> out;
  if (!c.grad_output || grad.shape != c.in(input).shape) return out;
  const Tensor& v = *c.grad_output;
  const Tensor& x = c.in(input);
  const double h0 = base_step(c, input);
  const std::vector<KinkReach> reach = reach_each(c, input);
  const Tensor f0 = forward(*ctx.ref, c);
  const double s0 = dot(v, f0);
  double vsum = 0;
  for (double e : v.data) vsum += std::fabs(e);
  const double mag = vsum * std::max(max_abs(f0), term_scale(c)) + std::fabs(s0);
  const double rtol = ctx.precision == Precision::F32 ? 1e-3 : 1e-7;
  // A float32 gradient carries rounding of the order of u32 times the largest gradient entry
  // (its terms are of that size): where both one-sided derivatives are ~0 (equal pixels on
  // either side), that is all that separates the gradient from them, not a side.
  const double f32_floor = ctx.precision == Precision::F32 ? 64 * 0x1.0p-24 * max_abs(grad) : 0.0;

  auto s_at = [&](int64_t i, double t) {
    Tensor xt = x;
    xt.data[size_t(i)] += t;
    return dot(v, forward(*ctx.ref, with_input(c, input, std::move(xt))));
  };

  std::map<std::string, CheckRecord> by_kind;
  int examined = 0;
  for (int64_t i = 0; i < x.numel() && examined < max_elements; ++i) {
    const KinkReach& r = reach[size_t(i)];
    if (!r.on_kink()) continue;
    ++examined;
    const double hr = std::min(h0, r.ahead / 4), hl = std::min(h0, r.behind / 4);
    const Side right = fit(s_at(i, hr), s_at(i, 2 * hr), s_at(i, 3 * hr), hr, 1.0);
    const Side left = fit(s_at(i, -hl), s_at(i, -2 * hl), s_at(i, -3 * hl), hl, -1.0);
    const double g = grad.data[size_t(i)];
    // Rounding of s (relative to the terms it sums, OpKinks::term_scale) and of the positions
    // x sets (~eps max(1, |x|) of x, fd.cpp's position_noise) times the slopes, over the step.
    const double slopes = std::fabs(left.slope) + std::fabs(right.slope) + std::fabs(g);
    const double noise =
        64 * 0x1.0p-53 * (mag + std::max(1.0, std::fabs(x.data[size_t(i)])) * slopes) / std::min(hr, hl);
    const double tol = rtol * (std::fabs(left.slope) + std::fabs(right.slope) + std::fabs(g)) + noise + f32_floor;
    // Sides are named along the kink's own quantity (the coordinate, the max gap): when it
    // falls as the input rises, the input's t > 0 is its left.
    const bool flip = r.at_down && !r.at_up;
    const bool on_right = std::fabs(g - (flip ? left : right).slope) <= tol;
    const bool on_left = std::fabs(g - (flip ? right : left).slope) <= tol;
    const char* side = on_right && on_left ? "both" : on_right ? "right" : on_left ? "left" : "neither";
    const double jump_tol = 1e-9 * mag + 64 * 0x1.0p-53 * mag;
    const bool jump = std::fabs(right.limit - s0) > jump_tol || std::fabs(left.limit - s0) > jump_tol;

    // Several kinks at once (two tied competitors in different bins, samples of one bin on two
    // rows): each may take its own side, so the gradient need not equal either one-sided
    // derivative of the sum. Such compound kinks are reported under their own name and a
    // "neither" there is no failure.
    const bool compound = r.at_sources > 1;
    const std::string kind = join(r.at) + (compound ? " (compound)" : "");
    auto [it, fresh] = by_kind.try_emplace(kind, ctx.record(c, input, "one-sided"));
    CheckRecord& rec = it->second;
    if (fresh) {
      rec.tolerance = rtol;
      rec.extra = {{"kink", kind}, {"sides", json::object()}, {"jumps", 0}};
    }
    ++rec.elements;
    rec.extra["sides"][side] = rec.extra["sides"].value(side, int64_t(0)) + 1;
    if (jump) rec.extra["jumps"] = rec.extra["jumps"].get<int64_t>() + 1;
    const double err = std::min(std::fabs(g - right.slope), std::fabs(g - left.slope)) /
                       (std::fabs(left.slope) + std::fabs(right.slope) + std::fabs(g) + noise + f32_floor + 1e-300);
    if (std::string(side) == "neither" && !compound && (rec.verdict != Verdict::Disagree || err > rec.error)) {
      rec.verdict = Verdict::Disagree;
      rec.error = err;
      std::ostringstream os;
      os.precision(17);
      os << input << "[" << i << "] at " << kind << ": left=" << left.slope << " right=" << right.slope
         << " gradient=" << g << (jump ? " (the forward jumps here)" : "");
      rec.detail = os.str();
    } else if (rec.detail.empty()) {
      std::ostringstream os;
      os.precision(17);
      os << "e.g. " << input << "[" << i << "]: left=" << left.slope << " right=" << right.slope << " gradient=" << g
         << " -> " << side;
      rec.detail = os.str();
    }
  }
  for (auto& [k, rec] : by_kind) out.push_back(std::move(rec));
  return out;
}

}  // namespace oplab::gradcheck
