// Batched evaluation in the fuzz workers (fuzz/worker.h, fuzz/prefetch.h): a case's evaluations
// go to a backend's worker in one message. Each case must be answered as if it had been sent
// alone, a crash or a hang must be pinned to the case that caused it and timed per case, a
// stop must abandon the batch at once, two workers must work at the same time, and a campaign
// must reach the same verdicts batched or not.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <sstream>
#include <thread>

#include "fuzz/campaign.h"
#include "fuzz/generators.h"
#include "fuzz/interrupt.h"
#include "fuzz/isolate.h"
#include "fuzz/prefetch.h"
#include "fuzz/properties.h"
#include "fuzz/seeds.h"
#include "fuzz/wire.h"
#include "fuzz/worker.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

namespace fs = std::filesystem;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

// Answers with the id of its process, the sum of its input and how many cases its process has
// evaluated; by the input's first value it
// segfaults (13), hangs (14), sends a large result (15), or sleeps 0.3 s before answering (16).
class Reporter : public Backend {
 public:
  explicit Reporter(std::string name = "reporter") : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "reports its process and its input's sum"; }
  Result run(const Case& c, const ValidParams& vp) override {
    const Tensor& in = c.in("input");
    const double first = in.data.empty() ? 0 : in.data[0];
    if (first == 13) std::raise(SIGSEGV);
    if (first == 14)
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    if (first == 16) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    Result r;
    static int runs = 0;  // per process
    ++runs;
    Tensor t({first == 15 ? 300000 : 3});
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = double(i) * 0.5;
    t.data[0] = double(getpid());
    double sum = 0;
    for (double v : in.data) sum += v;
    t.data[1] = sum;
    t.data[2] = runs;
    r.outputs["output"] = t;
    return r;
  }

 private:
  std::string name_;
};

Case small_case(double first) {
  const uint64_t seed = fuzz::case_seed(1, "interpolate", 0);
  Case c = fuzz::draw_case(fuzz::gen_case("interpolate"), seed, 0);
  c.inputs.at("input").data.at(0) = first;
  return c;
}

fuzz::WorkerBatch batch_of(Backend& b, const std::vector<Case>& cases) {
  fuzz::WorkerBatch batch;
  batch.backend = &b;
  for (const Case& c : cases) {
    batch.cases.push_back(&c);
    batch.bytes.push_back(fuzz::wire::encode_case(c));
  }
  return batch;
}

double pid_of(const Result& r) { return r.outputs.at("output").data[0]; }
double sum_of(const Result& r) { return r.outputs.at("output").data[1]; }
double runs_of(const Result& r) { return r.outputs.at("output").data[2]; }

TEST(FuzzBatch, EveryCaseIsAnsweredAsItWouldBeAlone) {
  Reporter b;
  Case invalid = small_case(0.5);
  invalid.params["mode"] = "cubic";
  const std::vector<Case> cases = {small_case(0.5), small_case(15), invalid, small_case(0.25)};
  std::vector<fuzz::WorkerBatch> batches = {batch_of(b, cases)};
  fuzz::worker_evaluate_batches(batches, 10);
  const fuzz::WorkerBatch& got = batches[0];
  ASSERT_EQ(got.answers.size(), cases.size());
  EXPECT_FALSE(got.crashed_at);
  for (const auto& a : got.answers) ASSERT_TRUE(a);
  const Result r0 = fuzz::wire::decode(*got.answers[0]), r1 = fuzz::wire::decode(*got.answers[1]);
  const Result r3 = fuzz::wire::decode(*got.answers[3]);
  EXPECT_NE(pid_of(r0), double(getpid())) << "evaluated in the campaign's own process";
  EXPECT_EQ(pid_of(r1), pid_of(r0)) << "one batch, one worker";
  // Each answer is that case's, as evaluated alone (the sums tell the cases apart).
  const fuzz::Isolation alone{fuzz::IsolationMode::Worker, 10};
  EXPECT_EQ(sum_of(r0), sum_of(fuzz::isolated_evaluate(b, cases[0], alone)));
  EXPECT_EQ(sum_of(r3), sum_of(fuzz::isolated_evaluate(b, cases[3], alone)));
  EXPECT_NE(sum_of(r0), sum_of(r3));
  ASSERT_EQ(r1.outputs.at("output").data.size(), 300000u);  // 2.4 MB back in the same answer
  EXPECT_EQ(r1.outputs.at("output").data[299999], 299999 * 0.5);
  EXPECT_THROW(fuzz::wire::decode(*got.answers[2]), InvalidCase);
}

