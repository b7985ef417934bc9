// Finite-difference projections of a float32 backend's gradient (gradcheck/fd.cpp): the
// differences are of the double reference, the analytic side is the kernel's gradient, held to
// its per-element bound B_i (SPEC §9). Where 1e-3 of the projection is below float32's reach
// the allowance adds Σ |u_i| B_i; a gradient wrong beyond float32 rounding still fails.
#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <memory>

#include "cli/builtin_backends.h"
#include "core/case_io.h"
#include "gradcheck/fd.h"
#include "gradcheck/record.h"
#include "gradcheck/runner.h"
#include "reference/ref_backend.h"

namespace oplab::gradcheck {
namespace {

Backend* halide_cpu() {
  Backend* b = builtin_backends().find("halide-cpu");
  return b && !b->unavailable_reason() ? b : nullptr;
}

// Case 11 of `oplab gradcheck --op grid_sample --seed 1 --cases 30` (gradcheck_cases("grid_sample",
// 30, 1)[11]; its kink-aimed variant, aim_at_kinks with seed 1 + 11, is the same case: both grid
// values already sit on kinks). With seed 1 and case index 11 the projection's directions and
// its move off the kinks are those of the CLI run, so this replays its kink-aimed fd-projection
// of grid: fd = -1.0983254e-05 (the reference's own analytic value at that point is
// -1.0983259e-05), the kernel's -1.1006096e-05, 0.2% off. The kernel differentiates the point
// rounded to float32, and next to the reflection fold the gradient moves 0.2% within that
// rounding: the reference on the float32-rounded point gives -1.1006096e-05 as well.
Case case11() {
  return case_from_json(json::parse(R"({"op": "grid_sample",
    "params": {"align_corners": true, "mode": "bicubic", "padding_mode": "reflection"},
    "inputs": {"input": {"shape": [1, 1, 2, 2], "data": [-0.25, -0.0072612762451171875, 0.006481170654296875, 0.009351730346679688]},
               "grid": {"shape": [1, 1, 1, 2], "data": [-1.0, -3.0]}},
    "grad_output": {"shape": [1, 1, 1, 1], "data": [0.013896942138671875]}})"));
}

CheckContext context(Backend& b, Backend& ref, Precision p, uint64_t seed, int64_t index) {
  return CheckContext{&b, &ref, p == Precision::F64 ? &b : &ref, p, seed, index};
}

// halide-cpu's answer with its gradients damaged by `mutate`, still declared float32.
class Float32Mutant : public Backend {
 public:
  Float32Mutant(Backend& inner, std::function<void(Result&)> mutate) : inner_(inner), mutate_(std::move(mutate)) {}
  std::string name() const override { return "f32-mutant"; }
  std::string description() const override { return "test mutant of halide-cpu"; }
  bool is_float32() const override { return true; }
  Result run(const Case& c, const ValidParams&) override {
    Result r = evaluate(inner_, c);
    if (c.grad_output) mutate_(r);
    return r;
  }

 private:
  Backend& inner_;
  std::function<void(Result&)> mutate_;
};

// fd-projection failures, and in `checked` the projections that are evidence about a scaled
// gradient: not skipped and not exactly 0 on both sides (nearest's grid, a zero grad_output).
int64_t fd_failures(const std::vector<CheckRecord>& recs, int64_t* checked = nullptr) {
  int64_t n = 0, total = 0;
  for (const auto& r : recs)
    if (r.method == "fd-projection" && r.verdict != Verdict::Skipped && (r.failed() || r.error > 0)) {
      ++total;
      n += r.failed();
    }
  if (checked) *checked = total;
  return n;
}

TEST(GradFloat32, ProjectionNextToAFoldIsWithinTheGradientBound) {
  Backend* hk = halide_cpu();
  if (!hk) GTEST_SKIP() << "halide-cpu cannot run here";
  auto ref = make_ref_backend();
  const Case c = case11();
  // The differences are right: the reference's own projection agrees to 1e-6.
  const CheckRecord r = fd_projection(context(*ref, *ref, Precision::F64, 1, 11), c, "grid", 0);
  EXPECT_EQ(r.verdict, Verdict::Agree) << r.detail;
  EXPECT_LT(r.error, 1e-6) << r.detail;
  // The kernel is 0.2% off relative to the projection, past the plain 1e-3, and within the
  // bound its gradient is held to.
  const CheckRecord k = fd_projection(context(*hk, *ref, Precision::F32, 1, 11), c, "grid", 0);
  std::cout << k.verdict << " error " << k.error << " tolerance " << k.tolerance << ": " << k.detail << "\n";
  EXPECT_EQ(k.verdict, Verdict::Agree) << k.detail;
  EXPECT_GT(k.error, 1.5e-3) << k.detail;
  EXPECT_TRUE(k.extra.contains("gradient_bound")) << k.detail;
  // Its allowance is that bound and no more: the gradient scaled by 1 + twice the allowed
  // relative error fails (the projection barely cancels: |an| is 0.96 of Σ |g_i u_i|).
  const double factor = 1 + 2 * k.tolerance;
  Float32Mutant off(*hk, [&](Result& res) {
    for (double& e : res.grads.at("grid").data) e *= factor;
  });
  const CheckRecord m = fd_projection(context(off, *ref, Precision::F32, 1, 11), c, "grid", 0);
  EXPECT_EQ(m.verdict, Verdict::Disagree) << m.detail;
}

// A gradient off by 0.3% everywhere, or in one element, is no float32 rounding: the 30 cases
// of seed 1 still catch it, while the kernel itself passes them all.
TEST(GradFloat32, WrongGradientsStillFail) {
  Backend* hk = halide_cpu();
  if (!hk) GTEST_SKIP() << "halide-cpu cannot run here";
  auto ref = make_ref_backend();
  Options opt;
  opt.seed = 1;
  int64_t checked = 0;
  EXPECT_EQ(fd_failures(check_op(*hk, *ref, "grid_sample", 30, opt), &checked), 0);

  Float32Mutant scaled(*hk, [](Result& r) {
    for (auto& [name, g] : r.grads)
      for (double& e : g.data) e *= 1.003;
  });
  const int64_t scaled_failures = fd_failures(check_op(scaled, *ref, "grid_sample", 30, opt), &checked);
  std::cout << "scaled by 1.003: " << scaled_failures << " of " << checked << " projections fail\n";
  EXPECT_GT(checked, 0);
  EXPECT_GE(scaled_failures, checked * 3 / 4);

  // One element of grad_grid moved by 1% of the largest one.
  Float32Mutant one(*hk, [](Result& r) {
    auto it = r.grads.find("grid");
    if (it == r.grads.end() || it->second.data.empty()) return;
    double scale = 0;
    for (double e : it->second.data) scale = std::max(scale, std::fabs(e));
    it->second.data[0] += 0.01 * scale;
  });
  const int64_t one_failures = fd_failures(check_op(one, *ref, "grid_sample", 30, opt), &checked);
  std::cout << "one element moved: " << one_failures << " of " << checked << " projections fail\n";
  EXPECT_GT(one_failures, 0);
}

}  // namespace
}  // namespace oplab::gradcheck
