// The CLI contract of SPEC §1: `oplab eval` and `oplab backends`, exit codes, one-line
// errors on stderr, and no result file when the case is refused.
#include <gtest/gtest.h>

#include <map>

#include <algorithm>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include "core/case_io.h"
#include "tests/cli_fixture.h"

namespace oplab {
namespace {

namespace fs = std::filesystem;

using testing_cli::CliRun;
using testing_cli::slurp;

class Cli : public testing_cli::CliFixture {
 protected:
  Cli() : CliFixture("") {}
};

const char* kRoiAlignCase = R"({"op": "roi_align",
  "params": {"output_size": [1, 1], "spatial_scale": 1.0, "sampling_ratio": 1, "aligned": false},
  "inputs": {"input": {"shape": [1, 1, 2, 2], "data": [1, 2, 3, 4]},
             "rois":  {"shape": [1, 5], "data": [0, 0, 0, 1, 1]}},
  "grad_output": {"shape": [1, 1, 1, 1], "data": [1]}})";

TEST_F(Cli, BackendsListsRefAndPeer) {
  const CliRun r = run("backends");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("ref"), std::string::npos);
  EXPECT_NE(r.out.find("torchvision"), std::string::npos);
}

TEST_F(Cli, EvalWritesTheResult) {
  // Box [0,1]x[0,1], not aligned, one sample at the bin centre (0.5, 0.5): the mean of the
  // four pixels, (1+2+3+4)/4 = 2.5; each pixel gets gradient 1/4.
  const std::string c = write("case.json", kRoiAlignCase);
  for (const char* backend : {"ref", "torchvision"}) {
    const std::string out = (dir_ / (std::string(backend) + ".json")).string();
    const CliRun r = run("eval " + c + " --backend " + backend + " --out " + out);
    ASSERT_EQ(r.code, 0) << r.err;
    const Result res = result_from_json(read_json_file(out));
    EXPECT_EQ(res.backend, backend);
    EXPECT_DOUBLE_EQ(res.outputs.at("output").data.at(0), 2.5);
    EXPECT_EQ(res.grads.at("input").data, (std::vector<double>{0.25, 0.25, 0.25, 0.25}));
    EXPECT_EQ(res.grads.count("rois"), 0u);
  }
}

TEST_F(Cli, EvalToStdout) {
  const CliRun r = run("eval " + write("case.json", kRoiAlignCase) + " --backend ref");
  ASSERT_EQ(r.code, 0);
  EXPECT_EQ(result_from_json(json::parse(r.out)).outputs.at("output").data.at(0), 2.5);
}

TEST_F(Cli, InvalidCaseOneLineNoFile) {
  json j = json::parse(kRoiAlignCase);
  j["inputs"]["rois"]["data"][0] = 2;
  const std::string c = write("bad.json", j.dump());
  const fs::path out = dir_ / "never.json";
  for (const char* backend : {"ref", "torchvision"}) {
    const CliRun r = run("eval " + c + " --backend " + backend + " --out " + out.string());
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "roi_align: rois[0][0]=2 is not a batch index of input with N=1\n");
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(out.string() + ".tmp"));
  }
}

TEST_F(Cli, MalformedFile) {
  const CliRun r = run("eval " + write("broken.json", "{\"op\": ") + " --backend ref");
  EXPECT_EQ(r.code, 5);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos);
}

