// Fuzz campaigns end to end (fuzz/campaign.h): a short fixed-seed campaign per op and backend
// that must find nothing; crashes and hangs recorded as failures with their case; shards that
// merge into the whole campaign; and a report that is complete on disk at every moment.
#include <gtest/gtest.h>

#include "core/limits.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "cli/builtin_backends.h"
#include "core/case_io.h"
#include "core/op_desc.h"
#include "fuzz/campaign.h"
#include "fuzz/campaign_state.h"
#include "fuzz/interrupt.h"
#include "fuzz/merge.h"
#include "fuzz/wire.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& tag) {
  const fs::path d = fs::temp_directory_path() / ("oplab_fuzz_" + std::to_string(::getpid()) + "_" + tag);
  fs::remove_all(d);
  return d;
}

fuzz::CampaignOptions options(const std::string& op, const std::string& backend, const fs::path& out) {
  fuzz::CampaignOptions o;
  o.ops = {op};
  o.backends = {backend};
  o.seed = 20261122;
  o.out = out.string();
  o.shrink_time_s = 10;
  return o;
}

// ---- A short fixed-seed campaign per op and backend: every property, nothing may fail. ----

// 30 cases of every op in `ops` on `backend`, every property; reports cases/s per op.
void expect_clean_campaign(const std::vector<std::string>& ops, const std::string& backend) {
  Backend* b = builtin_backends().find(backend);
  ASSERT_NE(b, nullptr);
  if (auto why = b->unavailable_reason()) GTEST_SKIP() << backend << " cannot run here: " << *why;
  for (const std::string& op : ops) {
    const fs::path out = temp_dir(op + "_" + backend);
    fuzz::CampaignOptions o = options(op, backend, out);
    o.cases = 30;
    o.keep_going = true;
    std::ostringstream progress;
    const fuzz::CampaignResult r = fuzz::run_campaign(o, builtin_backends(), progress);
    std::cout << "[campaign] " << op << " on " << backend << ": " << r.cases << " cases, " << r.checks << " checks in "
              << r.seconds << " s (" << double(r.cases) / r.seconds << " cases/s)\n";
    EXPECT_EQ(r.cases, 30);
    for (const auto& f : r.failures)
      ADD_FAILURE() << f.property << " " << op << " on " << f.backend << ": " << f.detail
                    << "\n  minimal case: " << f.minimal_case.dump();
    EXPECT_FALSE(r.interrupted);
    fs::remove_all(out);
  }
}

class ShortCampaignOnRef : public ::testing::TestWithParam<std::string> {};

TEST_P(ShortCampaignOnRef, FindsNothing) { expect_clean_campaign({GetParam()}, "ref"); }

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  for (const auto& d : all_ops()) v.push_back(d.name);
  return v;
}

INSTANTIATE_TEST_SUITE_P(PerOp, ShortCampaignOnRef, ::testing::ValuesIn(op_names()));

// The peer in one test: its bridge (a Python interpreter importing torch) starts once.
TEST(ShortCampaignOnTorchvision, EveryOpFindsNothing) { expect_clean_campaign(op_names(), "torchvision"); }

// ---- Crashes and hangs ----

// The reference, except that it segfaults on interpolate cases with a 2-D input and hangs on
// 1-D ones: a kernel with two ways to die.
class Fragile : public Backend {
 public:
  std::string name() const override { return "fragile"; }
  std::string description() const override { return "segfaults on 2-D, hangs on 1-D interpolate"; }
  Result run(const Case& c, const ValidParams& vp) override {
    const int rank = c.in("input").rank();
    if (rank == 4) std::raise(SIGSEGV);
    if (rank == 3)
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    return ref_->run(c);
  }

 private:
  std::unique_ptr<Backend> ref_ = make_ref_backend();
};

TEST(FuzzCampaign, CrashesAndHangsAreFailuresWithTheirCase) {
  Registry reg;
  reg.add(make_ref_backend());
  reg.add(std::make_unique<Fragile>());
  const fs::path out = temp_dir("fragile");
  fuzz::CampaignOptions o = options("interpolate", "fragile", out);
  o.properties = {"differential"};
  o.cases = 8;
  o.keep_going = true;
  o.isolation.timeout_s = 0.3;
  o.shrink_time_s = 0.5;
  std::ostringstream progress;
  const fuzz::CampaignResult r = fuzz::run_campaign(o, reg, progress);
  EXPECT_EQ(r.cases, 8);  // the campaign survived every death
  bool crash = false, hang = false;
  for (const auto& f : r.failures) {
    crash |= f.detail.find("signal 11") != std::string::npos;
    hang |= f.detail.find("hung") != std::string::npos;
    const json record = read_json_file(f.record_path);
    EXPECT_TRUE(record.at("crashed").get<bool>()) << f.detail;
    const Case minimal = case_from_json(read_json_file(f.case_path));
    EXPECT_EQ(minimal.op, "interpolate");
  }
  EXPECT_TRUE(crash) << progress.str();
  EXPECT_TRUE(hang) << progress.str();
  fs::remove_all(out);
}

