// The fuzz verbs of the CLI: `oplab fuzz`, `oplab replay`, `oplab merge`. Bad input gives one
// line on stderr and a non-zero exit; a campaign's failure replays from its record and its
// case file; shards merge; Ctrl-C leaves a complete report behind.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "core/case_io.h"
#include "fuzz/campaign_state.h"
#include "tests/cli_fixture.h"

namespace oplab {
namespace {

namespace fs = std::filesystem;

using testing_cli::CliRun;
using testing_cli::slurp;

class FuzzCli : public testing_cli::CliFixture {
 protected:
  FuzzCli() : CliFixture("") {}
};

TEST_F(FuzzCli, BadInputIsOneLineAndNonZero) {
  const std::string valid_case = path("case.json");
  std::ofstream(valid_case) << R"({"op": "interpolate", "params": {"mode": "nearest", "size": 2},
    "inputs": {"input": {"shape": [1, 1, 3], "data": [1, 2, 3]}}})";
  const struct {
    std::string args;
    int code;
  } cases[] = {
      {"fuzz --cases 5", 2},
      {"fuzz --backend ref", 2},
      {"fuzz --backend ref --cases abc", 2},
      {"fuzz --backend ref --cases 0", 2},
      {"fuzz --backend ref --time -1", 2},
      {"fuzz --backend ref --cases 5 --shard 3/2", 2},
      {"fuzz --backend nope --cases 5", 2},
      {"fuzz --backend ref --op nope --cases 5", 2},
      {"fuzz --backend ref --cases 5 --property nope", 2},
      {"fuzz --backend ref --cases 5 --against nope", 2},
      {"fuzz --backend ref --cases 5 stray", 2},
      {"fuzz --backend ref --cases 5 --bogus", 2},
      {"replay", 2},
      {"replay " + path("missing.json"), 5},
      {"replay " + valid_case + " --backend nope", 2},
      {"replay " + valid_case + " --property nope", 2},
      {"merge", 2},
      {"merge " + path("a"), 2},
      {"merge " + path("not-a-campaign") + " --out " + path("m"), 2},
  };
  for (const auto& c : cases) {
    const CliRun r = run(c.args);
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << ": " << r.err;
  }
}

TEST_F(FuzzCli, AFailureReplaysFromItsRecordAndItsCaseFile) {
  const CliRun f = run("fuzz --op roi_align --backend bug-roialign-count0-nan --time 30 --out " + path("c"));
  EXPECT_EQ(f.code, 1) << f.err;
  EXPECT_NE(f.out.find("DISAGREE differential roi_align on bug-roialign-count0-nan"), std::string::npos) << f.out;
  std::string record, case_file;
  for (const auto& e : fs::directory_iterator(dir_ / "c" / "failures")) {
    const std::string p = e.path().string();
    (p.size() > 10 && p.substr(p.size() - 10) == ".case.json" ? case_file : record) = p;
  }
  ASSERT_FALSE(record.empty());
  ASSERT_FALSE(case_file.empty());

  CliRun r = run("replay " + record);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("still fails"), std::string::npos) << r.out;
  r = run("replay " + record + " --backend ref");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("passes"), std::string::npos) << r.out;
  r = run("replay " + case_file + " --backend bug-roialign-count0-nan");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  r = run("eval " + case_file + " --backend ref");
  EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(FuzzCli, ShardsRunApartAndMerge) {
  for (int k = 0; k < 2; ++k) {
    const CliRun r = run("fuzz --op interpolate --backend ref --cases 20 --shard " + std::to_string(k) + "/2 --out " +
                         path("s" + std::to_string(k)));
    EXPECT_EQ(r.code, 0) << r.out << r.err;
  }
  const CliRun m = run("merge " + path("s0") + " " + path("s1") + " --out " + path("merged"));
  EXPECT_EQ(m.code, 0) << m.out << m.err;
  EXPECT_NE(m.out.find("merged 2 shard(s): 20 cases, 0 failures, status finished"), std::string::npos) << m.out;
  const CliRun partial = run("merge " + path("s0") + " --out " + path("partial"));
  EXPECT_EQ(partial.code, 1) << partial.out;
  EXPECT_NE(partial.out.find("missing shards [\"1/2\"]"), std::string::npos) << partial.out;
}

TEST_F(FuzzCli, PlainProgressLinesWhenNotATerminal) {
  // 4 s: a loaded machine (or a sanitized build) takes over a second for the first case alone.
  const CliRun r = run("fuzz --op interpolate --backend ref --time 4 --progress-every 0.3 --out " + path("p"));
  EXPECT_EQ(r.code, 0) << r.err;
  int lines = 0;
  for (size_t at = r.out.find("[fuzz "); at != std::string::npos; at = r.out.find("[fuzz ", at + 1)) ++lines;
  EXPECT_GE(lines, 3) << r.out;
  EXPECT_EQ(r.out.find('\r'), std::string::npos) << "no carriage returns in a log";
}

TEST_F(FuzzCli, CtrlCLeavesACompleteReport) {
  const std::string out = path("interrupted");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string log = path("log");
    freopen(log.c_str(), "w", stdout);
    execl(OPLAB_CLI, OPLAB_CLI, "fuzz", "--backend", "ref", "--time", "60", "--out", out.c_str(), (char*)nullptr);
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  const json summary = read_json_file(out + "/summary.json");
  EXPECT_EQ(summary.at("status"), "interrupted");
  EXPECT_GT(summary.at("cases").at("total").get<int>(), 0);
  std::ifstream ev(out + "/events.jsonl");
  std::string line, last;
  while (std::getline(ev, line)) last = line;
  EXPECT_EQ(json::parse(last).at("event"), "end");
}