TEST(FuzzBatch, ACrashIsPinnedToTheCaseThatCrashedAndTheWorkerReplaced) {
  Reporter b;
  const fuzz::Isolation alone{fuzz::IsolationMode::Worker, 10};
  const double before = pid_of(fuzz::isolated_evaluate(b, small_case(0.5), alone));
  const std::vector<Case> cases = {small_case(0.5), small_case(13), small_case(0.25)};
  std::vector<fuzz::WorkerBatch> batches = {batch_of(b, cases)};
  fuzz::worker_evaluate_batches(batches, 10);
  const fuzz::WorkerBatch& got = batches[0];
  ASSERT_TRUE(got.crashed_at);
  EXPECT_EQ(*got.crashed_at, 1u);
  for (const auto& a : got.answers) EXPECT_FALSE(a) << "an answer kept from a dead worker's batch";
  try {
    std::rethrow_exception(got.crash);
  } catch (const fuzz::KernelCrash& e) {
    EXPECT_NE(std::string(e.what()).find("signal 11"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("reporter: interpolate"), std::string::npos) << e.what();
  }
  EXPECT_NE(pid_of(fuzz::isolated_evaluate(b, small_case(0.5), alone)), before) << "the dead worker was kept";
}

TEST(FuzzBatch, TheTimeoutIsPerCaseNotPerBatch) {
  Reporter b;
  // Four cases of 0.3 s each (1.2 s in all) under a 1 s timeout: none of them is a hang; the
  // fifth never answers and is.
  const std::vector<Case> cases = {small_case(16), small_case(16), small_case(16), small_case(16), small_case(14)};
  std::vector<fuzz::WorkerBatch> batches = {batch_of(b, cases)};
  const auto t0 = clock_type::now();
  fuzz::worker_evaluate_batches(batches, 1.0);
  const double waited = seconds_since(t0);
  ASSERT_TRUE(batches[0].crashed_at);
  EXPECT_EQ(*batches[0].crashed_at, 4u);
  try {
    std::rethrow_exception(batches[0].crash);
  } catch (const fuzz::KernelCrash& e) {
    EXPECT_NE(std::string(e.what()).find("hung: no answer within 1 s"), std::string::npos) << e.what();
  }
  EXPECT_GT(waited, 2.1);  // 1.2 s of slow cases, then a full second for the hang
  EXPECT_LT(waited, 6.0);
}

TEST(FuzzBatch, AStopAbandonsTheBatchAtOnce) {
  Reporter b;
  const std::vector<Case> cases = {small_case(0.5), small_case(14)};
  std::vector<fuzz::WorkerBatch> batches = {batch_of(b, cases)};
  std::thread stopper([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    fuzz::request_stop();
  });
  const auto t0 = clock_type::now();
  EXPECT_THROW(fuzz::worker_evaluate_batches(batches, 30), fuzz::Interrupted);
  const double waited = seconds_since(t0);
  stopper.join();
  fuzz::clear_stop();
  EXPECT_LT(waited, 5.0) << "the stop waited for the hung case";
  // The abandoned worker is gone: the next batch is answered, by a fresh one.
  std::vector<Case> again = {small_case(0.5)};
  batches = {batch_of(b, again)};
  fuzz::worker_evaluate_batches(batches, 10);
  EXPECT_TRUE(batches[0].answers.at(0));
}

TEST(FuzzBatch, TwoBackendsWorkersEvaluateAtTheSameTime) {
  Reporter a("reporter-a"), b("reporter-b");
  const std::vector<Case> slow = {small_case(16), small_case(16)};  // 0.6 s per batch
  const std::vector<Case> one = {small_case(0.5)};
  std::vector<fuzz::WorkerBatch> warm = {batch_of(a, one), batch_of(b, one)};
  fuzz::worker_evaluate_batches(warm, 10);  // both workers started
  std::vector<fuzz::WorkerBatch> batches = {batch_of(a, slow), batch_of(b, slow)};
  const auto t0 = clock_type::now();
  fuzz::worker_evaluate_batches(batches, 10);
  const double waited = seconds_since(t0);
  EXPECT_TRUE(batches[0].answers.at(1) && batches[1].answers.at(1));
  EXPECT_LT(waited, 1.1) << "the second worker waited for the first (1.2 s one after the other)";
}

// The campaign's side: answers batched ahead are kept in the contexts and found by the checks,
// a crash included (the check sees it as its own).
TEST(FuzzBatch, PrefetchedAnswersAndCrashesAreWhatTheChecksSee) {
  Reporter b, d("reporter-d");  // two workers: a crash loses every answer of its own batch
  auto ref = make_ref_backend();
  const fuzz::Isolation iso{fuzz::IsolationMode::Worker, 10};
  const Case ok = small_case(0.5), dies = small_case(13);
  fuzz::CheckContext c1(ok, b, *ref, iso), c2(dies, d, *ref, iso);
  std::vector<std::pair<fuzz::CheckContext*, fuzz::Ask>> asks = {{&c1, {&b, ok}}, {&c2, {&d, dies}}, {&c1, {&b, ok}}};
  fuzz::prefetch(asks);
  const fuzz::Answers::Answer* kept = c1.answers_of(b).find(b, fuzz::wire::encode_case(ok));
  ASSERT_TRUE(kept && kept->result);
  const Result again = c1.eval(b, ok);
  EXPECT_EQ(runs_of(again), runs_of(*kept->result)) << "evaluated again";
  const fuzz::Answers::Answer* crash = c2.answers_of(d).find(d, fuzz::wire::encode_case(dies));
  ASSERT_TRUE(crash) << "the crash was not kept";
  EXPECT_TRUE(crash->crashed);
  EXPECT_THROW(c2.eval(d, dies), fuzz::KernelCrash);
  EXPECT_TRUE(c2.crashed());
  EXPECT_FALSE(c1.crashed());
}

// A backend in a process of its own, as the peer bridges are (out_of_process): the campaign
// evaluates it in its own process. It counts its evaluations, sleeps 0.3 s on an input whose
// first value is 16, and reports a crash of its process (KernelCrash) on 13.
class Bridged : public Backend {
 public:
  explicit Bridged(std::string name = "bridged") : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::string description() const override { return "counts its evaluations; slow on 16, dies on 13"; }
  bool out_of_process() const override { return true; }
  Result run(const Case& c, const ValidParams& vp) override {
    ++runs;
    const Tensor& in = c.in("input");
    const double first = in.data.empty() ? 0 : in.data[0];
    if (first == 13) throw KernelCrash("bridged: interpolate: crashed: its process died");
    if (first == 16) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    Result r;
    r.outputs["output"] = Tensor({1}, first);
    return r;
  }
  std::atomic<int> runs{0};

 private:
  std::string name_;
};

// The bridges' asks are answered ahead too, each bridge's while the others' and the workers'
// are (0.3 s each: 0.9 s one after the other), and the checks find them kept, a crash included.
TEST(FuzzBatch, BridgedBackendsAreAnsweredAheadWhileTheWorkersEvaluate) {
  Reporter w;
  Bridged p, q("bridged-q");
  auto ref = make_ref_backend();
  const fuzz::Isolation iso{fuzz::IsolationMode::Worker, 10};
  const std::vector<Case> one = {small_case(0.5)};
  std::vector<fuzz::WorkerBatch> warm = {batch_of(w, one)};
  fuzz::worker_evaluate_batches(warm, 10);  // the worker started
  const Case slow = small_case(16), dies = small_case(13);
  fuzz::CheckContext c1(slow, w, *ref, iso), c2(slow, p, *ref, iso), c3(dies, p, *ref, iso), c4(slow, q, *ref, iso);
  std::vector<std::pair<fuzz::CheckContext*, fuzz::Ask>> asks = {
      {&c1, {&w, slow}}, {&c2, {&p, slow}}, {&c3, {&p, dies}}, {&c2, {&p, slow}}, {&c4, {&q, slow}}};
  bool drew = false;
  const auto t0 = clock_type::now();
  fuzz::prefetch(asks, [&] { drew = true; });
  const double waited = seconds_since(t0);
  EXPECT_TRUE(drew);
  EXPECT_LT(waited, 0.55) << "a bridge waited for another, or for the worker";
  EXPECT_EQ(q.runs.load(), 1);
  EXPECT_EQ(p.runs.load(), 2) << "the same case asked twice by one context is evaluated once";
  ASSERT_TRUE(c2.answers_of(p).find(p, fuzz::wire::encode_case(slow)));
  EXPECT_EQ(c2.eval(p, slow).outputs.at("output").data.at(0), 16);
  const fuzz::Answers::Answer* crash = c3.answers_of(p).find(p, fuzz::wire::encode_case(dies));
  ASSERT_TRUE(crash) << "the crash was not kept";
  EXPECT_TRUE(crash->crashed);
  EXPECT_THROW(c3.eval(p, dies), fuzz::KernelCrash);
  EXPECT_TRUE(c3.crashed());
  EXPECT_EQ(p.runs.load(), 2) << "a check evaluated again what was answered ahead";
  EXPECT_TRUE(c1.answers_of(w).find(w, fuzz::wire::encode_case(slow)));
}

// A backend with defects the properties catch now and then: the reference, off by 1e-3 where
// the input's first value is negative, and segfaulting on inputs of exactly 3 channels.
class Quirky : public Backend {
 public:
  std::string name() const override { return "quirky"; }
  std::string description() const override { return "ref, off on negative first values, dies on 3 channels"; }
  Result run(const Case& c, const ValidParams& vp) override {
    const Tensor& in = c.in("input");
    if (in.rank() >= 2 && in.shape[1] == 3) std::raise(SIGSEGV);
    Result r = ref_->run(c, vp);
    if (!in.data.empty() && in.data[0] < 0)
      for (double& v : r.outputs.at("output").data) v += 1e-3;
    return r;
  }

 private:
  std::unique_ptr<Backend> ref_ = make_ref_backend();
};

// The same defects in a backend of its own process (answered from a thread of the campaign),
// its death reported as the bridges report theirs.
class QuirkyBridged : public Quirky {
 public:
  std::string name() const override { return "quirky-bridged"; }
  bool out_of_process() const override { return true; }
  Result run(const Case& c, const ValidParams& vp) override {
    const Tensor& in = c.in("input");
    if (in.rank() >= 2 && in.shape[1] == 3) throw KernelCrash("quirky-bridged: " + c.op + ": crashed: its process died");
    return Quirky::run(c, vp);
  }
};

// The records without their timings, and the failures found.
nlohmann::json verdicts_of(const fuzz::CampaignResult& r) {
  nlohmann::json records = r.summary.at("records");
  for (auto& rec : records) {
    rec.erase("seconds");
    rec.erase("cases_per_second");
  }
  nlohmann::json failures = nlohmann::json::array();
  for (const auto& f : r.failures) failures.push_back({f.op, f.property, f.detail, f.occurrences});
  return {{"records", records}, {"failures", failures}, {"cases", r.cases}, {"checks", r.checks}};
}

TEST(FuzzBatch, ACampaignReachesTheSameVerdictsBatchedOrNot) {
  Registry reg;
  reg.add(make_ref_backend());
  reg.add(std::make_unique<Quirky>());
  reg.add(std::make_unique<QuirkyBridged>());
  auto run = [&](bool batch) {
    const fs::path out = fs::temp_directory_path() / ("oplab_fuzz_batch_" + std::to_string(getpid()) + (batch ? "_on" : "_off"));
    fs::remove_all(out);
    fuzz::CampaignOptions o;
    o.ops = {"interpolate", "roi_align"};
    o.backends = {"quirky", "quirky-bridged"};
    o.seed = 20261125;
    o.out = out.string();
    o.cases = 25;
    o.keep_going = true;
    o.shrink_time_s = 0;
    o.batch = batch;
    std::ostringstream progress;
    const fuzz::CampaignResult r = fuzz::run_campaign(o, reg, progress);
    fs::remove_all(out);
    return verdicts_of(r);
  };
  const nlohmann::json batched = run(true), alone = run(false);
  EXPECT_EQ(batched, alone);
  // The campaign met both defects, so the comparison covered failures and crashes.
  const std::string failures = batched.at("failures").dump();
  EXPECT_NE(failures.find("signal 11"), std::string::npos) << failures;
  EXPECT_NE(failures.find("its process died"), std::string::npos) << failures;
  EXPECT_NE(failures.find("differential"), std::string::npos) << failures;
}

}  // namespace
}  // namespace oplab
