// The example plugin of examples/c-plugin/ through the C ABI: the float32 roi_align passes a
// fuzz campaign against the reference, and its copy with a seeded edge-case bug (reversed
// aligned boxes clamped to empty) is caught within 60 seconds and shrunk to a small case.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "compare/judge.h"
#include "core/case_io.h"
#include "external/plugin_backend.h"
#include "fuzz/campaign.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

namespace fs = std::filesystem;

fuzz::CampaignResult fuzz_plugin(const std::string& path, const std::string& name, int64_t cases, std::string& log) {
  Registry reg;
  reg.add(make_ref_backend());
  reg.add(load_plugin_backend(path));
  const fs::path out = fs::temp_directory_path() / ("oplab_plugin_example_" + std::to_string(::getpid()) + name);
  fuzz::CampaignOptions o;  // `oplab fuzz --op roi_align --plugin PATH --backend NAME --cases N`
  o.ops = {"roi_align"};
  o.backends = {name};
  o.cases = cases;
  o.time_s = 60;
  o.out = out.string();
  std::ostringstream progress;
  fuzz::CampaignResult r = fuzz::run_campaign(o, reg, progress);
  log = progress.str();
  fs::remove_all(out);
  return r;
}

// Hand derivation: input [[1, 2], [3, 4]], the box (0, 0)-(1, 1) at scale 1, not aligned,
// one bin with one sample at its centre (0.5, 0.5): the mean of the four pixels, 2.5. Its
// gradient: grad_output 1 spread as 0.25 onto each pixel.
TEST(PluginExample, HandCase) {
  auto b = load_plugin_backend(OPLAB_EXAMPLE_PLUGIN);
  EXPECT_EQ(b->name(), "c-roi-align");
  EXPECT_EQ(b->dtype("roi_align"), DType::Float32);
  Case c;
  c.op = "roi_align";
  c.params = {{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", 1}, {"aligned", false}};
  Tensor x({1, 1, 2, 2});
  x.data = {1, 2, 3, 4};
  Tensor rois({1, 5});
  rois.data = {0, 0, 0, 1, 1};
  c.inputs = {{"input", x}, {"rois", rois}};
  c.grad_output = Tensor({1, 1, 1, 1}, 1.0);
  const Result r = evaluate(*b, c);
  EXPECT_EQ(r.outputs.at("output").data, std::vector<double>{2.5});
  EXPECT_EQ(r.grads.at("input").data, (std::vector<double>{0.25, 0.25, 0.25, 0.25}));
}

// The case the 120 s fuzz of the example failed on (max mode, 3 x 3 samples per bin, a 5 x 13
// map mostly of 0.25 with 0.625 at (3, 12) and 0.75 at (4, 12)). Box 1's bin 1 has a sample at
// y = 2.25 + 1.1666666 + 1.5 * 1.1666666 / 3: 4.0 in double, 3.9999998 in float32, where the
// plugin computes it; that sample and the one at y = 4.39 (clamped to row 4) both read 0.75 up
// to that rounding, a tie. The plugin's winner gives row 3 the weight 2^-22 (grad 6e-8), which
// no choice of winner gives it with the double samples (y = 4.0 weighs row 3 by 0): only the
// tie range of the samples placed in float32 holds it, a max-winner-tie flip.
TEST(PluginExample, AMaxTieBetweenFloat32SamplesIsAFlip) {
  auto b = load_plugin_backend(OPLAB_EXAMPLE_PLUGIN);
  auto ref = make_ref_backend();
  const Case c = case_from_json(json::parse(R"({"grad_output":{"data":[0.25,0.25,0.25,0.0,0.25,0.0],"shape":[2,1,3,1]},"inputs":{"input":{"data":[0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.0,0.25,0.25,0.25,0.25,0.2500019073486328,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.625,0.0,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.25,0.75],"shape":[1,1,5,13]},"rois":{"data":[0.0,0.0,5.0,0.0,5.0,0.0,12.0,2.25,12.0,5.75],"shape":[2,5]}},"op":"roi_align","params":{"aligned":false,"output_size":[3,1],"pool_mode":"max","sampling_ratio":3,"spatial_scale":1.0}})"));
  const compare::Judgement j = compare::judge(*b, *ref, c);
  EXPECT_EQ(j.verdict, compare::Verdict::BoundaryFlip) << j.detail;
  EXPECT_NE(j.detail.find("max winner tie"), std::string::npos) << j.detail;
}

TEST(PluginExample, CorrectKernelPasses) {
  std::string log;
  const fuzz::CampaignResult r = fuzz_plugin(OPLAB_EXAMPLE_PLUGIN, "c-roi-align", 1000, log);
  std::cout << "[plugin] c-roi-align: " << r.cases << " cases, " << r.checks << " checks in " << r.seconds << " s\n";
  EXPECT_GE(r.cases, 1000) << log;
  EXPECT_TRUE(r.failures.empty()) << (r.failures.empty() ? "" : r.failures[0].detail) << "\n" << log;
}

TEST(PluginExample, SeededBugIsCaughtAndShrunk) {
  std::string log;
  const fuzz::CampaignResult r = fuzz_plugin(OPLAB_EXAMPLE_PLUGIN_BUG, "c-roi-align-clampbug", 100000, log);
  ASSERT_EQ(r.failures.size(), 1u) << "not caught in " << r.seconds << " s\n" << log;
  const fuzz::FailureSummary& f = r.failures[0];
  std::cout << "[plugin] c-roi-align-clampbug: caught by " << f.property << " after " << f.found_after_s << " s ("
            << f.found_after_cases << " cases), shrunk in " << f.shrink_s << " s\n"
            << "[plugin]   minimal case: " << f.minimal_case.dump() << "\n";
  EXPECT_LT(f.found_after_s, 60.0);
  EXPECT_TRUE(f.shrunk);
  // The bug needs one reversed aligned box and a fixed grid: one box, a tiny image.
  const json& inputs = f.minimal_case.at("inputs");
  EXPECT_EQ(inputs["rois"]["shape"][0], 1) << f.minimal_case.dump();
  EXPECT_LE(inputs["input"]["data"].size(), 4u) << f.minimal_case.dump();
  EXPECT_EQ(f.minimal_case["params"]["aligned"], true) << f.minimal_case.dump();
  const json& box = inputs["rois"]["data"];
  const bool reversed = box[3].get<double>() < box[1].get<double>() || box[4].get<double>() < box[2].get<double>();
  EXPECT_TRUE(reversed) << f.minimal_case.dump();
}

}  // namespace
}  // namespace oplab
