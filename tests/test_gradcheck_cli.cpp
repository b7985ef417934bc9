// `oplab gradcheck`: the records file, the exit codes, one-line errors on bad arguments.
#include <gtest/gtest.h>

#include <unistd.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/case_io.h"
#include "tests/cli_fixture.h"

namespace oplab {
namespace {

namespace fs = std::filesystem;

using testing_cli::CliRun;
using testing_cli::slurp;

class GradCli : public testing_cli::CliFixture {
 protected:
  GradCli() : CliFixture("gradcheck ") {}
};

TEST_F(GradCli, WritesOneRecordPerCheck) {
  const std::string out = (dir_ / "g.json").string();
  const CliRun r = run("--op roi_align --backend ref --cases 4 --seed 3 --out " + out);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("fd-projection"), std::string::npos);
  const json j = read_json_file(out);
  EXPECT_EQ(j.at("failures"), 0);
  EXPECT_EQ(j.at("seed"), 3);
  ASSERT_FALSE(j.at("records").empty());
  for (const auto& rec : j.at("records"))
    for (const char* key : {"op", "backend", "input", "method", "verdict", "error", "moved", "skipped", "shrunk"})
      EXPECT_TRUE(rec.contains(key)) << key;
  EXPECT_FALSE(j.at("summary").empty());
}

TEST_F(GradCli, FailsOnAWrongBackward) {
  const std::string out = (dir_ / "bad.json").string();
  const CliRun r = run("--op deform_roi_pool --backend drp-mmcv-grad --cases 30 --out " + out);
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_GT(read_json_file(out).at("failures").get<int>(), 0);
}

TEST_F(GradCli, BadArgumentsOneLine) {
  struct Bad {
    std::string args, message;
    int code;
  };
  for (const Bad& b : std::vector<Bad>{
           {"--op conv3d", "gradcheck: unknown op \"conv3d\"", 2},
           {"--cases 0", "gradcheck: --cases=\"0\" must be a whole number from 1 to 100000", 2},
           {"--cases ten", "gradcheck: --cases=\"ten\" must be a whole number from 1 to 100000", 2},
           {"--seed -1", "gradcheck: --seed=\"-1\" must be a non-negative whole number", 2},
           {"--backend nosuch", "gradcheck: unknown backend \"nosuch\"; valid: ref, torchvision", 2},
       }) {
    const fs::path out = dir_ / "never.json";
    const CliRun r = run(b.args + " --out " + out.string());
    EXPECT_EQ(r.code, b.code) << b.args;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << b.args << ": " << r.err;
    EXPECT_EQ(r.err.rfind(b.message, 0), 0u) << b.args << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << b.args;
  }
}

}  // namespace
}  // namespace oplab
