// The fuzz properties themselves: they hold on the reference, and each one fails on a backend
// with the kind of defect it exists to catch (so a green campaign means something). Also the
// pieces they stand on: per-case seeds, shards, the shrinker's regeneration of a case, and the
// crash/hang isolation of in-process backends.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <functional>
#include <thread>

#include "core/case_io.h"
#include "core/op_desc.h"
#include "fuzz/op_fuzz.h"
#include "fuzz/generators.h"
#include "fuzz/interrupt.h"
#include "fuzz/isolate.h"
#include "fuzz/properties.h"
#include "fuzz/seeds.h"
#include "fuzz/shrink.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

using fuzz::CheckContext;
using fuzz::CheckResult;

// The reference with one defect applied to its results (or its run).
class Defective : public Backend {
 public:
  Defective(std::string name, std::function<void(const Case&, Result&)> defect)
      : name_(std::move(name)), defect_(std::move(defect)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "ref with a defect, for the property tests"; }
  Result run(const Case& c, const ValidParams& vp) override {
    Result r = ref_->run(c);
    defect_(c, r);
    return r;
  }

 private:
  std::string name_;
  std::function<void(const Case&, Result&)> defect_;
  std::unique_ptr<Backend> ref_ = make_ref_backend();
};

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  for (const auto& d : all_ops()) v.push_back(d.name);
  return v;
}

// How often `property` fails on `subject` (against ref) over `n` campaign cases of `op`.
int failures(const std::string& property, Backend& subject, const std::string& op, int n, std::string* first = nullptr) {
  const fuzz::Property* p = fuzz::find_property(property);
  EXPECT_NE(p, nullptr) << property;
  auto ref = make_ref_backend();
  const fuzz::Isolation in_process{fuzz::IsolationMode::None, 10};
  int count = 0;
  for (int i = 0; i < n; ++i) {
    const uint64_t seed = fuzz::case_seed(7, op, uint64_t(i));
    const Case c = fuzz::draw_case(fuzz::property_gen(*p, op), seed, fuzz::case_size(seed));
    CheckContext ctx(c, subject, *ref, in_process);
    const CheckResult r = fuzz::run_check(*p, ctx);
    if (r.failed()) {
      if (first && first->empty()) *first = r.detail;
      ++count;
    }
  }
  return count;
}

TEST(FuzzProperties, EveryPropertyHoldsOnTheReference) {
  auto ref = make_ref_backend();
  for (const auto& op : op_names())
    for (const fuzz::Property& p : fuzz::all_properties()) {
      if (!p.applies(op)) continue;
      std::string first;
      EXPECT_EQ(failures(p.name, *ref, op, 40, &first), 0) << p.name << " on " << op << ": " << first;
    }
}

TEST(FuzzProperties, DifferentialCatchesAnOutputOffBy1e9) {
  Defective b("scaled", [](const Case&, Result& r) {
    for (double& v : r.outputs["output"].data) v *= 1 + 1e-9;
  });
  for (const auto& op : op_names()) EXPECT_GT(failures("differential", b, op, 40), 0) << op;
}

TEST(FuzzProperties, AdjointCatchesABackwardThatIsNotTheTranspose) {
  // grad_input off by 1e-9 relative: far below what a test on values would notice, far above
  // the 1e-12 the identity allows.
  // The gradient of the op's first adjoint input (its feature map: input, or ms_deform_attn's value).
  Defective b("not-transpose", [](const Case& c, Result& r) {
    const std::string in = fuzz::op_fuzz(c.op).adjoint_inputs.front();
    if (r.grads.count(in))
      for (double& v : r.grads[in].data) v *= 1 + 1e-9;
  });
  for (const auto& op : op_names()) EXPECT_GT(failures("adjoint", b, op, 40), 0) << op;
}

