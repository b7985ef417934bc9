// The C ABI route (include/oplab/plugin.h) on plugins wrong on purpose (tests/plugins/): every
// one is refused at load time or fails its case with one line naming what is wrong, and a
// plugin that crashes fails only the case that crashed it. Also the dtype conversions, checked
// against values derived by hand from the formats' definitions.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/case_io.h"
#include "external/dtype_convert.h"
#include "external/plugin_backend.h"
#include "fuzz/campaign.h"
#include "fuzz/isolate.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

namespace fs = std::filesystem;

std::string plugin(const std::string& bad) {
  return std::string(OPLAB_TEST_PLUGIN_DIR) + "/oplab_test_plugin_" + bad + ".so";
}

// The load error's one line, or "" when the plugin loaded.
std::string load_error(const std::string& path) {
  try {
    load_plugin_backend(path);
    return "";
  } catch (const BackendUnavailable& e) {
    return e.what();
  }
}

// A valid roi_align case: batch `n` of 1x4x4, one box.
Case roi_case(int64_t n = 1) {
  Case c;
  c.op = "roi_align";
  c.params = {{"output_size", {2, 2}}, {"spatial_scale", 1.0}, {"sampling_ratio", 2}, {"aligned", false}};
  c.inputs["input"] = Tensor({n, 1, 4, 4}, 0.5);
  Tensor rois({1, 5});
  rois.data = {0, 0, 0, 3, 3};
  c.inputs["rois"] = rois;
  return c;
}

TEST(PluginLoad, AWellFormedPluginDeclaresItsOps) {
  auto b = load_plugin_backend(plugin("ok"));
  EXPECT_EQ(b->name(), "bad");
  EXPECT_EQ(b->dtype("roi_align"), DType::Float64);
  EXPECT_FALSE(b->computes_grads("roi_align"));
  EXPECT_NE(b->description().find(plugin("ok")), std::string::npos);
  const Result r = evaluate(*b, roi_case());
  ASSERT_EQ(r.outputs.at("output").shape, (Shape{1, 1, 2, 2}));
  for (double v : r.outputs.at("output").data) EXPECT_EQ(v, 1.0);
  // No backward declared: a case with grad_output is unsupported, an op not declared likewise.
  Case with_grad = roi_case();
  with_grad.grad_output = Tensor({1, 1, 2, 2}, 1.0);
  EXPECT_TRUE(b->unsupported_reason(with_grad).has_value());
  Case other = roi_case();
  other.op = "roi_pool";
  other.params.erase("sampling_ratio");
  other.params.erase("aligned");
  EXPECT_THROW(evaluate(*b, other), Unsupported);
}

TEST(PluginLoad, MissingSymbolIsNamed) {
  const std::string e = load_error(plugin("no_symbol"));
  EXPECT_NE(e.find(plugin("no_symbol")), std::string::npos) << e;
  EXPECT_NE(e.find("exports no symbol oplab_plugin_v1_entry"), std::string::npos) << e;
}

TEST(PluginLoad, AnotherAbiVersionIsRefused) {
  const std::string e = load_error(plugin("abi_version"));
  EXPECT_NE(e.find("declares ABI version 2, this oplab reads version 1"), std::string::npos) << e;
}

TEST(PluginLoad, UnknownDtypeIsRefused) {
  const std::string e = load_error(plugin("unknown_dtype"));
  EXPECT_NE(e.find("op roi_align declares unknown dtype 17"), std::string::npos) << e;
}

TEST(PluginLoad, NotASharedLibraryOrNoFile) {
  const fs::path text = fs::temp_directory_path() / ("oplab_not_a_plugin_" + std::to_string(::getpid()) + ".so");
  std::ofstream(text) << "this is text, not ELF\n";
  std::string e = load_error(text.string());
  fs::remove(text);
  EXPECT_NE(e.find("plugin " + text.string() + ": cannot load it as a shared library"), std::string::npos) << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  e = load_error("/nonexistent/plugin.so");
  EXPECT_NE(e.find("plugin /nonexistent/plugin.so: cannot load"), std::string::npos) << e;
}

