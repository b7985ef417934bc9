// One judge (compare/judge.h): `oplab compare`, `oplab replay` and the campaign give one case
// one verdict. Checked on the smallest case of every named ONNX Runtime Resize divergence of
// docs/divergences.md (the cases where `compare` once said DISAGREE and `replay` said
// named-divergence) and on cases a campaign draws.
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_fixture.h"

namespace oplab {
namespace {

class OneJudge : public testing_cli::CliFixture {
 protected:
  // The verdict word `oplab compare` prints for `backend` ("  NAME (...): VERDICT (...)").
  std::string compare_verdict(const std::string& case_path, const std::string& backend) {
    const testing_cli::CliRun r = run("compare " + case_path + " --backend " + backend);
    const std::regex line("  " + backend + " \\([^)]*\\): ([A-Za-z-]+)");
    std::smatch m;
    if (!std::regex_search(r.out, m, line)) return "(no verdict: exit " + std::to_string(r.code) + ": " + r.out + r.err + ")";
    return m[1];
  }
  // The verdict `oplab replay` prints for the differential property.
  std::string replay_verdict(const std::string& case_path, const std::string& backend) {
    const testing_cli::CliRun r = run("replay " + case_path + " --backend " + backend + " --property differential");
    for (const char* v : {"named-divergence", "boundary-flip", "precision-exhausted", "unsupported", "skipped", "DISAGREE",
                          "ERROR", "agree"})
      if (r.out.find(v) != std::string::npos) return v;
    return "(no verdict: exit " + std::to_string(r.code) + ": " + r.out + r.err + ")";
  }
  bool ort_available() {
    const testing_cli::CliRun r = run("backends");
    return std::regex_search(r.out, std::regex("\\nonnxruntime +implementation +yes"));
  }
};

std::string interp_case(const std::string& shape, const std::string& data, const std::string& params) {
  return R"({"op": "interpolate", "inputs": {"input": {"shape": )" + shape + R"(, "data": )" + data +
         R"(}}, "params": )" + params + "}";
}

TEST_F(OneJudge, CompareAndReplayAgreeOnTheSmallestCaseOfEveryOrtResizeDivergence) {
  if (!ort_available()) GTEST_SKIP() << "onnxruntime cannot run here";
  // docs/divergences.md, "onnxruntime": each smallest case as the atlas gives it.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"size1-origin", interp_case("[1, 1, 2, 2]", "[1, 2, 3, 4]", R"({"mode": "bilinear", "size": [1, 1], "align_corners": false})")},
      {"nearest-float-division", interp_case("[1, 1, 4]", "[10, 11, 12, 13]", R"({"mode": "nearest-exact", "size": [122]})")},
      {"cubic-float32-weights",
       interp_case("[1, 1, 1, 7]", "[1, 0, 0, 0, 0, 0, 1]", R"({"mode": "bicubic", "scale_factor": [1.0, 2.1], "align_corners": false})")},
      {"bilinear-float32-coordinates",
       interp_case("[1, 1, 1, 6]", "[0, 1, 0, 1, 0, 1]", R"({"mode": "bilinear", "scale_factor": [1.0, 2.111], "align_corners": false})")},
      {"same-shape-copy", interp_case("[1, 1, 5]", "[0, 1, 2, 3, 4]", R"({"mode": "linear", "scale_factor": 1.1, "align_corners": false})")},
  };
  for (const auto& [name, text] : cases) {
    const std::string f = write(name + ".json", text);
    const std::string c = compare_verdict(f, "onnxruntime"), r = replay_verdict(f, "onnxruntime");
    EXPECT_EQ(c, r) << name;
    EXPECT_NE(c, "DISAGREE") << name;  // each is a named divergence or absorbed by the float32 rule
  }
}

TEST_F(OneJudge, CompareAndReplayAgreeWithTheCampaignOnItsFailures) {
  // A float32-declared kernel with a precision bug (judged by the float32 bound, the path where
  // the verbs once assembled their verdicts apart): every differential failure the campaign
  // records is DISAGREE for `compare` and for `replay` of its record as well.
  const std::string backend = "bug-roialign-f16-accumulate";
  const testing_cli::CliRun f =
      run("fuzz --op roi_align --backend " + backend + " --cases 40 --seed 5 --keep-going --out " + path("fuzz"));
  ASSERT_EQ(f.code, 1) << f.out << f.err;  // named explicitly: its failures count
  int judged = 0;
  for (const auto& e : testing_cli::fs::directory_iterator(path("fuzz") + "/failures")) {
    const std::string p = e.path().string();
    if (p.size() < 10 || p.substr(p.size() - 10) == ".case.json" || e.path().extension() != ".json") continue;
    const nlohmann::json rec = nlohmann::json::parse(testing_cli::slurp(e.path()));
    if (rec.at("property") != "differential") continue;
    const std::string case_file = p.substr(0, p.size() - 5) + ".case.json";
    EXPECT_EQ(compare_verdict(case_file, backend), "DISAGREE") << case_file;
    const testing_cli::CliRun r = run("replay " + p);
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("DISAGREE"), std::string::npos) << r.out;
    ++judged;
  }
  EXPECT_GT(judged, 0) << "the campaign recorded no differential failure to judge again";
}

}  // namespace
}  // namespace oplab