TEST(FuzzProperties, LinearityCatchesAConstantAddedToTheOutput) {
  Defective b("affine", [](const Case&, Result& r) {
    for (double& v : r.outputs["output"].data) v += 1e-6;
  });
  for (const char* op : {"deform_conv2d", "roi_align", "deform_roi_pool", "interpolate"})
    EXPECT_GT(failures("linearity", b, op, 40), 0) << op;
}

TEST(FuzzProperties, LinearityCatchesAGradientThatDependsOnGradOutputNonlinearly) {
  Defective b("squared", [](const Case&, Result& r) {
    for (auto& [name, g] : r.grads)
      for (double& v : g.data) v = v * std::fabs(v);
  });
  EXPECT_GT(failures("linearity", b, "roi_pool", 40), 0);
}

TEST(FuzzProperties, PermutationCatchesAnIndexDependentResult) {
  Defective b("position-dependent", [](const Case&, Result& r) {
    Tensor& out = r.outputs["output"];
    for (size_t i = 0; i < out.data.size(); ++i) out.data[i] += 1e-6 * double(i % 3);
  });
  for (const auto& op : op_names()) EXPECT_GT(failures("permutation", b, op, 40), 0) << op;
}

TEST(FuzzProperties, IdentitiesCatchTheirOpsGettingTheBasicsWrong) {
  Defective dcn("dcn-bias-twice", [](const Case& c, Result& r) {
    if (!c.has("bias")) return;
    Tensor& out = r.outputs["output"];
    const int64_t Co = out.dim(1), plane = out.dim(2) * out.dim(3);
    for (int64_t i = 0; i < out.numel(); ++i) out.data[size_t(i)] += c.in("bias").data[size_t((i / plane) % Co)];
  });
  EXPECT_GT(failures("dcn-zero-offset-conv", dcn, "deform_conv2d", 40), 0);
  Defective drp("drp-half", [](const Case& c, Result& r) {
    if (c.op == "deform_roi_pool")
      for (double& v : r.outputs["output"].data) v *= 0.5;
  });
  EXPECT_GT(failures("drp-zero-offset-roialign", drp, "deform_roi_pool", 40), 0);
  Defective interp("interp-flip", [](const Case&, Result& r) {
    std::reverse(r.outputs["output"].data.begin(), r.outputs["output"].data.end());
  });
  EXPECT_GT(failures("interp-same-size-identity", interp, "interpolate", 40), 0);
}

TEST(FuzzProperties, RejectsHoldsAndSeesInvalidCases) {
  // Every backend validates through core's evaluate(), so the property holds by construction;
  // what it guards is that every invalid case generated is refused, in one line, by the op.
  auto ref = make_ref_backend();
  for (const auto& op : op_names()) EXPECT_EQ(failures("rejects", *ref, op, 60), 0) << op;
}

TEST(FuzzSeeds, CasesDependOnSeedOpAndIndexOnly) {
  EXPECT_EQ(fuzz::case_seed(1, "roi_align", 5), fuzz::case_seed(1, "roi_align", 5));
  EXPECT_NE(fuzz::case_seed(1, "roi_align", 5), fuzz::case_seed(1, "roi_align", 6));
  EXPECT_NE(fuzz::case_seed(1, "roi_align", 5), fuzz::case_seed(1, "roi_pool", 5));
  EXPECT_NE(fuzz::case_seed(1, "roi_align", 5), fuzz::case_seed(2, "roi_align", 5));
  const uint64_t s = fuzz::case_seed(3, "interpolate", 9);
  const json a = case_to_json(fuzz::draw_case(fuzz::gen_case("interpolate"), s, fuzz::case_size(s)));
  const json b = case_to_json(fuzz::draw_case(fuzz::gen_case("interpolate"), s, fuzz::case_size(s)));
  EXPECT_EQ(a, b);
}

