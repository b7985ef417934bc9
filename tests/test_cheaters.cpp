// Kernels that try to cheat the judge (issue: KernelBench 165 and PR 82, llm.c PR 851): the
// seeded cheaters of variants/cheat_*.cpp give the reference's numbers through the plugin ABI
// and cheat otherwise; each is caught, with a message naming what it did, and honest backends
// pass the same checks. Expected values: the cheaters' own construction (a 1-roi 2x2 roi_align
// has 4 outputs, its last row 2 of them; the input's element 0 is the first the cheater doubles).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "cli/builtin_backends.h"
#include "fuzz/properties.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

Case roi_align_case(bool backward) {
  Case c;
  c.op = "roi_align";
  c.params = {{"output_size", {2, 2}}, {"spatial_scale", 1.0}, {"sampling_ratio", 2}, {"aligned", false}};
  Tensor x(Shape{1, 1, 4, 4});
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = 1.0 + double(i);
  c.inputs["input"] = x;
  Tensor rois(Shape{1, 5});
  rois.data = {0, 0.5, 0.5, 3.0, 2.5};
  c.inputs["rois"] = rois;
  if (backward) c.grad_output = Tensor(Shape{1, 1, 2, 2}, 1.0);
  return c;
}

Backend& backend(const std::string& name) {
  Backend* b = builtin_backends().find(name);
  if (!b) throw std::logic_error(name + " is not built in");
  return *b;
}

std::string error_of(Backend& b, const Case& c) {
  try {
    evaluate(b, c);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(Cheaters, AnOutputLeftUnwrittenFailsTheCase) {
  const std::string e = error_of(backend("cheat-unwritten-last-row"), roi_align_case(false));
  EXPECT_EQ(e, "plugin left 2 of 4 elements of output unwritten (the first: element 2)");
}

TEST(Cheaters, AnInputChangedInPlaceFailsTheCase) {
  for (bool backward : {false, true})
    EXPECT_EQ(error_of(backend("cheat-scales-input-in-place"), roi_align_case(backward)),
              "plugin changed its input input (element 0): inputs are read-only");
}

// The determinism property on one backend and case, in this process (isolation none: the
// cheater's state lives here between the two calls).
fuzz::CheckResult determinism(Backend& subject, const Case& c) {
  static auto ref = make_ref_backend();
  const fuzz::Isolation in_process{fuzz::IsolationMode::None, 10};
  fuzz::CheckContext ctx(c, subject, *ref, in_process);
  return fuzz::run_check(*fuzz::find_property("determinism"), ctx);
}

TEST(Cheaters, AnAnswerThatDependsOnThePreviousCallFailsDeterminism) {
  Backend& cheat = backend("cheat-depends-on-previous-call");
  const Case c = roi_align_case(true);
  const fuzz::CheckResult r = determinism(cheat, c);
  EXPECT_EQ(r.verdict, compare::Verdict::Disagree) << r.detail;
  EXPECT_NE(r.detail.find("outputs.output[0]"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("a second evaluation of the same case gave other bits"), std::string::npos) << r.detail;
}

TEST(Cheaters, HonestBackendsGiveTheSameBitsTwice) {
  for (const char* name : {"ref", "halide-cpu", "torchvision", "onnxruntime"}) {
    Backend& b = backend(name);
    if (b.unavailable_reason()) continue;
    for (bool backward : {false, true}) {
      const fuzz::CheckResult r = determinism(b, roi_align_case(backward));
      EXPECT_TRUE(r.verdict == compare::Verdict::Agree || r.verdict == compare::Verdict::Unsupported)
          << name << ": " << compare::verdict_name(r.verdict) << " " << r.detail;
    }
  }
}

// A backend that declares itself nondeterministic: after its first answer, it moves the last bit of one
// element (as float atomics in another order would), or, over the line, by 1e-3.
class Jittery : public Backend {
 public:
  explicit Jittery(double step) : step_(step) {}
  std::string name() const override { return "jittery"; }
  std::string description() const override { return "test double: the reference, one element moved after the first call"; }
  std::optional<std::string> nondeterministic(const std::string&) const override { return std::string("test double"); }
  using Backend::run;
  Result run(const Case& c, const ValidParams&) override {
    Result r = ref_->run(c);
    double& v = r.outputs.at("output").data.at(0);
    if (++calls_ > 1) v = step_ > 0 ? v + step_ : std::nextafter(v, INFINITY);
    return r;
  }

 private:
  std::unique_ptr<Backend> ref_ = make_ref_backend();
  double step_;
  int calls_ = 0;
};

TEST(Cheaters, DeclaredNondeterminismIsHeldToTheBoundAndSaidSo) {
  Jittery last_bit(0), too_far(1e-3);
  const fuzz::CheckResult ok = determinism(last_bit, roi_align_case(false));
  EXPECT_EQ(ok.verdict, compare::Verdict::Agree) << ok.detail;
  EXPECT_EQ(ok.detail, "declared nondeterministic (test double): the two answers within its bound");
  const fuzz::CheckResult bad = determinism(too_far, roi_align_case(false));
  EXPECT_EQ(bad.verdict, compare::Verdict::Disagree) << bad.detail;
}

}  // namespace
}  // namespace oplab
