// The exit-code contract of every verb (README "The CLI", cli/commands.h): 0 clean, 1 findings,
// 2 usage or invalid input (one line on stderr; an unknown name lists the valid ones and
// suggests the closest), 3 unsupported, 4 cannot run here, 5 not a case or record, 70 internal
// error (one line, never an abort), 130 interrupted. Every name is checked before any work.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/cli_fixture.h"

namespace oplab {
namespace {

namespace fs = std::filesystem;

using testing_cli::CliRun;

class ExitCodes : public testing_cli::CliFixture {
 protected:
  ExitCodes() : CliFixture("") {}

  std::string a_case() {
    return write("case.json", R"({"op": "roi_align",
      "params": {"output_size": [1, 1], "spatial_scale": 1.0, "sampling_ratio": 1, "aligned": false},
      "inputs": {"input": {"shape": [1, 1, 2, 2], "data": [1, 2, 3, 4]},
                 "rois":  {"shape": [1, 5], "data": [0, 0, 0, 1, 1]}},
      "grad_output": {"shape": [1, 1, 1, 1], "data": [1]}})");
  }
};

size_t lines(const std::string& s) { return size_t(std::count(s.begin(), s.end(), '\n')); }
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// An unknown name is exit 2 and exactly one line on stderr that names the valid names
// (`listed`) and, for a near miss, suggests the closest (`suggested`, or "" for none).
struct UnknownName {
  std::string args, starts, suggested;
  std::vector<std::string> listed;
};

TEST_F(ExitCodes, UnknownNamesAreOneLineListingTheValidOnes) {
  const std::string c = a_case();
  const std::vector<UnknownName> cases = {
      {"eval " + c + " --backend nosuch", "eval: unknown backend \"nosuch\"", "", {"ref", "torchvision", "halide-cpu"}},
      {"eval " + c + " --backend halide-cpi", "eval: unknown backend \"halide-cpi\"", "halide-cpu", {"ref", "halide-opencl"}},
      {"gradcheck --op roi_allign", "gradcheck: unknown op \"roi_allign\"", "roi_align", {"deform_conv2d", "ps_roi_pool", "all"}},
      {"gradcheck --backend torchvison", "gradcheck: unknown backend \"torchvison\"", "torchvision", {"ref", "halide-cpu", "all"}},
      {"replay " + c + " --backend reff", "replay: unknown backend \"reff\"", "ref", {"ref", "torchvision"}},
      {"replay " + c + " --backend ref --against nosuch", "replay: unknown oracle (--against) \"nosuch\"", "", {"ref", "torchvision"}},
      {"replay " + c + " --backend ref --property linerity", "replay: unknown property \"linerity\"", "linearity",
       {"differential", "adjoint", "permutation"}},
      {"bench --reduced --shape nearst --out " + path("bench.json"), "bench: unknown shape \"nearst\"", "nearest",
       {"\"roi_align sr2\"", "\"nearest x2\""}},
  };
  for (const auto& u : cases) {
    const CliRun r = run(u.args);
    EXPECT_EQ(r.code, 2) << u.args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1u) << u.args << ": " << r.err;
    EXPECT_EQ(r.err.rfind(u.starts, 0), 0u) << u.args << ": " << r.err;
    EXPECT_TRUE(has(r.err, "valid: ")) << u.args << ": " << r.err;
    for (const auto& name : u.listed) EXPECT_TRUE(has(r.err, name)) << u.args << ": " << name << " not in " << r.err;
    if (u.suggested.empty())
      EXPECT_FALSE(has(r.err, "did you mean")) << u.args << ": " << r.err;
    else
      EXPECT_TRUE(has(r.err, "(did you mean \"" + u.suggested + "\"?)")) << u.args << ": " << r.err;
  }
}

// `fuzz` and `campaign` check their names in the engine (fuzz/campaign.cpp): the same exit and
// one line.
TEST_F(ExitCodes, FuzzAndCampaignUnknownNamesAreUsageErrors) {
  for (const std::string& args : {std::string("fuzz --backend nosuch --cases 1 --out ") + path("f1"),
                                  std::string("fuzz --backend ref --op nosuch --cases 1 --out ") + path("f2"),
                                  std::string("campaign --backend nosuch --cases 1 --out ") + path("c1"),
                                  std::string("campaign --op roi_allign --cases 1 --out ") + path("c2")}) {
    const CliRun r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out << r.err;
    EXPECT_EQ(lines(r.err), 1u) << args << ": " << r.err;
  }
}