TEST(FuzzSeeds, ShardsPartitionTheCases) {
  std::string err;
  const auto bad = {"", "3", "2/2", "-1/2", "1/0", "a/b", "1/2/3"};
  for (const char* t : bad) EXPECT_FALSE(fuzz::parse_shard(t, &err)) << t;
  std::vector<int> owners(100, 0);
  for (int k = 0; k < 3; ++k) {
    const auto s = fuzz::parse_shard(std::to_string(k) + "/3", &err);
    ASSERT_TRUE(s) << err;
    for (int i = 0; i < 100; ++i) owners[size_t(i)] += s->owns(uint64_t(i));
  }
  for (int o : owners) EXPECT_EQ(o, 1);
}

TEST(FuzzShrink, RegeneratesTheCampaignsCaseExactly) {
  // The shrinker must start from the very case the campaign judged, or it would shrink
  // something else.
  for (const auto& op : op_names())
    for (uint64_t i = 0; i < 5; ++i) {
      const uint64_t seed = fuzz::case_seed(11, op, i);
      const int size = fuzz::case_size(seed);
      const json drawn = case_to_json(fuzz::draw_case(fuzz::gen_case(op), seed, size));
      json first;
      fuzz::shrink_case(fuzz::gen_case(op), seed, size,
                        [&](const Case& c) {
                          if (first.is_null()) first = case_to_json(c);
                          return false;
                        },
                        10);
      EXPECT_EQ(first, drawn) << op << " case " << i;
    }
}

TEST(FuzzShrink, ShrinksTowardsTheSimplestCase) {
  // "some roi has a positive-width box": the minimal case has one image, one channel, one
  // roi, a 1x1 output, and plain values.
  auto has_box = [](const Case& c) {
    const Tensor& r = c.in("rois");
    for (int64_t k = 0; k < r.dim(0); ++k)
      if (r.at(k, 3) > r.at(k, 1)) return true;
    return false;
  };
  for (uint64_t i = 0;; ++i) {
    ASSERT_LT(i, 50u) << "no case with a box";
    const uint64_t seed = fuzz::case_seed(5, "roi_pool", i);
    const int size = fuzz::case_size(seed);
    if (!has_box(fuzz::draw_case(fuzz::gen_case("roi_pool"), seed, size))) continue;
    const fuzz::ShrinkOutcome s = fuzz::shrink_case(fuzz::gen_case("roi_pool"), seed, size, has_box, 20);
    ASSERT_TRUE(s.reproduced);
    std::cout << "[shrink] " << case_to_json(s.minimal).dump() << "\n";
    EXPECT_EQ(s.minimal.in("rois").dim(0), 1);
    EXPECT_EQ(s.minimal.in("input").shape, (Shape{1, 1, 1, 1}));
    EXPECT_EQ(s.minimal.params["output_size"], json({1, 1}));
    for (double v : s.minimal.in("input").data) EXPECT_EQ(v, 0.0);
    return;
  }
}

// Backends that die in the ways a kernel can.
class Dying : public Backend {
 public:
  enum How { Segfault, Hang, Exit, Throw, Big };
  explicit Dying(How how) : how_(how) {}
  std::string name() const override { return "dying"; }
  std::string description() const override { return "dies"; }
  Result run(const Case& c, const ValidParams& vp) override {
    switch (how_) {
      case Segfault: std::raise(SIGSEGV); break;
      case Hang: for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
      case Exit: std::exit(3);
      case Throw: throw Unsupported("dying: not this one");
      case Big: break;
    }
    Result r;
    Tensor t({300000});
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = double(i) * 0.5;
    r.outputs["output"] = t;
    r.grads["input"] = Tensor({2, 3}, -1.0);
    return r;
  }

 private:
  How how_;
};

Case small_case() {
  const uint64_t seed = fuzz::case_seed(1, "interpolate", 0);
  return fuzz::draw_case(fuzz::gen_case("interpolate"), seed, 0);
}

