#include "gradcheck/fd.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "compare/dtype_case.h"
#include "compare/float_compare.h"

namespace oplab::gradcheck {

namespace {

constexpr double kEps = 0x1.0p-53;  // differences are always taken of a double forward
constexpr int kMoveRounds = 5;      // moves of 4, 16, 64, 256, 1024 times h0 at most
constexpr double kMinStepRatio = 1.0 / 1024;

std::string kinds_of(const KinkReach& r) {
  std::string s;
  for (const auto& k : r.at) s += (s.empty() ? "" : ", ") + k;
  return s.empty() ? "a kink within h0/1024" : s;
}

// Rounding in (s(+h) - s(-h)) / 2h when s = <v, f> and f is known to ~eps relative to the
// terms it sums (at least `terms`, OpKinks::term_scale): a generous 16 eps of the magnitudes
// involved, divided by the step. It is added to the allowed error: an output dominated by a
// constant (a large bias) leaves a tiny derivative whose differences are rounding noise of
// the constant.
double difference_noise(const Tensor& v, const Tensor& fp, const Tensor& fm, double terms, double h) {
  long double m = 0;
  for (size_t j = 0; j < v.data.size(); ++j)
    m += std::fabs(v.data[j]) * std::max({std::fabs(fp.data[j]), std::fabs(fm.data[j]), terms});
  return 16.0 * kEps * double(m) / h;
}

// Rounding of the positions an input sets: a coordinate computed from x (unnormalised,
// scaled, offset) carries ~eps |x| of error in x's units, and the forward moves by the slope
// times that: relative to the slope's terms, 16 eps max(1, |x|) over the step. It is what
// bounds a difference at x = 1000 (a grid value far outside, folded back by reflection) with
// a step shrunk to 1e-6 by a nearby kink.
double position_noise(double x_scale, double h) { return 16.0 * kEps * std::max(1.0, x_scale) / h; }

// What a float32 backend's side of a projection may be off by. The differences are of the
// double reference (CheckContext::fd_forward), so no float32 rounding enters them; the float32
// error is in the analytic side. A gradient element's float32 error is bounded by
// B_i = u (n + 2C) (A_i + 1e-3 max A) of SPEC §9 (compare/float_compare.h), so <g, u> may be
// off by Σ |u_i| B_i. B_i is relative to the terms the element sums (A_i), not to the element,
// and the kernel differentiates its inputs rounded to float32 (C counts that move): where the
// gradient is far smaller than its terms, 1e-3 of Σ |g_i u_i| is below float32's reach.
// Measured (README, "Gradient checks of the float32 kernels"): bicubic reflection next to a
// fold, a grad_grid element of 2.1e-5 with B_i = 2.4e-6; the kernel's projection 0.2% off the
// reference's derivative at the point (0.016 of Σ |u_i| B_i) and equal to it (5e-8 relative) at
// the float32-rounded point. B_i itself, not vs-ref's 8 B_i (room for roundings the estimate
// does not count): with 8 B_i a third of the deform_conv2d projections that catch a gradient
// scaled by 1.003 would pass (with B_i, 15 of 123, seed 1). Computed only for a projection that
// fails without it.
double analytic_rounding(const CheckContext& ctx, const Case& at, const Tensor& v, const std::string& input,
                         const Tensor& u) {
  Case g = at;
  g.grad_output = v;
  const Case sent = compare::case_for(*ctx.backend, g);
  const Result want = evaluate(*ctx.ref, sent);
  const auto bounds = compare::element_bounds(*ctx.ref, sent, want, unit_roundoff(ctx.backend->dtype(at.op)), 1.0,
                                              [](Backend& b, const Case& x) { return evaluate(b, x); });
  auto it = bounds.find("grads." + input);
  if (it == bounds.end() || it->second.shape != u.shape) return 0.0;
  long double s = 0;
  for (size_t i = 0; i < u.data.size(); ++i) s += std::fabs(u.data[i]) * it->second.data[i];
  return double(s);
}

// A float32 backend failing at a point where float32 takes a discrete decision the other way
// (eval.h) is explained, not failed: judged at the point actually differenced.
void judge(const CheckContext& ctx, const Case& at, CheckRecord& rec) {
  rec.verdict = rec.error <= rec.tolerance ? Verdict::Agree : Verdict::Disagree;  // NaN fails
  if (rec.failed() && ctx.precision == Precision::F32 && boundary_flip(*ctx.ref, *ctx.backend, at)) {
    rec.verdict = Verdict::BoundaryFlip;
    rec.detail += " (float32 boundary flip at this point)";
  }
}

// |fd - an| relative to `scale`, and the allowed relative error: rtol plus the rounding of
// the differences on the same scale. With a zero scale (the analytic derivative and all its
// terms are 0) only a difference within the rounding passes.
void judge_difference(double diff, double scale, double noise, double rtol, double& error, double& allowed) {
  if (!std::isfinite(diff)) {
    error = kInf, allowed = rtol;
  } else if (scale > 0) {
    error = diff / scale, allowed = rtol + noise / scale;
  } else {
    error = diff <= noise ? 0.0 : kInf, allowed = rtol;
  }
}

}  // namespace

double base_step(const Case& c, const std::string& input) {
  const double scale = std::max(1.0, max_abs(c.in(input)));
  if (op_kinks(c.op).affine(c, input)) return scale;
  // A cubic piece: the central difference is off by h^2/6 of the third derivative, ~1e-10 of
  // the slope at 2^-16, and its rounding (16 eps / h) stays near 1e-10 in double.
  if (piece_degree(c, input) <= 2) return 0x1.0p-8 * scale;
  // The input's magnitude says nothing of a cubic piece's width where the op states it (a grid
  // value of 1000 still has pieces 2/S wide).
  const double width = piece_width(c, input);
  return 0x1.0p-16 * (width > 0 ? width : scale);
}

bool usable(const KinkReach& r, double h0) { return !r.on_kink() && r.clearance() / 2 >= h0 * kMinStepRatio; }

double fd_tolerance(Precision p) { return p == Precision::F32 ? 1e-3 : 1e-8; }

CheckRecord fd_projection(const CheckContext& ctx, const Case& c, const std::string& input, int which) {
  CheckRecord rec = ctx.record(c, input, "fd-projection");
  rec.tolerance = fd_tolerance(ctx.precision);
  const Tensor& x0 = c.in(input);
  const Shape out_shape = validate_case(c);
  if (x0.numel() == 0 || shape_numel(out_shape) == 0) {
    rec.verdict = Verdict::Skipped;
    rec.detail = "empty input or output: nothing to difference";
    return rec;
  }
  Rng rng = ctx.rng(c, "projection/" + input + "/" + std::to_string(which));
  Tensor u = rng.normal_tensor(x0.shape);
  const double umax = max_abs(u);
  for (double& e : u.data) e /= umax;  // max|u| = 1: h is then in the input's own units
  const Tensor v = rng.normal_tensor(out_shape);

  const double h0 = base_step(c, input);
  Case cur = c;
  KinkReach reach = reach_along(cur, input, u);
  // Moving along u itself would keep a kink that u crosses at t = 0 in place; a random jitter
  // of every element moves each coordinate off its integer by a different amount.
  for (int round = 0; round < kMoveRounds && !usable(reach, h0); ++round) {
    Tensor x = x0;
    const double s = h0 * std::pow(4.0, round + 1);
    for (double& e : x.data) e += s * rng.sign() * (0.5 + 0.5 * rng.uniform());
    cur = with_input(c, input, std::move(x));
    reach = reach_along(cur, input, u);
    rec.moved = 1;
  }
  if (!usable(reach, h0)) {
    rec.skipped = 1;
    rec.verdict = Verdict::Skipped;
    rec.detail = "no kink-free point found (" + kinds_of(reach) + ")";
    return rec;
  }
  const double h = std::min(h0, reach.clearance() / 2);
  rec.shrunk = h < h0 ? 1 : 0;
  rec.elements = 1;

  const Tensor& x = cur.in(input);
  Tensor xp = x, xm = x;
  for (size_t i = 0; i < x.data.size(); ++i) xp.data[i] += h * u.data[i], xm.data[i] -= h * u.data[i];
  const Tensor fp = forward(*ctx.fd_forward, with_input(cur, input, xp));
  const Tensor fm = forward(*ctx.fd_forward, with_input(cur, input, xm));
  const double fd = (dot(v, fp) - dot(v, fm)) / (2 * h);

  const Result g = backward(*ctx.backend, cur, v);
  auto it = g.grads.find(input);
  if (it == g.grads.end() || it->second.shape != x.shape) {
    rec.verdict = Verdict::Disagree;
    rec.error = kInf;
    rec.detail = it == g.grads.end() ? "no gradient for " + input : "gradient of " + input + " has the wrong shape";
    return rec;
  }
  double an = 0, scale = 0;
  for (size_t i = 0; i < x.data.size(); ++i) {
    an += it->second.data[i] * u.data[i];
    scale += std::fabs(it->second.data[i] * u.data[i]);
  }
  // Relative to the projection's terms; the allowance adds the rounding of the differences,
  // and for a float32 backend, where that is not enough, the rounding of its gradient.
  double noise = difference_noise(v, fp, fm, term_scale(cur), h) + scale * position_noise(max_abs(x), h);
  judge_difference(std::fabs(fd - an), scale, noise, fd_tolerance(ctx.precision), rec.error, rec.tolerance);
  double bound = 0;
  if (rec.error > rec.tolerance && ctx.precision == Precision::F32) {
    bound = analytic_rounding(ctx, cur, v, input, u);
    judge_difference(std::fabs(fd - an), scale, noise + bound, fd_tolerance(ctx.precision), rec.error, rec.tolerance);
  }
  std::ostringstream os;
  os.precision(17);
  os << "fd=" << fd << " an=" << an << " h=" << h;
  if (bound > 0) os << " gradient bound sum|u_i| B_i=" << bound;
  rec.detail = os.str();
  rec.extra = {{"h", h}, {"h0", h0}};
  if (bound > 0) rec.extra["gradient_bound"] = bound;
  judge(ctx, cur, rec);
  return rec;
}

std::vector<Result> analytic_rows(Backend& b, const Case& c) {
  const Shape out_shape = validate_case(c);
  std::vector<Result> rows;
  Tensor e(out_shape);
  for (int64_t j = 0; j < e.numel(); ++j) {
    e.data[size_t(j)] = 1.0;
    rows.push_back(backward(b, c, e));
    e.data[size_t(j)] = 0.0;
  }
  return rows;
}

CheckRecord fd_jacobian(const CheckContext& ctx, const Case& c, const std::string& input,
                        const std::vector<Result>* rows) {
  CheckRecord rec = ctx.record(c, input, "fd-jacobian");
  rec.tolerance = fd_tolerance(ctx.precision);
  const double h0 = base_step(c, input);
  const int64_t n_in = c.in(input).numel();
  if (n_in == 0 || shape_numel(validate_case(c)) == 0) {
    rec.verdict = Verdict::Skipped;
    rec.detail = "empty input or output: nothing to difference";
    return rec;
  }

  // Move each element that sits on (or too near) a kink of its own basis direction, by an
  // amount of its own (so that two tied elements do not move together), until every element
  // clears its kinks or the rounds run out. Moving one element can bring another one's kink
  // near, so the reaches are recomputed after each round.
  Rng rng = ctx.rng(c, "jacobian/" + input);
  Case cur = c;
  std::vector<KinkReach> reach = reach_each(cur, input);
  std::set<int64_t> moved;
  for (int round = 0; round < kMoveRounds; ++round) {
    Tensor x = cur.in(input);
    bool any = false;
    for (int64_t i = 0; i < n_in; ++i)
      if (!usable(reach[size_t(i)], h0)) {
        x.data[size_t(i)] += h0 * std::pow(4.0, round + 1) * (1.0 + rng.uniform()) * rng.sign();
        moved.insert(i);
        any = true;
      }
    if (!any) break;
    cur = with_input(cur, input, std::move(x));
    reach = reach_each(cur, input);
  }
  rec.moved = int64_t(moved.size());

  std::vector<Result> fresh;
  if (!rows || !moved.empty()) {
    fresh = analytic_rows(*ctx.backend, cur);
    rows = &fresh;
  }
  double jmax = 0;
  for (const Result& r : *rows) {
    auto it = r.grads.find(input);
    if (it == r.grads.end() || it->second.shape != c.in(input).shape) {
      rec.verdict = Verdict::Disagree;
      rec.error = kInf;
      rec.detail = it == r.grads.end() ? "no gradient for " + input : "gradient of " + input + " has the wrong shape";
      return rec;
    }
    jmax = std::max(jmax, max_abs(it->second));
  }

  const Tensor& x = cur.in(input);
  std::ostringstream worst;
  worst.precision(17);
  std::string skipped_kinds;
  double worst_margin = 0;
  for (int64_t i = 0; i < n_in; ++i) {
    const KinkReach& r = reach[size_t(i)];
    if (!usable(r, h0)) {
      ++rec.skipped;
      if (skipped_kinds.empty()) skipped_kinds = kinds_of(r);
      continue;
    }
    const double h = std::min(h0, r.clearance() / 2);
    if (h < h0) ++rec.shrunk;
    Tensor xp = x, xm = x;
    xp.data[size_t(i)] += h;
    xm.data[size_t(i)] -= h;
    const Tensor fp = forward(*ctx.fd_forward, with_input(cur, input, xp));
    const Tensor fm = forward(*ctx.fd_forward, with_input(cur, input, xm));
    const double noise = 16.0 * kEps * std::max({max_abs(fp), max_abs(fm), term_scale(cur)}) / h;
    for (int64_t j = 0; j < fp.numel(); ++j) {
      const double fd = (fp.data[size_t(j)] - fm.data[size_t(j)]) / (2 * h);
      const double an = (*rows)[size_t(j)].grads.at(input).data[size_t(i)];
      double e, allowed;
      judge_difference(std::fabs(fd - an), std::fabs(an) + jmax,
                       noise + (std::fabs(an) + jmax) * position_noise(std::fabs(x.data[size_t(i)]), h),
                       fd_tolerance(ctx.precision), e, allowed);
      // The element nearest to (or furthest beyond) its allowance is the one reported.
      const double margin = e == 0 ? 0.0 : e / allowed;
      if (margin > worst_margin || (worst_margin == 0 && e > rec.error)) {
        worst_margin = margin;
        rec.error = e;
        rec.tolerance = allowed;
        worst.str("");
        worst << input << "[" << i << "] -> output[" << j << "]: fd=" << fd << " an=" << an << " h=" << h;
      }
    }
    ++rec.elements;
  }
  rec.detail = worst.str();
  if (rec.skipped) rec.detail += (rec.detail.empty() ? "" : "; ") + std::to_string(rec.skipped) + " columns skipped (" + skipped_kinds + ")";
  if (rec.elements == 0) {
    rec.verdict = Verdict::Skipped;
  } else {
    judge(ctx, cur, rec);
  }
  return rec;
}

}  // namespace oplab::gradcheck