TEST_F(Cli, UnknownBackend) {
  const CliRun r = run("eval " + write("case.json", kRoiAlignCase) + " --backend nosuch");
  EXPECT_EQ(r.code, 2);  // a usage error (README "The CLI"): names checked before any work
  EXPECT_EQ(r.err.rfind("eval: unknown backend \"nosuch\"; valid: ref, torchvision, torchvision-f32, torchvision-f16, "
                         "torchvision-bf16, torchvision-uint8, halide-cpu", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(Cli, PeerSaysUnsupportedForOpsItLacks) {
  json j = json::parse(kRoiAlignCase);
  j["params"]["pool_mode"] = "max";
  const CliRun r = run("eval " + write("max.json", j.dump()) + " --backend torchvision");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_EQ(r.err.rfind("torchvision: ", 0), 0u) << r.err;
}

// Backend roles: under "every backend", a seeded bug that fails was caught (reported, exit 0);
// named on the command line, its failures are what the user asked about (exit 1).
TEST_F(Cli, SeededBugFailuresCountOnlyWhenNamed) {
  const CliRun all = run("campaign --cases 20 --op roi_align --out " + path("all"));
  EXPECT_EQ(all.code, 0) << all.out << all.err;
  EXPECT_NE(all.out.find("0 of implementations"), std::string::npos) << all.out;
  // The words of the README's verdicts: a finding is an implementation's failure; seeded bugs'
  // failures are expected, and the flip-budget count says what it counts.
  EXPECT_NE(all.out.find("findings: 0 of implementations; expected: "), std::string::npos) << all.out;
  EXPECT_NE(all.out.find(" records over their flip budget in "), std::string::npos) << all.out;
  const json summary = read_json_file(path("all") + "/summary.json");
  EXPECT_EQ(summary.at("status"), "finished");
  const json& roles = summary.at("options").at("backend_roles");
  int seeded = 0;
  for (const auto& f : summary.at("failures")) {
    const std::string role = roles.at(f.at("backend").get<std::string>());
    EXPECT_NE(role, "implementation") << f.dump();
    seeded += role == "seeded-bug";
  }
  EXPECT_GT(seeded, 0);
  // One record per op x backend of each of the campaign's properties (differential and
  // determinism), with the campaign's table columns: verdict counts that add up to the cases,
  // and cases/s.
  int records = 0;
  std::map<std::string, int> per_property;
  for (const auto& r : summary.at("records")) {
    ++records;
    ++per_property[r.at("property").get<std::string>()];
    EXPECT_TRUE(r.at("property") == "differential" || r.at("property") == "determinism") << r.dump();
    EXPECT_NE(r.at("backend"), "ref") << "the oracle is not its own subject";
    int64_t total = 0;
    for (const auto& [name, n] : r.at("verdicts").items()) total += n.get<int64_t>();
    EXPECT_EQ(total, r.at("cases").get<int64_t>()) << r.dump();
    // A case whose differential check failed is not asked again (the failure is recorded).
    if (r.at("property") == "differential") EXPECT_EQ(r.at("cases").get<int64_t>(), 20) << r.dump();
    else EXPECT_LE(r.at("cases").get<int64_t>(), 20) << r.dump();
    EXPECT_GT(r.at("cases_per_second").get<double>(), 0) << r.dump();
  }
  EXPECT_GT(records, 3);
  EXPECT_EQ(per_property["differential"], per_property["determinism"]) << "each backend held to both";

  const CliRun named = run("campaign --cases 20 --op roi_align --backend bug-roialign-aligned-clamp-bwd --out " + path("named"));
  EXPECT_EQ(named.code, 1) << named.out << named.err;
}

// `compare`: one case on several backends, a verdict line each and the metrics of every tensor.
TEST_F(Cli, CompareJudgesEachBackendAgainstRef) {
  const std::string c = write("case.json", kRoiAlignCase);
  const CliRun ok = run("compare " + c + " --backend torchvision --backend halide-cpu");
  EXPECT_EQ(ok.code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("torchvision (double, 1e-10): agree"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("halide-cpu (float32, per-element bound): agree"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("outputs.output"), std::string::npos) << ok.out;
  // A roi_pool rounding half to even disagrees where a corner sits at x.5 (here 0.5 * 3 = 1.5).
  json j = json::parse(kRoiAlignCase);
  j["op"] = "roi_pool";
  j["params"] = {{"output_size", {1, 1}}, {"spatial_scale", 0.5}};
  j["inputs"]["rois"] = {{"shape", {1, 5}}, {"data", {0, 1, 1, 5, 5}}};
  j["inputs"]["input"] = {{"shape", {1, 1, 4, 4}}, {"data", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}};
  j.erase("grad_output");
  const CliRun bad = run("compare " + write("pool.json", j.dump()) + " --backend bug-roipool-half-even");
  EXPECT_EQ(bad.code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("DISAGREE"), std::string::npos) << bad.out;
  const CliRun unknown = run("compare " + c + " --backend halide-cpo");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("did you mean \"halide-cpu\""), std::string::npos) << unknown.err;
}

}  // namespace
}  // namespace oplab