// A drawn case over the resource policy is refused alike by every backend: the campaign skips
// it (no evidence either way) instead of counting an ERROR on each backend.
class RefAgain : public Backend {
 public:
  std::string name() const override { return "ref-again"; }
  std::string description() const override { return "the reference under another name"; }
  Result run(const Case& c, const ValidParams& vp) override { return ref_->run(c, vp); }

 private:
  std::unique_ptr<Backend> ref_ = make_ref_backend();
};

TEST(FuzzCampaign, ACaseOverTheResourcePolicyIsSkippedNotAnError) {
  const ResourceLimits saved = resource_limits();
  ResourceLimits tight = saved;
  tight.bin_samples = 4;  // most roi_align cases sample more than 4 points per bin
  set_resource_limits(tight);
  Registry reg;
  reg.add(make_ref_backend());
  reg.add(std::make_unique<RefAgain>());
  const fs::path out = temp_dir("over-policy");
  fuzz::CampaignOptions o = options("roi_align", "ref-again", out);
  o.properties = {"differential"};
  o.cases = 30;
  o.keep_going = true;
  std::ostringstream progress;
  const fuzz::CampaignResult r = fuzz::run_campaign(o, reg, progress);
  set_resource_limits(saved);
  EXPECT_TRUE(r.failures.empty()) << progress.str();
  const json summary = read_json_file((out / "summary.json").string());
  int64_t skipped = 0;
  for (const json& rec : summary.at("records")) skipped += rec.at("verdicts").value("skipped", int64_t(0));
  EXPECT_GT(skipped, 0) << summary.dump();
  fs::remove_all(out);
}

// The oracle's answers on one drawn case are shared by every subject's checks: with two subjects
// it is evaluated exactly as often as with one (each subject alone would ask it the same cases).
// In-process (isolation none), so that the count is kept in this process.
class CountingRef : public Backend {
 public:
  static inline int runs = 0;
  std::string name() const override { return "counting-ref"; }
  std::string description() const override { return "the reference, counting its evaluations"; }
  Result run(const Case& c, const ValidParams& vp) override {
    ++runs;
    return ref_->run(c, vp);
  }

 private:
  std::unique_ptr<Backend> ref_ = make_ref_backend();
};

class RefOnceMore : public RefAgain {
 public:
  std::string name() const override { return "ref-once-more"; }
};

TEST(FuzzCampaign, TheOraclesAnswersAreSharedBySubjects) {
  Registry reg;
  reg.add(make_ref_backend());
  reg.add(std::make_unique<RefAgain>());
  reg.add(std::make_unique<RefOnceMore>());
  reg.add(std::make_unique<CountingRef>());
  auto oracle_runs = [&](const std::vector<std::string>& subjects) {
    const fs::path out = temp_dir("shared-oracle");
    fuzz::CampaignOptions o = options("roi_align", "ref-again", out);
    o.backends = subjects;
    o.against = "counting-ref";
    o.properties = {"differential", "rejects"};
    o.isolation.mode = fuzz::IsolationMode::None;
    o.cases = 12;
    o.keep_going = true;
    std::ostringstream progress;
    CountingRef::runs = 0;
    const fuzz::CampaignResult r = fuzz::run_campaign(o, reg, progress);
    EXPECT_TRUE(r.failures.empty()) << progress.str();
    fs::remove_all(out);
    return CountingRef::runs;
  };
  const int one = oracle_runs({"ref-again"});
  EXPECT_GT(one, 0);
  EXPECT_EQ(oracle_runs({"ref-again", "ref-once-more"}), one);
}