class FuzzIsolationModes : public ::testing::TestWithParam<fuzz::IsolationMode> {};
INSTANTIATE_TEST_SUITE_P(WorkerAndFork, FuzzIsolationModes,
                         ::testing::Values(fuzz::IsolationMode::Worker, fuzz::IsolationMode::PerCase),
                         [](const auto& info) { return std::string(fuzz::isolation_mode_name(info.param)); });

TEST_P(FuzzIsolationModes, ACrashOrHangIsAnErrorNotTheEnd) {
  // Only the hang needs a short timeout; a crash or an exit must be told apart from a hang
  // even where forking is slow (under ASan a fork of this process can take most of a second).
  const fuzz::Isolation iso{GetParam(), 10}, hang_iso{GetParam(), 0.5};
  Dying segv(Dying::Segfault), hang(Dying::Hang), quit(Dying::Exit);
  try {
    fuzz::isolated_evaluate(segv, small_case(), iso);
    FAIL() << "no crash reported";
  } catch (const fuzz::KernelCrash& e) {
    EXPECT_NE(std::string(e.what()).find("signal 11"), std::string::npos) << e.what();
  }
  try {
    fuzz::isolated_evaluate(hang, small_case(), hang_iso);
    FAIL() << "no hang reported";
  } catch (const fuzz::KernelCrash& e) {
    EXPECT_NE(std::string(e.what()).find("hung"), std::string::npos) << e.what();
  }
  try {
    fuzz::isolated_evaluate(quit, small_case(), iso);
    FAIL() << "no exit reported";
  } catch (const fuzz::KernelCrash& e) {
    EXPECT_NE(std::string(e.what()).find("status 3"), std::string::npos) << e.what();
  }
}

TEST_P(FuzzIsolationModes, ResultsAndErrorsComeBackUnchanged) {
  const fuzz::Isolation iso{GetParam(), 10};
  Dying big(Dying::Big), thrower(Dying::Throw);
  const Result r = fuzz::isolated_evaluate(big, small_case(), iso);  // 2.4 MB through the pipe
  const Result direct = evaluate(big, small_case());
  EXPECT_EQ(r.outputs.at("output").data, direct.outputs.at("output").data);
  EXPECT_EQ(r.grads.at("input").shape, (Shape{2, 3}));
  EXPECT_EQ(r.backend, "dying");
  EXPECT_THROW(fuzz::isolated_evaluate(thrower, small_case(), iso), Unsupported);
  Case bad = small_case();
  bad.params["mode"] = "cubic";
  EXPECT_THROW(fuzz::isolated_evaluate(big, bad, iso), InvalidCase);
}

// A slow-start backend (evaluated in a long-lived worker): answers with the id of the process
// it ran in, dies on an input whose first value is 13 (segfault) or 14 (hangs), and can send a
// large result.
class SlowStarter : public Backend {
 public:
  std::string name() const override { return "slow-starter"; }
  std::string description() const override { return "reports its process"; }
  bool slow_start() const override { return true; }
  Result run(const Case& c, const ValidParams& vp) override {
    const double first = c.in("input").data.empty() ? 0 : c.in("input").data[0];
    if (first == 13) std::raise(SIGSEGV);
    if (first == 14)
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    Result r;
    Tensor t({first == 15 ? 300000 : 1});
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = double(i) * 0.5;
    t.data[0] = double(getpid());
    r.outputs["output"] = t;
    return r;
  }
};

Case with_first_value(double v) {
  Case c = small_case();
  Tensor& in = c.inputs.at("input");
  if (!in.data.empty()) in.data[0] = v;
  return c;
}

double pid_of(const Result& r) { return r.outputs.at("output").data[0]; }