// The CLI: a plugin it cannot use is a bad command line (exit 2) with one line on stderr,
// before any work; a good one is listed with its dtype.
TEST(PluginLoad, TheCliRefusesABadPluginWithExit2) {
  const fs::path err = fs::temp_directory_path() / ("oplab_plugin_cli_" + std::to_string(::getpid()) + ".txt");
  const std::string cmd = std::string(OPLAB_CLI) + " backends --plugin " + plugin("abi_version") + " >/dev/null 2>" + err.string();
  const int status = std::system(cmd.c_str());
  std::ifstream in(err);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(err);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(text.find("declares ABI version 2"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
}

std::string run_error(const std::string& bad) {
  auto b = load_plugin_backend(plugin(bad));
  try {
    evaluate(*b, roi_case());
    return "";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

TEST(PluginRun, AnErrorCodeBecomesOneLine) {
  EXPECT_EQ(run_error("error_code"), "plugin failed: device lost");
  EXPECT_EQ(run_error("unknown_code"), "plugin evaluate returned 42, not an OPLAB_* code");
}

// external/plugin_memory.h: every tensor between inaccessible pages, the bytes near its ends
// a signalling NaN. A stray write near a buffer fails the case by name; one further away, or
// through a wild pointer, crashes the plugin's call, which fails the case and leaves this
// process (not isolated: evaluate() directly) running.
TEST(PluginRun, AWriteNearABufferFailsTheCase) {
  EXPECT_EQ(run_error("overrun"), "plugin wrote outside output (just before or past its end)");
  EXPECT_EQ(run_error("underrun"), "plugin wrote outside output (just before or past its end)");
}

TEST(PluginRun, AStrayAccessCrashesOnlyThePluginsCall) {
  for (const std::string bad : {"overrun_far", "wild_pointer"}) {
    auto b = load_plugin_backend(plugin(bad));
    try {
      evaluate(*b, roi_case());
      ADD_FAILURE() << bad << " was not caught";
    } catch (const KernelCrash& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.rfind("plugin " + plugin(bad) + " crashed in its evaluate: killed by signal 11 (SIGSEGV)", 0), 0u) << m;
    }
  }
  // And this process goes on: the next call of a good plugin answers.
  EXPECT_EQ(evaluate(*load_plugin_backend(plugin("ok")), roi_case()).outputs.at("output").data.at(0), 1.0);
}

// A read it has no right to — past an input's end, or of an output element before writing it —
// meets the signalling NaN, and the answer is NaN where the reference's is not.
TEST(PluginRun, AReadOutsideWhatItWasGivenTurnsTheAnswerNaN) {
  for (const std::string bad : {"read_past_input", "read_before_write"}) {
    const Result r = evaluate(*load_plugin_backend(plugin(bad)), roi_case());
    for (double v : r.outputs.at("output").data) EXPECT_TRUE(std::isnan(v)) << bad << ": " << v;
  }
}

TEST(PluginRun, ASegfaultIsIsolatedToItsCase) {
  auto b = load_plugin_backend(plugin("segfault"));
  for (fuzz::IsolationMode mode : {fuzz::IsolationMode::Worker, fuzz::IsolationMode::PerCase}) {
    fuzz::Isolation iso;
    iso.mode = mode;
    EXPECT_THROW(fuzz::isolated_evaluate(*b, roi_case(1), iso), fuzz::KernelCrash);  // odd batch: crashes
    const Result r = fuzz::isolated_evaluate(*b, roi_case(2), iso);                   // and this process goes on
    EXPECT_EQ(r.outputs.at("output").data.at(0), 1.0);
  }

  // A whole campaign goes on past its crashes and records them.
  Registry reg;
  reg.add(make_ref_backend());
  reg.add(load_plugin_backend(plugin("segfault")));
  const fs::path out = fs::temp_directory_path() / ("oplab_plugin_segv_" + std::to_string(::getpid()));
  fuzz::CampaignOptions o;
  o.ops = {"roi_align"};
  o.backends = {"bad"};
  o.properties = {"differential"};
  o.cases = 12;
  o.keep_going = true;
  o.shrink_time_s = 0;
  o.out = out.string();
  std::ostringstream progress;
  const fuzz::CampaignResult res = fuzz::run_campaign(o, reg, progress);
  fs::remove_all(out);
  EXPECT_EQ(res.cases, 12) << progress.str();
  int crashes = 0;
  for (const auto& f : res.failures)
    if (f.detail.find("signal 11") != std::string::npos) ++crashes;
  EXPECT_GT(crashes, 0) << progress.str();
}

// The CLI with a plugin that crashes: `eval` fails the case in one line (exit 1, as any failure
// of a backend), and a campaign run in its own process (`--isolation none`) goes through every
// case and records the crashes, as it does isolated.
int run_cli(const std::string& args, std::string* err_text) {
  const fs::path err = fs::temp_directory_path() / ("oplab_plugin_cli_" + std::to_string(::getpid()) + ".txt");
  const std::string cmd = std::string(OPLAB_CLI) + " " + args + " >/dev/null 2>" + err.string();
  const int status = std::system(cmd.c_str());
  std::ifstream in(err);
  err_text->assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(err);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(PluginRun, TheCliReportsAPluginCrashAsTheCasesFailure) {
  const fs::path dir = fs::temp_directory_path() / ("oplab_plugin_crash_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  Case c = roi_case();
  {
    std::ofstream(dir / "case.json") << case_to_json(c).dump();
  }
  std::string err;
  EXPECT_EQ(run_cli("eval " + (dir / "case.json").string() + " --backend bad --plugin " + plugin("wild_pointer"), &err), 1);
  EXPECT_NE(err.find("crashed in its evaluate: killed by signal 11 (SIGSEGV)"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;

  EXPECT_EQ(run_cli("campaign --op roi_align --backend bad --cases 6 --isolation none --shrink-time 0 --out " +
                        (dir / "campaign").string() + " --plugin " + plugin("overrun_far"),
                    &err),
            1)
      << err;
  // The replay command printed for the crash registers the plugin again, and runs as printed.
  std::ifstream in(dir / "campaign" / "summary.json");
  const json summary = json::parse(in);
  EXPECT_EQ(summary.at("cases").at("total").get<int>(), 6) << summary.dump();
  EXPECT_NE(summary.dump().find("SIGSEGV"), std::string::npos) << summary.dump();
  ASSERT_FALSE(summary.at("failures").empty());
  const json record = read_json_file(summary["failures"][0].at("record").get<std::string>());
  const std::string replay = record.at("replay");
  EXPECT_NE(replay.find(" --plugin " + plugin("overrun_far")), std::string::npos) << replay;
  EXPECT_EQ(run_cli(replay.substr(6), &err), 1) << replay << "\n" << err;  // "oplab " -> the CLI
  fs::remove_all(dir);
}

// An external backend's name gets a suggestion too: the one registered name it begins with.
TEST(PluginLoad, AMistypedPluginNameIsSuggested) {
  std::string err;
  EXPECT_EQ(run_cli("fuzz --op roi_align --cases 1 --backend bad-plugin --plugin " + plugin("ok"), &err), 2) << err;
  EXPECT_NE(err.find("unknown backend \"bad-plugin\" (did you mean \"bad\"?)"), std::string::npos) << err;
}

// A float16 plugin receives its inputs rounded to float16 (ties to even) and its float16
// results come back exactly: the echo plugin returns input elements as output elements.
TEST(PluginRun, Float16BuffersRoundTrip) {
  auto b = load_plugin_backend(plugin("echo_float16"));
  EXPECT_EQ(b->dtype("roi_align"), DType::Float16);
  Case c = roi_case();
  c.inputs["input"].data[0] = 1.0 / 3.0;         // float16: 0x3555 = 0x1.554p-2
  c.inputs["input"].data[1] = 65520.0;           // halfway past the largest finite: inf
  c.inputs["input"].data[2] = 1.0 + 0x1p-11;     // tie: stays 1
  c.inputs["input"].data[3] = -0x1p-25;          // tie with -0: -0
  const Result r = evaluate(*b, c);
  const std::vector<double>& out = r.outputs.at("output").data;
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], 0x1.554p-2);
  EXPECT_EQ(out[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(out[2], 1.0);
  EXPECT_EQ(out[3], 0.0);
  EXPECT_TRUE(std::signbit(out[3]));
}

// ---- conversions: expected bit patterns from the formats' definitions ----

TEST(DTypeConvert, Float16RoundsToNearestEven) {
  EXPECT_EQ(double_to_float16_bits(1.0), 0x3c00);
  EXPECT_EQ(double_to_float16_bits(-2.0), 0xc000);
  EXPECT_EQ(double_to_float16_bits(65504.0), 0x7bff);         // largest finite
  EXPECT_EQ(double_to_float16_bits(65519.99), 0x7bff);        // below the halfway point
  EXPECT_EQ(double_to_float16_bits(65520.0), 0x7c00);         // halfway to 2^16: ties to even = inf
  EXPECT_EQ(double_to_float16_bits(1.0 + 0x1p-11), 0x3c00);   // tie, even stays
  EXPECT_EQ(double_to_float16_bits(1.0 + 3 * 0x1p-11), 0x3c02);  // tie, odd rounds up
  EXPECT_EQ(double_to_float16_bits(0x1p-24), 0x0001);         // smallest subnormal
  EXPECT_EQ(double_to_float16_bits(0x1p-25), 0x0000);         // tie with 0: even
  EXPECT_EQ(double_to_float16_bits(3 * 0x1p-25), 0x0002);     // tie between 1 and 2 quanta
  EXPECT_EQ(double_to_float16_bits(0x1p-14), 0x0400);         // smallest normal
  EXPECT_EQ(double_to_float16_bits(-0.0), 0x8000);
  EXPECT_EQ(double_to_float16_bits(std::nan("")) & 0x7c00, 0x7c00);
  EXPECT_NE(double_to_float16_bits(std::nan("")) & 0x03ff, 0);
  EXPECT_EQ(float16_bits_to_double(0x3555), 0x1.554p-2);      // 1/3 in half: 0x3555
  EXPECT_EQ(round_to_dtype(1.0 / 3.0, DType::Float16), 0x1.554p-2);
  for (uint32_t b = 0; b < 0x10000; ++b) {  // every pattern but NaN survives a round trip
    const double v = float16_bits_to_double(uint16_t(b));
    if (std::isnan(v)) continue;
    ASSERT_EQ(double_to_float16_bits(v), b) << std::hex << b;
  }
}

TEST(DTypeConvert, BFloat16RoundsOnceFromDouble) {
  EXPECT_EQ(double_to_bfloat16_bits(1.0), 0x3f80);
  EXPECT_EQ(double_to_bfloat16_bits(1.0 + 0x1p-8), 0x3f80);      // tie, even stays
  EXPECT_EQ(double_to_bfloat16_bits(1.0 + 3 * 0x1p-8), 0x3f82);  // tie, odd rounds up
  // Just above the tie: rounds up. Through float first it would become the tie itself
  // (2^-30 is below half a float32 ulp of 1) and then round down to even.
  EXPECT_EQ(double_to_bfloat16_bits(1.0 + 0x1p-8 + 0x1p-30), 0x3f81);
  EXPECT_EQ(double_to_bfloat16_bits(0x1.fep127), 0x7f7f);  // largest finite
  EXPECT_EQ(double_to_bfloat16_bits(0x1.ffp127), 0x7f80);  // halfway above it: inf
  EXPECT_EQ(bfloat16_bits_to_double(0xc040), -3.0);
}

TEST(DTypeConvert, Float32IsTheHardwareRounding) {
  EXPECT_EQ(round_to_dtype(0.1, DType::Float32), double(0.1f));
  EXPECT_EQ(round_to_dtype(0.1, DType::Float64), 0.1);
}

}  // namespace
}  // namespace oplab