// A campaign killed without warning cannot write its own end: its summary stays "running".
// Every reader must still tell it apart from one that runs: while it runs a second campaign
// on its folder is refused; once killed, it reads "killed" with its last event, and a merge of
// it is partial. A failure saved while it shrank is listed by the report though the summary
// never got it.
TEST_F(FuzzCli, AKilledCampaignReadsKilledAndItsFolderIsLockedWhileItRuns) {
  const std::string out = path("killed");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string log = path("killed.log");
    freopen(log.c_str(), "w", stdout);
    execl(OPLAB_CLI, OPLAB_CLI, "fuzz", "--backend", "ref", "--time", "60", "--out", out.c_str(), (char*)nullptr);
    _exit(127);
  }
  for (int i = 0; i < 100 && !fs::exists(out + "/summary.json"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const CliRun second = run("fuzz --backend ref --cases 3 --out " + out);
  EXPECT_EQ(second.code, 2) << second.out << second.err;
  EXPECT_NE(second.err.find("still running"), std::string::npos) << second.err;
  EXPECT_EQ(fuzz::read_state(out, read_json_file(out + "/summary.json")).status, "running");

  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const json summary = read_json_file(out + "/summary.json");
  ASSERT_EQ(summary.at("status"), "running");  // what the campaign last wrote
  const fuzz::CampaignState st = fuzz::read_state(out, summary);
  EXPECT_EQ(st.status, "killed");
  EXPECT_NE(st.detail.find("last event"), std::string::npos) << st.detail;

  const CliRun merged = run("merge " + out + " --out " + path("killed-merged"));
  EXPECT_EQ(merged.code, 1) << merged.out << merged.err;  // partial
  const json m = read_json_file(path("killed-merged") + "/summary.json");
  EXPECT_EQ(m.at("status"), "partial");
  EXPECT_EQ(m.at("shards").at(0).at("status"), "killed");
}

// --shard auto: the shard of a Slurm array task or a Kubernetes Indexed Job pod, from the
// variables those engines set (docs/shards/); without them, one line and exit 2.
TEST_F(FuzzCli, ShardAutoReadsSlurmAndKubernetesVariables) {
  struct Env {
    std::vector<std::pair<const char*, const char*>> vars;
    std::string shard;  // expected, or "" for a refusal
  };
  const Env envs[] = {
      {{{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_MIN", "4"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}, "1/3"},
      {{{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}, "2/4"},
      {{{"JOB_COMPLETION_INDEX", "3"}, {"OPLAB_SHARD_COUNT", "8"}}, "3/8"},
      {{{"JOB_COMPLETION_INDEX", "8"}, {"OPLAB_SHARD_COUNT", "8"}}, ""},
      {{{"SLURM_ARRAY_TASK_ID", "1"}}, ""},
      {{}, ""},
  };
  const char* all_vars[] = {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT",
                            "JOB_COMPLETION_INDEX", "OPLAB_SHARD_COUNT"};
  int k = 0;
  for (const Env& e : envs) {
    for (const char* v : all_vars) unsetenv(v);
    for (const auto& [name, value] : e.vars) setenv(name, value, 1);
    const std::string out = path("auto" + std::to_string(k++));
    const CliRun r = run("campaign --op roi_pool --backend torchvision --cases 8 --shard auto --out " + out);
    if (e.shard.empty()) {
      EXPECT_EQ(r.code, 2) << r.out << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_NE(r.err.find("--shard auto"), std::string::npos) << r.err;
      EXPECT_FALSE(fs::exists(out + "/summary.json"));
    } else {
      EXPECT_EQ(r.code, 0) << r.out << r.err;
      EXPECT_EQ(read_json_file(out + "/summary.json").at("options").at("shard"), e.shard);
    }
  }
  for (const char* v : all_vars) unsetenv(v);
}

// --keep-going meets the same bug again and again: one record per distinct minimal case, the
// repeats counted on it.
TEST_F(FuzzCli, KeepGoingKeepsOneRecordPerDistinctFailure) {
  const std::string out = path("dedup");
  const CliRun r = run("fuzz --op roi_align --backend bug-roialign-count0-nan --cases 300 --keep-going "
                       "--shrink-time 5 --no-fork --out " + out);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  std::set<std::string> signatures;
  int64_t occurrences = 0, records = 0;
  for (const json& rec : fuzz::failure_records(out)) {
    ++records;
    occurrences += rec.at("occurrences").get<int64_t>();
    EXPECT_TRUE(signatures.insert(rec.at("property").get<std::string>() + rec.at("case").dump()).second)
        << "two records of one failure: " << rec.at("id");
  }
  const json summary = read_json_file(out + "/summary.json");
  int64_t failing_checks = 0;
  for (const json& rec : summary.at("records")) failing_checks += rec.at("verdicts").value("DISAGREE", int64_t(0));
  EXPECT_EQ(occurrences, failing_checks);
  EXPECT_LT(records, failing_checks) << "the bug should repeat in 300 cases";
  EXPECT_EQ(int64_t(summary.at("failures").size()), records);
}

}  // namespace
}  // namespace oplab