TEST(FuzzIsolation, SlowStartBackendsKeepOneWorkerAndReplaceItWhenItDies) {
  ASSERT_FALSE(small_case().in("input").data.empty());
  const fuzz::Isolation iso{fuzz::IsolationMode::PerCase, 1.0};
  SlowStarter b;
  const double first = pid_of(fuzz::isolated_evaluate(b, with_first_value(0.5), iso));
  EXPECT_NE(first, double(getpid())) << "evaluated in the campaign's own process";
  EXPECT_EQ(pid_of(fuzz::isolated_evaluate(b, with_first_value(0.25), iso)), first) << "a new process per case";
  const Result big = fuzz::isolated_evaluate(b, with_first_value(15), iso);  // 2.4 MB back through the pipe
  EXPECT_EQ(big.outputs.at("output").data.size(), 300000u);
  EXPECT_EQ(big.outputs.at("output").data[299999], 299999 * 0.5);
  try {
    fuzz::isolated_evaluate(b, with_first_value(13), iso);
    FAIL() << "no crash reported";
  } catch (const fuzz::KernelCrash& e) {
    EXPECT_NE(std::string(e.what()).find("signal 11"), std::string::npos) << e.what();
  }
  const double second = pid_of(fuzz::isolated_evaluate(b, with_first_value(0.5), iso));
  EXPECT_NE(second, first) << "the dead worker was not replaced";
  try {
    fuzz::isolated_evaluate(b, with_first_value(14), iso);
    FAIL() << "no hang reported";
  } catch (const fuzz::KernelCrash& e) {
    EXPECT_NE(std::string(e.what()).find("hung"), std::string::npos) << e.what();
  }
  EXPECT_NE(pid_of(fuzz::isolated_evaluate(b, with_first_value(0.5), iso)), second) << "the hung worker was kept";
  Case bad = small_case();
  bad.params["mode"] = "cubic";
  EXPECT_THROW(fuzz::isolated_evaluate(b, bad, iso), InvalidCase);
}

// A stop request (Ctrl-C) while the worker is busy abandons the case within the pipe layer's
// 100 ms poll, not at the timeout, and the next evaluation gets a fresh worker.
TEST(FuzzIsolation, AStopWhileTheWorkerIsBusyAbandonsTheCaseAtOnce) {
  const fuzz::Isolation iso{fuzz::IsolationMode::Worker, 30.0};
  SlowStarter b;
  const double before = pid_of(fuzz::isolated_evaluate(b, with_first_value(0.5), iso));
  std::thread stopper([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    fuzz::request_stop();
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(fuzz::isolated_evaluate(b, with_first_value(14), iso), fuzz::Interrupted);  // 14: hangs
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stopper.join();
  fuzz::clear_stop();
  EXPECT_LT(waited, 5.0) << "the stop waited for the hung case";
  EXPECT_NE(pid_of(fuzz::isolated_evaluate(b, with_first_value(0.5), iso)), before) << "the abandoned worker was kept";
}

// Any in-process backend, not only a slow-start one: the default keeps one worker per backend
// (fast), `fork` gives every evaluation a fresh process (nothing shared between cases).
class QuickStarter : public SlowStarter {
 public:
  bool slow_start() const override { return false; }
};

TEST(FuzzIsolation, TheWorkerModeKeepsOneProcessPerBackendTheForkModeOnePerCase) {
  QuickStarter b;
  const fuzz::Isolation worker{fuzz::IsolationMode::Worker, 5.0}, per_case{fuzz::IsolationMode::PerCase, 5.0};
  const double w1 = pid_of(fuzz::isolated_evaluate(b, with_first_value(0.5), worker));
  EXPECT_NE(w1, double(getpid()));
  EXPECT_EQ(pid_of(fuzz::isolated_evaluate(b, with_first_value(0.25), worker)), w1);
  const double f1 = pid_of(fuzz::isolated_evaluate(b, with_first_value(0.5), per_case));
  const double f2 = pid_of(fuzz::isolated_evaluate(b, with_first_value(0.5), per_case));
  EXPECT_NE(f1, w1);
  EXPECT_NE(f2, f1) << "a fork per case was reused";
  EXPECT_NE(f1, double(getpid()));
}

}  // namespace
}  // namespace oplab
