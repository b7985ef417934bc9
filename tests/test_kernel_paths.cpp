// Kernel paths (Backend::kernel_paths, halide/ops_glue.h): each Halide call names the paths it
// took, as the conditions of the kernels' specialisations and of the glue's choices say (the
// expected lists below are derived by hand from those conditions,
// halide/generators/kernel_widths.h); the answer carries them over the wire; a campaign record
// counts the cases per path and names the paths none reached. The coverage of the default
// campaign itself is test_kernel_paths_campaign.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/backend.h"
#include "fuzz/campaign_records.h"
#include "fuzz/properties.h"
#include "fuzz/wire.h"
#include "tests/halide_backends.h"

namespace oplab {
namespace {

using json = nlohmann::json;
using Paths = std::set<std::string>;

Paths paths_of(Backend& b, const Case& c) {
  const Result r = evaluate(b, c);
  EXPECT_EQ(Paths(r.kernel_paths.begin(), r.kernel_paths.end()).size(), r.kernel_paths.size()) << "a path twice";
  return Paths(r.kernel_paths.begin(), r.kernel_paths.end());
}

Tensor filled(Shape s, double v) { return Tensor(std::move(s), v); }

Case roi_align_case(int64_t C, int64_t W, int64_t K) {
  Case c;
  c.op = "roi_align";
  c.params = {{"output_size", {2, 2}}, {"spatial_scale", 1.0}, {"sampling_ratio", 2}, {"aligned", false}, {"pool_mode", "avg"}};
  c.inputs["input"] = filled({1, C, 3, W}, 0.5);
  Tensor rois({K, 5}, 0.0);
  for (int64_t k = 0; k < K; ++k) rois.at(k, 3) = 4.0, rois.at(k, 4) = 2.0;
  c.inputs["rois"] = rois;
  c.grad_output = filled({K, C, 2, 2}, 1.0);
  return c;
}

Case grid_sample_case(int64_t C, int64_t HW, int64_t grid_hw, const std::string& mode, const std::string& pad) {
  Case c;
  c.op = "grid_sample";
  c.params = {{"mode", mode}, {"padding_mode", pad}, {"align_corners", false}};
  c.inputs["input"] = filled({1, C, HW, HW}, 0.25);
  c.inputs["grid"] = filled({1, grid_hw, grid_hw, 2}, 0.1);
  c.grad_output = filled({1, C, grid_hw, grid_hw}, 1.0);
  return c;
}

Case interpolate_case(const std::string& mode, int64_t in, int64_t out) {
  Case c;
  c.op = "interpolate";
  c.params = {{"mode", mode}, {"size", {out}}};
  if (mode == "linear") c.params["align_corners"] = false;
  c.inputs["input"] = filled({1, 1, in}, 0.5);
  c.grad_output = filled({1, 1, out}, 1.0);
  return c;
}

// A position-sensitive case: 2 x 2 bins, Co output channels (4 Co input channels), K rois
// over the image's top-left corner, [0, 4] x [0, 3].
Case ps_roi_case(const std::string& op, int64_t Co, int64_t W, int64_t K = 4) {
  Case c;
  c.op = op;
  c.params = {{"output_size", {2, 2}}, {"spatial_scale", 1.0}};
  if (op == "ps_roi_align") c.params["sampling_ratio"] = 2;
  c.inputs["input"] = filled({1, 4 * Co, 5, W}, 0.5);
  Tensor rois({K, 5}, 0.0);
  for (int64_t k = 0; k < K; ++k) rois.at(k, 3) = 4.0, rois.at(k, 4) = 3.0;
  c.inputs["rois"] = rois;
  c.grad_output = filled({K, Co, 2, 2}, 1.0);
  return c;
}

class KernelPaths : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelPaths, PsRoiPoolAddsIntoPlanesAndPsRoiAlignTransposesTiles) {
  Backend* b = runnable_backend(GetParam(), "paths");
  if (!b) GTEST_SKIP();
  const bool cpu = GetParam() == "halide-cpu";
  // 9 output channels (two blocks of 8) on an image 17 wide (ps_roi_pool's forward copies 16
  // of its columns): both forwards copy tiles and block the channels; only ps_roi_align's
  // backward accumulates channel blocks and transposes them out in tiles.
  Paths common = {"forward", "backward"};
  if (cpu) common.insert({"image 16 or more pixels wide: copied in 16 x 16 tiles", "more than 8 output channels: several channel blocks"});
  Paths align = common;
  const char* tiles = "backward: gradient transposed in tiles (wide image)";
  if (cpu) align.insert(tiles);
  EXPECT_EQ(paths_of(*b, ps_roi_case("ps_roi_pool", 9, 17)), common);
  // One roi: ps_roi_pool's CPU forward reads its bins in place. The glue's estimate
  // (glue/ps_roi_pool.cpp): bins 2 x 1.5 pixels, (ceil(1.5) + 1) rows of (ceil(3) * 4 / 64 + 1)
  // lines, times 4 bins and 9 channels, times 64 bytes: 8208 bytes, less than the map's
  // 36 * 5 * 17 * 4 = 12240. Four rois read 4 x 8208, more: the blocks above.
  const Paths in_place = cpu ? Paths({"forward: bins read in place (they cover less than the map)", "backward"})
                             : Paths({"forward", "backward"});
  EXPECT_EQ(paths_of(*b, ps_roi_case("ps_roi_pool", 9, 17, 1)), in_place);
  EXPECT_EQ(paths_of(*b, ps_roi_case("ps_roi_align", 9, 17)), align);
  const std::vector<std::string> pool = b->kernel_paths("ps_roi_pool"), al = b->kernel_paths("ps_roi_align");
  EXPECT_EQ(std::count(pool.begin(), pool.end(), tiles), 0);
  EXPECT_EQ(std::count(al.begin(), al.end(), tiles), cpu ? 1 : 0);
  // Fewer output channels than a block (3 of 8) take the tiles too; a narrow image does not.
  Paths few = {"forward", "backward"};
  if (cpu) few.insert({"image 16 or more pixels wide: copied in 16 x 16 tiles", tiles});
  EXPECT_EQ(paths_of(*b, ps_roi_case("ps_roi_align", 3, 17)), few);
  EXPECT_EQ(paths_of(*b, ps_roi_case("ps_roi_align", 3, 15)), (Paths{"forward", "backward"}));
}

TEST_P(KernelPaths, RoiAlignNamesItsTilesAndBlocksOnTheCpuOnly) {
  Backend* b = runnable_backend(GetParam(), "paths");
  if (!b) GTEST_SKIP();
  const bool cpu = GetParam() == "halide-cpu";
  // 17 channels (two blocks of 16) on an image 16 pixels wide: the tiled copy and transpose.
  Paths wide = {"forward avg", "backward avg"};
  if (cpu)
    wide.insert({"image 16 or more pixels wide: copied in 16 x 16 tiles", "more than 16 channels: several channel blocks",
                 "backward: gradient transposed in tiles (wide image, a full channel block)"});
  EXPECT_EQ(paths_of(*b, roi_align_case(17, 16, 1)), wide);
  EXPECT_EQ(paths_of(*b, roi_align_case(3, 5, 1)), (Paths{"forward avg", "backward avg"}));
  EXPECT_EQ(paths_of(*b, roi_align_case(3, 5, 0)), Paths{"nothing to compute: zeros without a kernel call"});
  // Every path named is one the backend lists.
  const std::vector<std::string> listed = b->kernel_paths("roi_align");
  for (const std::string& p : wide) EXPECT_NE(std::find(listed.begin(), listed.end(), p), listed.end()) << p;
  EXPECT_EQ(listed.size(), cpu ? 8u : 5u);
}

TEST_P(KernelPaths, GridSampleNamesItsForwardByGridDensityAndChannels) {
  Backend* b = runnable_backend(GetParam(), "paths");
  if (!b) GTEST_SKIP();
  const bool cpu = GetParam() == "halide-cpu";
  // One position for 81 pixels: under 1/64 per pixel, the plain gathers (forward, grad_grid).
  EXPECT_EQ(paths_of(*b, grid_sample_case(1, 9, 1, "bilinear", "zeros")),
            (cpu ? Paths{"forward 2-D: plain gather (sparse grid)", "backward 2-D",
                         "backward 2-D: grad_grid plain gather (sparse grid)"}
                 : Paths{"forward 2-D", "backward 2-D"}));
  // 17 channels on a dense grid: channels-last, specialised on bicubic and border, two blocks;
  // more than 8 channels in the scatter; grad_grid channels-last.
  const Paths dense = cpu ? Paths{"forward 2-D channels-last: bicubic, border",
                                  "forward 2-D channels-last: more than 16 channels (several blocks)", "backward 2-D",
                                  "backward 2-D: more than 8 channels (several scatter blocks)",
                                  "backward 2-D: grad_grid channels-last"}
                          : Paths{"forward 2-D", "backward 2-D"};
  EXPECT_EQ(paths_of(*b, grid_sample_case(17, 2, 2, "bicubic", "border")), dense);
  // A volume of 9 channels: the 5-D kernels, channels-last (one block of 16) forward, two
  // blocks of 8 in the CPU's scatter; 8 channels fill one; 4 take the narrow blocks of 4 in
  // both; 17 make two forward blocks; nearest is its own specialisation.
  Case volume = grid_sample_case(9, 2, 2, "bilinear", "zeros");
  auto channels = [&](int64_t C) {
    volume.inputs["input"] = filled({1, C, 2, 2, 2}, 0.25);
    volume.grad_output = filled({1, C, 2, 2, 2}, 1.0);
  };
  channels(9);
  volume.inputs["grid"] = filled({1, 2, 2, 2, 3}, 0.1);
  const char* trilinear = "forward 3-D channels-last: bilinear";
  EXPECT_EQ(paths_of(*b, volume), (cpu ? Paths{trilinear, "backward 3-D", "backward 3-D: more than 8 channels (several scatter blocks)"}
                                       : Paths{"forward 3-D", "backward 3-D"}));
  channels(8);
  EXPECT_EQ(paths_of(*b, volume), (Paths{cpu ? trilinear : "forward 3-D", "backward 3-D"}));
  channels(4);
  EXPECT_EQ(paths_of(*b, volume), (cpu ? Paths{trilinear, "forward 3-D channels-last: 4 channels or fewer (blocks of 4)",
                                               "backward 3-D", "backward 3-D: 4 channels or fewer (scatter blocks of 4)"}
                                       : Paths{"forward 3-D", "backward 3-D"}));
  channels(17);
  volume.params["mode"] = "nearest";
  EXPECT_EQ(paths_of(*b, volume), (cpu ? Paths{"forward 3-D channels-last: nearest",
                                               "forward 3-D channels-last: more than 16 channels (several blocks)",
                                               "backward 3-D", "backward 3-D: more than 8 channels (several scatter blocks)"}
                                       : Paths{"forward 3-D", "backward 3-D"}));
  // One position for 3 x 5 x 5 = 75 voxels: under 1/64 per voxel, the plain gather.
  channels(2);
  volume.inputs["input"] = filled({1, 2, 3, 5, 5}, 0.25);
  volume.inputs["grid"] = filled({1, 1, 1, 1, 3}, 0.1);
  volume.grad_output = filled({1, 2, 1, 1, 1}, 1.0);
  EXPECT_EQ(paths_of(*b, volume), (cpu ? Paths{"forward 3-D: plain gather (sparse grid)", "backward 3-D",
                                               "backward 3-D: 4 channels or fewer (scatter blocks of 4)"}
                                       : Paths{"forward 3-D", "backward 3-D"}));
}

TEST_P(KernelPaths, InterpolateNamesItsClosedFormsOnTheCpu) {
  Backend* b = runnable_backend(GetParam(), "paths");
  if (!b) GTEST_SKIP();
  const bool cpu = GetParam() == "halide-cpu";
  // 5 -> 10, align_corners false: scale exactly 1/2, the fixed weights forward; the backward's
  // closed form at its usual reach (input 2 is read by outputs 3..7 at most: 5).
  Paths linear = {"linear 1-D"};
  if (cpu) linear.insert({"forward x: closed-form 2x with fixed weights (linear)", "backward x: closed-form 2x (linear)"});
  EXPECT_EQ(paths_of(*b, interpolate_case("linear", 5, 10)), linear);
  Paths area = {"area 1-D"};
  if (cpu) area.insert({"forward x: pools of 4 (area)", "backward x: pools of 4 (area)"});
  EXPECT_EQ(paths_of(*b, interpolate_case("area", 8, 2)), area);
  EXPECT_EQ(paths_of(*b, interpolate_case("area", 7, 2)), Paths{"area 1-D"});  // no closed form
  // nearest 2-D: 2x on both axes runs the one-pass backward; 2x along x alone, the x form.
  auto nearest2 = [](int64_t h_out) {
    Case c;
    c.op = "interpolate";
    c.params = {{"mode", "nearest"}, {"size", {h_out, 10}}};
    c.inputs["input"] = filled({1, 1, 4, 5}, 0.5);
    c.grad_output = filled({1, 1, h_out, 10}, 1.0);
    return c;
  };
  Paths both = {"nearest 2-D"}, x_only = {"nearest 2-D"};
  if (cpu) {
    both.insert({"forward x: closed-form 2x (nearest)", "backward x and y: closed-form 2x in one pass (nearest 2-D)"});
    x_only.insert({"forward x: closed-form 2x (nearest)", "backward x: closed-form 2x (nearest)"});
  }
  EXPECT_EQ(paths_of(*b, nearest2(8)), both);
  EXPECT_EQ(paths_of(*b, nearest2(12)), x_only);
}

INSTANTIATE_TEST_SUITE_P(Halide, KernelPaths, ::testing::Values("halide-cpu", "halide-opencl"));

// A deform_roi_pool case of C channels on a 4 x 4 map, one roi, 2 x 2 bins.
Case deform_roi_pool_case(int64_t C, bool offset) {
  Case c;
  c.op = "deform_roi_pool";
  c.params = {{"output_size", {2, 2}}, {"spatial_scale", 1.0}, {"sampling_ratio", 1}, {"gamma", 0.1}};
  c.inputs["input"] = filled({1, C, 4, 4}, 0.5);
  Tensor rois({1, 5}, 0.0);
  rois.at(0, 3) = 3.0, rois.at(0, 4) = 3.0;
  c.inputs["rois"] = rois;
  if (offset) c.inputs["offset"] = filled({1, 2, 2, 2}, 0.25);
  return c;
}

// The float16 backends' deform_roi_pool (NHWC, forward only): on the CPU a full vector per 16
// channels from 16 on (the kernel's specialisation C >= 16), one masked vector below.
TEST(KernelPathsFloat16, DeformRoiPoolNamesItsVectorsOnTheCpuOnly) {
  const std::vector<Backend*> backends = runnable_halide_f16_backends("paths");
  if (backends.empty()) GTEST_SKIP();
  for (Backend* b : backends) {
    const bool cpu = b->name() == "halide-cpu-f16";
    Paths full = {"forward with offset, NHWC float16"}, narrow = {"forward without offset, NHWC float16"};
    if (cpu) full.insert("16 channels or more: full vectors"), narrow.insert("fewer than 16 channels: one masked vector");
    EXPECT_EQ(paths_of(*b, deform_roi_pool_case(16, true)), full) << b->name();
    EXPECT_EQ(paths_of(*b, deform_roi_pool_case(15, false)), narrow) << b->name();
    const std::vector<std::string> listed = b->kernel_paths("deform_roi_pool");
    EXPECT_EQ(listed.size(), cpu ? 5u : 3u) << b->name();
    EXPECT_TRUE(b->kernel_paths("roi_align").empty()) << b->name() << ": a float16 kernel of an op it lacks";
  }
}

TEST(KernelPathWire, AnAnswerCarriesItsPaths) {
  Result r;
  r.op = "roi_align", r.backend = "halide-cpu";
  r.outputs["output"] = Tensor({1}, 2.0);
  r.kernel_paths = {"forward avg", "backward avg"};
  EXPECT_EQ(fuzz::wire::decode(fuzz::wire::encode_result(r)).kernel_paths, r.kernel_paths);
}

TEST(KernelPathRecords, CountCasesPerPathAndNameThoseNoneReached) {
  Backend* cpu = builtin_backends().find("halide-cpu");
  ASSERT_NE(cpu, nullptr);
  const fuzz::Property& differential = *fuzz::find_property("differential");
  const fuzz::Property& rejects = *fuzz::find_property("rejects");
  fuzz::CampaignRecords shard1, shard2;
  fuzz::CheckResult c;
  c.kernel_paths = {"forward avg", "backward avg"};
  shard1.at("roi_align", *cpu, differential, "ref").add(c, 0.1);
  shard1.at("roi_align", *cpu, differential, "ref").add(c, 0.1);
  shard1.at("roi_align", *cpu, rejects, "ref").add(c, 0.1);  // counts no paths
  c.kernel_paths = {"forward max", "backward max"};
  shard2.at("roi_align", *cpu, differential, "ref").add(c, 0.1);
  fuzz::CampaignRecords merged;
  merged.merge(shard1.to_json());
  merged.merge(shard2.to_json());
  const json records = merged.to_json();
  ASSERT_EQ(records.size(), 2u);
  const json& d = records[0].at("property") == "differential" ? records[0] : records[1];
  const json& r = records[0].at("property") == "differential" ? records[1] : records[0];
  EXPECT_FALSE(r.contains("kernel_paths"));
  EXPECT_EQ(d.at("kernel_paths").size(), cpu->kernel_paths("roi_align").size());
  EXPECT_EQ(d["kernel_paths"]["forward avg"], 2);
  EXPECT_EQ(d["kernel_paths"]["backward max"], 1);
  EXPECT_EQ(d["kernel_paths"]["nothing to compute: zeros without a kernel call"], 0);
  const std::vector<std::string> unreached = fuzz::unreached_kernel_paths(records);
  EXPECT_EQ(unreached.size(), cpu->kernel_paths("roi_align").size() - 4);
  EXPECT_NE(std::find(unreached.begin(), unreached.end(),
                      "halide-cpu roi_align: nothing to compute: zeros without a kernel call"),
            unreached.end());
}

}  // namespace
}  // namespace oplab
