// The checker must fail on a wrong backward and pass the right one on the same cases:
//  * drp-mmcv-grad: mmcv CUDA's DeformRoIPool offset gradient near the border (SPEC §5);
//  * bug-dcn-gradoffset-nomask: deform_conv2d's grad_offset without the mask factor;
//  * mutants of the reference made here (a scaled gradient, a left-sided derivative, a wrong
//    entry list, a gradient that ignores grad_output) for the checks that FD cannot see.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iostream>

#include "cli/builtin_backends.h"
#include "core/params.h"
#include "fuzz/generators.h"
#include "gradcheck/context.h"
#include "gradcheck/fd.h"
#include "gradcheck/record.h"
#include "gradcheck/runner.h"
#include "reference/ref_backend.h"

namespace oplab::gradcheck {
namespace {

constexpr uint64_t kSeed = 20261122;

Tensor tensor(Shape s, std::vector<double> d) {
  Tensor t(std::move(s));
  t.data = std::move(d);
  return t;
}

int64_t failures(const std::vector<CheckRecord>& recs, const std::string& input, const std::string& method) {
  int64_t n = 0;
  for (const auto& r : recs) n += r.failed() && r.input == input && r.method == method;
  return n;
}

int64_t all_failures(const std::vector<CheckRecord>& recs) {
  int64_t n = 0;
  for (const auto& r : recs) n += r.failed();
  return n;
}

Backend& backend(const std::string& name) {
  Backend* b = builtin_backends().find(name);
  if (!b) throw std::runtime_error("backend " + name + " is not built in");
  return *b;
}

// A deform_roi_pool case whose one sample sits at (y, x) on a 4x4 ramp X = 4y + 3x + y*x, so
// that both slopes are non-zero everywhere inside: box (y-0.5, x-0.5)..(y+0.5, x+0.5) aligned,
// sampling_ratio 1, gamma 0.1, offset 0.
Case drp_at(double y, double x) {
  Case c;
  c.op = "deform_roi_pool";
  c.params = json{{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", 1}, {"gamma", 0.1}};
  Tensor in(Shape{1, 1, 4, 4});
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j) in.at(0, 0, i, j) = 4.0 * i + 3.0 * j + double(i * j);
  c.inputs["input"] = in;
  // Aligned: start = x1 - 0.5, so x1 = x for a box of size 1 centred on x.
  c.inputs["rois"] = tensor({1, 5}, {0, x, y, x + 1, y + 1});
  c.inputs["offset"] = tensor({1, 2, 1, 1}, {0.0, 0.0});
  c.grad_output = tensor({1, 1, 1, 1}, {1.0});
  return c;
}

CheckRecord jacobian(Backend& b, const Case& c, const std::string& input) {
  auto ref = make_ref_backend();
  CheckContext ctx;
  ctx.backend = &b;
  ctx.ref = ref.get();
  ctx.fd_forward = &b;
  ctx.case_index = 0;
  CheckRecord r = fd_jacobian(ctx, c, input, nullptr);
  std::cout << b.name() << " " << input << ": " << r.verdict << " error " << r.error << " " << r.detail << "\n";
  return r;
}

// The three faults of SPEC §5, each on a point where mmcv's formula differs from the truth,
// away from any kink (so that finite differences are evidence).
TEST(GradBugs, MmcvDeformRoiPoolOffsetGradientIsFlagged) {
  Backend& mmcv = backend("drp-mmcv-grad");
  auto ref = make_ref_backend();
  // y in [-1, 0): the forward is flat in y there (the edge row is replicated), mmcv's d/dy is not.
  // y in [H-1, H] (H = 4): mmcv's d/dx is 0, the forward still varies along the last row.
  // x in [W-1, W]: mmcv's d/dy is 0 likewise.
  for (auto [y, x] : std::vector<std::pair<double, double>>{{-0.6, 1.3}, {3.4, 1.3}, {1.3, 3.4}}) {
    const Case c = drp_at(y, x);
    EXPECT_TRUE(jacobian(mmcv, c, "offset").failed()) << "y=" << y << " x=" << x;
    EXPECT_EQ(jacobian(*ref, c, "offset").verdict, Verdict::Agree) << "y=" << y << " x=" << x;
  }
  // Inside the image the formula is right, and the checker says so.
  EXPECT_EQ(jacobian(mmcv, drp_at(1.3, 1.7), "offset").verdict, Verdict::Agree);
}

TEST(GradBugs, MmcvFlaggedOnTheFixedSeedCasesAndRefIsNot) {
  Options opt;
  opt.seed = kSeed;
  auto ref = make_ref_backend();
  const auto bad = check_op(backend("drp-mmcv-grad"), *ref, "deform_roi_pool", 60, opt);
  const auto good = check_op(*ref, *ref, "deform_roi_pool", 60, opt);
  print_summary(std::cout, summarize(bad));
  print_sides(std::cout, summarize_sides(bad));
  EXPECT_GT(failures(bad, "offset", "fd-projection") + failures(bad, "offset", "fd-jacobian"), 0);
  EXPECT_GT(failures(bad, "offset", "vs-ref"), 0);
  EXPECT_EQ(failures(bad, "input", "fd-projection") + failures(bad, "input", "adjoint"), 0);  // grad_input is right
  EXPECT_EQ(all_failures(good), 0);
}

std::vector<Case> fuzz_cases_without_mask(int n) {
  auto cases = fuzz::sample_cases("deform_conv2d", n, kSeed);
  for (auto& c : cases) c.inputs.erase("mask");
  return cases;
}

TEST(GradBugs, DcnGradOffsetWithoutMaskIsFlagged) {
  Options opt;
  opt.seed = kSeed;
  auto ref = make_ref_backend();
  Backend& bug = backend("bug-dcn-gradoffset-nomask");
  const auto bad = check_op(bug, *ref, "deform_conv2d", 40, opt);
  print_summary(std::cout, summarize(bad));
  EXPECT_GT(failures(bad, "offset", "fd-projection"), 0);
  EXPECT_GT(failures(bad, "offset", "fd-jacobian"), 0);
  EXPECT_GT(failures(bad, "offset", "vs-ref"), 0);
  for (const auto& r : bad)
    if (r.failed()) EXPECT_EQ(r.input, "offset") << r.method << ": " << r.detail;
  // Only masked cases can show it: without a mask m = 1 and the formula is right.
  const auto cases = fuzz_cases_without_mask(40);
  EXPECT_EQ(all_failures(check_cases(bug, *ref, cases, opt)), 0);
}

// ---- mutants of the reference -------------------------------------------------------------

// Wraps the reference and damages its answer with `mutate`.
class Mutant : public Backend {
 public:
  Mutant(std::string name, std::function<void(const Case&, Result&)> mutate)
      : name_(std::move(name)), mutate_(std::move(mutate)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "test mutant of ref"; }
  Result run(const Case& c, const ValidParams& vp) override {
    Result r = ref_->run(c);
    if (c.grad_output) mutate_(c, r);
    return r;
  }

 private:
  std::string name_;
  std::function<void(const Case&, Result&)> mutate_;
  std::unique_ptr<Backend> ref_ = make_ref_backend();
};

std::vector<CheckRecord> run_mutant(Mutant& m, const std::string& op, int n) {
  Options opt;
  opt.seed = kSeed;
  auto ref = make_ref_backend();
  return check_op(m, *ref, op, n, opt);
}

TEST(GradBugs, ScaledGradientIsFlaggedByFdAndAdjoint) {
  // One part in a million: far beyond rounding, far below what a glance at numbers shows.
  Mutant m("scaled", [](const Case&, Result& r) {
    for (double& v : r.grads.at("input").data) v *= 1 + 1e-6;
  });
  const auto recs = run_mutant(m, "roi_align", 30);
  EXPECT_GT(failures(recs, "input", "fd-projection"), 5);
  EXPECT_GT(failures(recs, "input", "adjoint"), 5);
}

TEST(GradBugs, LeftSidedOffsetGradientIsSeenAtKinks) {
  // grad_offset taken as the derivative from the left at an exact integer coordinate: equal to
  // the reference's off the kinks (FD passes), different on them (one-sided says "left").
  Mutant m("left-sided", [](const Case& c, Result& r) {
    const DeformConvParams p = parse_deform_conv2d(c);
    Case left = c;
    Tensor& off = left.inputs.at("offset");
    // The derivative from the left equals the right-sided one of the mirrored step: evaluate
    // the reference a hair below each integer coordinate (the pieces are smooth there).
    for (int64_t i = 0; i < off.numel(); ++i) {
      const int64_t ch = (i / (p.Ho * p.Wo)) % off.dim(1);
      const int64_t pos = i % (p.Ho * p.Wo), oy = pos / p.Wo, ox = pos % p.Wo;
      const int64_t k = (ch / 2) % (p.kh * p.kw);
      const double base = ch % 2 == 0 ? double(oy * p.sh - p.ph + (k / p.kw) * p.dh) : double(ox * p.sw - p.pw + (k % p.kw) * p.dw);
      const double v = base + off.data[size_t(i)];
      if (v == std::floor(v)) off.data[size_t(i)] = std::nextafter(off.data[size_t(i)], -INFINITY) - 1e-12;
    }
    r.grads["offset"] = make_ref_backend()->run(left).grads.at("offset");
  });
  const auto recs = run_mutant(m, "deform_conv2d", 40);
  int64_t left = 0;
  for (const auto& s : summarize_sides(recs)) {
    auto it = s.sides.find("left");
    left += it == s.sides.end() ? 0 : it->second;
  }
  EXPECT_GT(left, 0);
  EXPECT_EQ(failures(recs, "offset", "fd-projection") + failures(recs, "offset", "fd-jacobian"), 0);
}

TEST(GradBugs, StructuralFaultsAreFlagged) {
  Mutant extra("extra-entry", [](const Case& c, Result& r) {
    if (!c.has("mask")) r.grads["mask"] = Tensor(Shape{1});
  });
  EXPECT_GT(failures(run_mutant(extra, "deform_conv2d", 12), "mask", "optional-absent"), 0);

  Mutant missing("missing-bias", [](const Case&, Result& r) { r.grads.erase("bias"); });
  EXPECT_GT(failures(run_mutant(missing, "deform_conv2d", 12), "*", "shapes"), 0);

  Mutant constant("ignores-grad-output", [](const Case&, Result& r) {
    for (double& v : r.grads.at("input").data) v += 1e-300;  // even the smallest non-zero
  });
  EXPECT_GT(failures(run_mutant(constant, "interpolate", 12), "*", "zero-grad"), 0);
}

}  // namespace
}  // namespace oplab::gradcheck