// A word where the verb belongs that is none — also after `help` — is named with the closest
// verb, one line, exit 2 (not CLI11's "A subcommand is required", not the main help with exit 0).
TEST_F(ExitCodes, AnUnknownVerbIsNamedWithTheClosestOne) {
  const CliRun typo = run("fuz --cases 1");
  EXPECT_EQ(typo.code, 2) << typo.err;
  EXPECT_EQ(lines(typo.err), 1u) << typo.err;
  EXPECT_EQ(typo.err.rfind("oplab: unknown verb \"fuz\" (did you mean \"fuzz\"?); valid: ", 0), 0u) << typo.err;
  EXPECT_TRUE(has(typo.err, "campaign") && has(typo.err, "replay")) << typo.err;
  const CliRun help = run("help nosuch");
  EXPECT_EQ(help.code, 2) << help.out << help.err;
  EXPECT_EQ(lines(help.err), 1u) << help.err;
  EXPECT_EQ(help.err.rfind("oplab help: unknown verb \"nosuch\"", 0), 0u) << help.err;
  EXPECT_EQ(help.out, "");
}

TEST_F(ExitCodes, NoVerbPrintsHelpAndIsAUsageError) {
  const CliRun r = run("");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.out + r.err, "Usage: oplab")) << r.out << r.err;
  EXPECT_TRUE(has(r.out + r.err, "Exit codes")) << r.out << r.err;
}

TEST_F(ExitCodes, HelpIsNotAnError) {
  for (const char* args : {"--help", "help", "help eval", "eval --help"}) {
    const CliRun r = run(args);
    EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
    EXPECT_TRUE(has(r.out, "Usage: oplab")) << args << ": " << r.out;
  }
  // The contract is at the foot of the help.
  const CliRun r = run("--help");
  for (const char* code : {"0 clean", "1 findings", "2 usage", "3 unsupported", "4 the backend cannot run here",
                           "5 not a case", "70 internal error", "130 interrupted"})
    EXPECT_TRUE(has(r.out, code)) << code << " not in the help:\n" << r.out;
}

TEST_F(ExitCodes, VersionPrintsTheVersions) {
  const CliRun r = run("--version");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("oplab ", 0), 0u) << r.out;
  EXPECT_TRUE(has(r.out, "\nHalide 14.")) << r.out;
  EXPECT_TRUE(has(r.out, "torchvision")) << r.out;
}

TEST_F(ExitCodes, CommandLineErrorsAreOneLineExitTwo) {
  const std::string c = a_case();
  for (const std::string& args : std::vector<std::string>{"eval " + c,  // --backend missing
                                                          "eval " + c + " --backend ref --bogus", "nosuchverb",
                                                          "bench --threads abc", "bench --repeats 0", "backends extra"}) {
    const CliRun r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1u) << args << ": " << r.err;
  }
}

TEST_F(ExitCodes, BenchUnknownShapeWritesNothing) {
  const std::string out = path("bench.json");
  const CliRun r = run("bench --reduced --shape nosuch --out " + out);
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_TRUE(has(r.err, "\"roi_align sr2\"")) << r.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(r.out, "");  // nothing timed
}

// `bench --device cuda` where halide-cuda cannot run: exit 4 (the backend cannot run here) with
// the reason, before anything is timed or written; on a GPU machine it times (scripts/gpu.sh).
// A device that is not cpu, cuda or all is a usage error.
TEST_F(ExitCodes, BenchOnADeviceThatIsNotHereSaysWhy) {
  const std::string out = path("bench.json");
  const std::string listed = run("backends").out;
  const size_t row = listed.find("\nhalide-cuda ");
  ASSERT_NE(row, std::string::npos) << listed;
  if (listed.substr(row, listed.find('\n', row + 1) - row).find(" yes ") != std::string::npos)
    GTEST_SKIP() << "halide-cuda runs here";
  const CliRun r = run("bench --reduced --device cuda --out " + out);
  EXPECT_EQ(r.code, 4) << r.out << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_TRUE(has(r.err, "halide-cuda cannot run here")) << r.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(r.out, "");
  const CliRun bad = run("bench --device tpu --out " + out);
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_EQ(lines(bad.err), 1u) << bad.err;
}

TEST_F(ExitCodes, ReplayOfABareCaseNeedsABackend) {
  const CliRun r = run("replay " + a_case());
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_TRUE(has(r.err, "--backend")) << r.err;
  EXPECT_FALSE(has(r.out, "passes")) << r.out;
}