// In-process evaluation (--isolation none): a kernel that crashes ends
// the campaign's process. What it leaves must still read true: a summary, written from the
// start, that every reader sees as killed, not running.
TEST(FuzzCampaign, ACrashInProcessLeavesACampaignThatReadsKilled) {
  const fs::path out = temp_dir("inprocess");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(30);  // Fragile hangs on 1-D cases: if one comes first, the alarm is the kernel's death
    Registry reg;
    reg.add(make_ref_backend());
    reg.add(std::make_unique<Fragile>());
    fuzz::CampaignOptions o = options("interpolate", "fragile", out);
    o.properties = {"differential"};
    o.cases = 50;
    o.isolation.mode = fuzz::IsolationMode::None;
    std::ostringstream progress;
    fuzz::run_campaign(o, reg, progress);
    _exit(0);  // not reached: Fragile segfaults on the first 2-D case
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the campaign should have died with its kernel";
  const json summary = read_json_file((out / "summary.json").string());
  EXPECT_EQ(summary.at("status"), "running");
  const fuzz::CampaignState st = fuzz::read_state(out.string(), summary);
  EXPECT_EQ(st.status, "killed") << st.detail;
  fs::remove_all(out);
}

// A kernel that hangs on every case: each shrink candidate costs the whole timeout, so a stop
// requested after the failure is found lands in the middle of its shrinking.
class Sleepy : public Backend {
 public:
  std::string name() const override { return "sleepy"; }
  std::string description() const override { return "hangs on every case"; }
  Result run(const Case&, const ValidParams&) override {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
};

// Ctrl-C while shrinking keeps the best case so far, and says it is only partly shrunk, on
// screen and in the record: never "shrunk" for a case the shrinker did not finish.
TEST(FuzzCampaign, AnInterruptedShrinkIsLabelledPartlyShrunk) {
  Registry reg;
  reg.add(make_ref_backend());
  reg.add(std::make_unique<Sleepy>());
  const fs::path out = temp_dir("sleepy");
  fuzz::CampaignOptions o = options("interpolate", "sleepy", out);
  o.properties = {"differential"};
  o.cases = 4;
  o.isolation.timeout_s = 0.2;
  o.shrink_time_s = 60;
  std::thread stopper([&] {
    for (int i = 0; i < 200; ++i) {
      std::ifstream ev(out / "events.jsonl");
      std::stringstream all;
      all << ev.rdbuf();
      if (all.str().find("failure-found") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(700));  // a few candidates into the shrink
    fuzz::request_stop();
  });
  std::ostringstream progress;
  const fuzz::CampaignResult r = fuzz::run_campaign(o, reg, progress);
  stopper.join();
  EXPECT_TRUE(r.interrupted);
  ASSERT_EQ(r.failures.size(), 1u) << progress.str();
  EXPECT_FALSE(r.failures[0].shrunk);
  const json record = read_json_file(r.failures[0].record_path);
  EXPECT_EQ(record.at("shrink_state"), "partly shrunk (interrupted)") << record.dump();
  EXPECT_FALSE(record.at("shrunk").get<bool>());
  EXPECT_TRUE(record.at("shrink").at("interrupted").get<bool>());
  EXPECT_NE(progress.str().find("partly shrunk (interrupted)"), std::string::npos) << progress.str();
  EXPECT_EQ(read_json_file((out / "summary.json").string()).at("failures").size(), 1u);
  fs::remove_all(out);
}

// ---- The worker's wire: a case arrives exactly as it was sent ----

bool same_bits(const Tensor& a, const Tensor& b) {
  // An empty tensor's data() may be null, which memcmp may not be given even for 0 bytes.
  return a.shape == b.shape && a.data.size() == b.data.size() &&
         (a.data.empty() || std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(double)) == 0);
}

TEST(FuzzWire, ACaseCrossesThePipeBitForBit) {
  Case c;
  c.op = "roi_align";
  // A NaN param (an invalid case's), an integer, a bool, a double that text would round.
  c.params = {{"spatial_scale", std::nan("")}, {"sampling_ratio", -1}, {"aligned", true}, {"x", 0.1 + 0.2}};
  Tensor input({1, 2, 1, 3});
  input.data = {-0.0, INFINITY, -INFINITY, std::nan(""), 4.9e-324, -1.7976931348623157e308};
  c.inputs["input"] = input;
  c.inputs["rois"] = Tensor({0, 5});  // no rois at all
  Tensor g({2});
  g.data = {1.0 / 3.0, -2.5};
  c.grad_output = g;

  const Case back = fuzz::wire::decode_case(fuzz::wire::encode_case(c));
  EXPECT_EQ(back.op, c.op);
  EXPECT_TRUE(std::isnan(back.params.at("spatial_scale").get<double>())) << back.params.dump();
  EXPECT_EQ(back.params.at("sampling_ratio").get<int64_t>(), -1);
  EXPECT_EQ(back.params.at("aligned").get<bool>(), true);
  EXPECT_EQ(back.params.at("x").get<double>(), 0.1 + 0.2);
  ASSERT_EQ(back.inputs.size(), 2u);
  EXPECT_TRUE(same_bits(back.inputs.at("input"), input));
  EXPECT_TRUE(same_bits(back.inputs.at("rois"), c.inputs.at("rois")));
  ASSERT_TRUE(back.grad_output.has_value());
  EXPECT_TRUE(same_bits(*back.grad_output, g));

  c.grad_output.reset();  // a forward-only case stays one
  EXPECT_FALSE(fuzz::wire::decode_case(fuzz::wire::encode_case(c)).grad_output.has_value());

  std::string bytes = fuzz::wire::encode_case(c);
  bytes.pop_back();
  EXPECT_THROW(fuzz::wire::decode_case(bytes), std::runtime_error);
}

// ---- Time spent shrinking, reported apart ----

// A seeded bug that fails within the first cases (tests/test_fuzz_bugs.cpp) is shrunk: the
// campaign's shrink seconds cover the shrinker's own timing of that shrink (measured inside
// fuzz/shrink.cpp, an independent clock), its share is in (0, 1), and cases/s is counted over
// the time not spent shrinking. A clean campaign spends none of its time shrinking.
TEST(FuzzCampaign, TimeSpentShrinkingIsMeasuredAndLeftOutOfCasesPerSecond) {
  const fs::path out = temp_dir("shrink_share");
  fuzz::CampaignOptions o = options("roi_align", "bug-bilinear-neg-band", out);
  o.seed = 1;
  o.properties = {"differential"};
  o.cases = 20;
  std::ostringstream progress;
  const fuzz::CampaignResult r = fuzz::run_campaign(o, builtin_backends(), progress);
  ASSERT_EQ(r.failures.size(), 1u) << progress.str();
  const json record = read_json_file(r.failures[0].record_path);
  ASSERT_TRUE(record.at("shrunk").get<bool>()) << record.dump();
  const double shrinker_s = record.at("shrink").at("seconds").get<double>();
  EXPECT_GT(shrinker_s, 0);
  EXPECT_GE(r.shrink_seconds, shrinker_s);
  EXPECT_LT(r.shrink_seconds, r.seconds);
  const json summary = read_json_file((out / "summary.json").string());
  const double secs = summary.at("elapsed_s").get<double>(), shrink = summary.at("shrink_seconds").get<double>();
  EXPECT_GE(shrink, shrinker_s);
  EXPECT_DOUBLE_EQ(summary.at("shrink_share").get<double>(), shrink / secs);
  EXPECT_DOUBLE_EQ(summary.at("cases_per_second").get<double>(), double(r.cases) / (secs - shrink));
  EXPECT_DOUBLE_EQ(summary.at("seconds_by_phase").at("shrinking").get<double>(), shrink);
  // The last progress line names the share, e.g. "(52/s, shrinking 18%)", and it is not 0%.
  const std::string text = progress.str();
  const size_t at = text.rfind("/s, shrinking ");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_NE(text.compare(at, 17, "/s, shrinking 0%)"), 0) << text;
  fs::remove_all(out);

  const fs::path clean = temp_dir("shrink_none");
  fuzz::CampaignOptions c = options("roi_align", "ref", clean);
  c.cases = 5;
  std::ostringstream quiet;
  const fuzz::CampaignResult none = fuzz::run_campaign(c, builtin_backends(), quiet);
  EXPECT_TRUE(none.failures.empty()) << quiet.str();
  EXPECT_EQ(none.shrink_seconds, 0.0);
  const json s0 = read_json_file((clean / "summary.json").string());
  EXPECT_EQ(s0.at("shrink_seconds").get<double>(), 0.0);
  EXPECT_EQ(s0.at("shrink_share").get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(s0.at("cases_per_second").get<double>(), double(none.cases) / s0.at("elapsed_s").get<double>());
  EXPECT_NE(quiet.str().find("/s, shrinking 0%)"), std::string::npos) << quiet.str();
  fs::remove_all(clean);
}

// ---- Shards and merge ----

// What a summary's records count, per op x backend x property (times differ between runs).
std::map<std::string, json> record_counts(const json& summary) {
  std::map<std::string, json> out;
  for (const auto& r : summary.at("records"))
    out[r.at("op").get<std::string>() + " " + r.at("backend").get<std::string>() + " " +
        r.at("property").get<std::string>()] = {r.at("cases"), r.at("verdicts"), r.at("divergences"),
                                                r.at("forward_only"), r.at("worst_agreeing")};
  return out;
}

std::set<std::string> failure_ids(const json& summary) {
  std::set<std::string> ids;
  for (const auto& f : summary.at("failures")) ids.insert(f.at("id").get<std::string>());
  return ids;
}

TEST(FuzzCampaign, ShardsMergeIntoTheWholeCampaign) {
  const fs::path root = temp_dir("shards");
  auto run = [&](const std::string& shard, const fs::path& out) {
    fuzz::CampaignOptions o = options("all", "bug-interp-size1-scale0", out);
    o.ops = {"interpolate", "roi_pool"};
    o.properties = {"differential", "adjoint"};
    o.cases = 100;
    o.keep_going = true;
    o.shrink_time_s = 1;
    std::string err;
    o.shard = *fuzz::parse_shard(shard, &err);
    std::ostringstream progress;
    return fuzz::run_campaign(o, builtin_backends(), progress);
  };
  const auto whole = run("0/1", root / "whole");
  ASSERT_GT(whole.failures.size(), 0u) << "the seeded bug should show in 100 interpolate cases";
  std::vector<std::string> dirs;
  int64_t cases = 0;
  for (int k = 0; k < 3; ++k) {
    const fs::path d = root / ("shard" + std::to_string(k));
    cases += run(std::to_string(k) + "/3", d).cases;
    dirs.push_back(d.string());
  }
  EXPECT_EQ(cases, whole.cases);
  const json merged = fuzz::merge_campaigns(dirs, (root / "merged").string());
  EXPECT_EQ(merged.at("status"), "finished");
  EXPECT_EQ(merged.at("cases").at("total").get<int64_t>(), whole.cases);
  EXPECT_EQ(record_counts(merged), record_counts(whole.summary));
  EXPECT_EQ(failure_ids(merged), failure_ids(whole.summary));
  for (const auto& f : merged.at("failures")) EXPECT_TRUE(fs::exists(f.at("case").get<std::string>()));

  // A missing shard is reported, and shards of another campaign are refused.
  const json partial = fuzz::merge_campaigns({dirs[0], dirs[2]}, (root / "partial").string());
  EXPECT_EQ(partial.at("status"), "partial");
  EXPECT_EQ(partial.at("missing_shards"), json({"1/3"}));
  EXPECT_THROW(fuzz::merge_campaigns({dirs[0], dirs[0]}, (root / "twice").string()), std::invalid_argument);
  EXPECT_THROW(fuzz::merge_campaigns({dirs[0], (root / "whole").string()}, (root / "mixed").string()),
               std::invalid_argument);
  fs::remove_all(root);
}

// ---- The report on disk ----

TEST(FuzzCampaign, EveryEventIsOnDiskAsOneLineAndTheRecordIsComplete) {
  const fs::path out = temp_dir("report");
  fuzz::CampaignOptions o = options("roi_align", "bug-roialign-aligned-clamp-bwd", out);
  o.time_s = 20;
  std::ostringstream progress;
  const fuzz::CampaignResult r = fuzz::run_campaign(o, builtin_backends(), progress);
  ASSERT_EQ(r.failures.size(), 1u);  // stops at the first failure without --keep-going
  std::ifstream ev(out / "events.jsonl");
  std::string line;
  std::vector<std::string> kinds;
  while (std::getline(ev, line)) kinds.push_back(json::parse(line).at("event").get<std::string>());
  EXPECT_EQ(kinds.front(), "start");
  EXPECT_EQ(kinds.back(), "end");
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "failure-found"), kinds.end());
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "failure"), kinds.end());
  const json summary = read_json_file((out / "summary.json").string());
  EXPECT_EQ(summary.at("status"), "finished");
  const json rec = read_json_file(r.failures[0].record_path);
  for (const char* key : {"campaign_seed", "case_seed", "case_index", "size", "op", "backend", "against", "property",
                          "detail", "metrics", "case", "original_case", "shrink", "replay"})
    EXPECT_TRUE(rec.contains(key)) << key;
  EXPECT_TRUE(rec.at("shrunk").get<bool>());
  EXPECT_FALSE(rec.at("metrics").empty());
  // No temporary is left beside the files.
  for (const auto& e : fs::recursive_directory_iterator(out))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << e.path();
  fs::remove_all(out);
}

}  // namespace
}  // namespace oplab
