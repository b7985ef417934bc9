// The fuzz verbs of the CLI: `oplab fuzz`, `oplab replay`, `oplab merge`. Bad input gives one
// line on stderr and a non-zero exit; a campaign's failure replays from its record and its
// case file; shards merge; Ctrl-C leaves a complete report behind.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/case_io.h"
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
  const CliRun r = run("fuzz --op interpolate --backend ref --time 1.5 --progress-every 0.3 --out " + path("p"));
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

}  // namespace
}  // namespace oplab