// A case file beside its failure record (DIR/failures/ID.case.json, DIR/failures/ID.json) is
// replayed on the record's backend, property and oracle, and says so: here a seeded bug that
// still fails (on ref it would pass).
TEST_F(ExitCodes, ReplayOfACaseBesideItsRecordUsesTheRecordsBackend) {
  const std::string the_case = R"({"op": "roi_align",
    "params": {"aligned": true, "output_size": [1, 1], "pool_mode": "avg", "sampling_ratio": -1, "spatial_scale": 1.0},
    "inputs": {"input": {"shape": [1, 1, 1, 1], "data": [0.0]},
               "rois": {"shape": [1, 5], "data": [0.0, 0.0, -2.0, 0.0, -2.0]}},
    "grad_output": {"shape": [1, 1, 1, 1], "data": [0.0]}})";
  fs::create_directories(dir_ / "c" / "failures");
  const std::string id = "c/failures/roi_align-bug-roialign-count0-nan-differential-s1-i16";
  write(id + ".case.json", the_case);
  write(id + ".json", R"({"kind": "oplab-fuzz-failure", "version": 1, "id": "roi_align-bug-roialign-count0-nan-differential-s1-i16",
    "op": "roi_align", "backend": "bug-roialign-count0-nan", "against": "ref", "property": "differential",
    "detail": "outputs.output[0]: -nan vs ref 0", "case": )" + the_case + "}");
  const CliRun r = run("replay " + path(id + ".case.json"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "replaying on bug-roialign-count0-nan, property differential")) << r.out;
  EXPECT_TRUE(has(r.out, "differential on bug-roialign-count0-nan: DISAGREE")) << r.out;
  EXPECT_TRUE(has(r.out, "still fails")) << r.out;
  // --backend still overrides it.
  const CliRun on_ref = run("replay " + path(id + ".case.json") + " --backend ref --property linearity");
  EXPECT_EQ(on_ref.code, 0) << on_ref.out << on_ref.err;
}

TEST_F(ExitCodes, ReportFromAMissingFolder) {
  const CliRun r = run("report --from " + path("nosuch") + " --out " + path("rep"));
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_FALSE(fs::exists(path("rep")));
  const CliRun file = run("report --from " + a_case() + " --out " + path("rep"));
  EXPECT_EQ(file.code, 2) << file.out << file.err;
}

TEST_F(ExitCodes, AnEscapingExceptionIsOneLineExitSeventy) {
  for (const char* where : {"main", "thread"}) {
    const std::string cmd = std::string("OPLAB_TEST_INTERNAL_ERROR=") + where + " " + OPLAB_CLI + " backends >" +
                            path("o") + " 2>" + path("e") + " </dev/null";
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << where << ": ended by a signal";
    EXPECT_EQ(WEXITSTATUS(status), 70) << where;
    const std::string err = testing_cli::slurp(path("e"));
    EXPECT_EQ(lines(err), 1u) << where << ": " << err;
    EXPECT_EQ(err.rfind("oplab: internal error: ", 0), 0u) << where << ": " << err;
  }
}

TEST_F(ExitCodes, IntegerOptionsAreTypedInTheHelp) {
  const CliRun grad = run("gradcheck --help");
  EXPECT_TRUE(has(grad.out, "--cases INT")) << grad.out;
  EXPECT_TRUE(has(grad.out, "--seed INT")) << grad.out;
  const CliRun replay = run("replay --help");
  EXPECT_TRUE(has(replay.out, "--timeout SECONDS")) << replay.out;
  const CliRun bench = run("bench --help");
  EXPECT_TRUE(has(bench.out, "--threads INT")) << bench.out;
  EXPECT_FALSE(has(bench.out, "{false}")) << bench.out;
  for (const char* verb : {"fuzz", "campaign"}) {
    const CliRun h = run(std::string(verb) + " --help");
    EXPECT_TRUE(has(h.out, "--cases INT")) << h.out;
    EXPECT_TRUE(has(h.out, "--seed INT")) << h.out;
    EXPECT_TRUE(has(h.out, "--shard K/N|auto")) << h.out;
    EXPECT_TRUE(has(h.out, "--shrink-time SECONDS")) << h.out;
  }
}

// Under "all", the seeded bugs' and study variants' failures are expected: one line per such
// backend at the end, not a line per failing case before the line about implementations.
TEST_F(ExitCodes, ExpectedDeparturesAreOneLinePerBackend) {
  const CliRun r = run("fuzz --op roi_align --backend all --property differential --cases 40 --keep-going --no-fork "
                       "--shrink-time 0 --out " + path("quiet"));
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_FALSE(has(r.out, "DISAGREE differential roi_align on bug-")) << r.out;
  EXPECT_TRUE(has(r.out, "seeded bug caught: bug-")) << r.out;
  const CliRun named = run("fuzz --op roi_align --backend bug-roialign-aligned-clamp-bwd --property differential "
                           "--cases 40 --keep-going --no-fork --shrink-time 0 --out " + path("loud"));
  EXPECT_EQ(named.code, 1);
  EXPECT_TRUE(has(named.out, "DISAGREE differential roi_align on bug-roialign-aligned-clamp-bwd")) << named.out;
}

}  // namespace
}  // namespace oplab
