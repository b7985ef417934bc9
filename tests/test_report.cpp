// The report end to end: a fixed small run of every check (campaign, gradcheck, fuzz, bench),
// then `oplab report`. Its report.json must validate against docs/report-schema.json (checked by
// python3-jsonschema, a standard validator), and the HTML must name every op, backend and check
// that report.json says ran, and be self-contained (figures inlined).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/case_io.h"

namespace oplab {
namespace {

namespace fs = std::filesystem;

int sh(const std::string& cmd) {
  const int status = std::system((cmd + " >/dev/null 2>&1").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(Report, BuiltFromASmallRunValidatesAndNamesEverything) {
  const fs::path dir = fs::temp_directory_path() / ("oplab_report_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string oplab = OPLAB_CLI, out = dir.string();
  // The campaign exits 1 when it finds failures; the report must be built either way.
  ASSERT_LE(sh(oplab + " campaign --cases 15 --seed 3 --out " + out + "/campaign"), 1);
  ASSERT_TRUE(fs::exists(dir / "campaign" / "summary.json"));
  ASSERT_EQ(sh(oplab + " gradcheck --op all --backend ref --cases 2 --seed 3 --out " + out + "/gradcheck.json"), 0);
  ASSERT_EQ(sh(oplab + " fuzz --op roi_align --backend ref --cases 10 --seed 3 --no-fork --out " + out + "/fuzz/ref"), 0);
  ASSERT_EQ(sh(oplab + " bench --reduced --shape nearest --repeats 1 --warmup 0 --no-backward --out " + out + "/bench.json"), 0);
  // The build's PTX checks (halide/ptx_check), as scripts/main.sh copies them.
  fs::create_directories(dir / "cuda-kernels");
  const std::string suffix = "_cuda.ptx.json";
  for (const auto& e : fs::directory_iterator(OPLAB_HALIDE_BUILD_DIR)) {
    const std::string name = e.path().filename().string();
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      fs::copy_file(e.path(), dir / "cuda-kernels" / name);
  }
  ASSERT_FALSE(fs::is_empty(dir / "cuda-kernels"));
  ASSERT_EQ(sh(oplab + " report --from " + out + " --out " + out + "/report"), 0);

  const fs::path report = dir / "report";
  ASSERT_TRUE(fs::exists(report / "index.html"));
  ASSERT_TRUE(fs::exists(report / "index.md"));
  EXPECT_EQ(sh("/usr/bin/python3 -m jsonschema -i " + (report / "report.json").string() + " " + OPLAB_SOURCE_DIR +
               "/docs/report-schema.json"),
            0)
      << "report.json does not validate against docs/report-schema.json";

  const json r = read_json_file((report / "report.json").string());
  EXPECT_TRUE(r["missing_inputs"].empty()) << r["missing_inputs"].dump();
  const std::string html = slurp(report / "index.html");
  for (const char* list : {"ops", "backends", "checks"}) {
    EXPECT_FALSE(r[list].empty()) << list;
    for (const auto& name : r[list]) EXPECT_NE(html.find(name.get<std::string>()), std::string::npos) << list << ": " << name;
  }
  for (const char* op : {"deform_conv2d", "roi_pool", "roi_align", "deform_roi_pool", "interpolate"})
    EXPECT_NE(html.find(op), std::string::npos) << op;
  // The report opens on the campaign's verdict matrix: a row per backend, implementations first.
  const std::string md = slurp(report / "index.md");
  const size_t matrix = md.find("## Verdicts of the campaign, op x backend");
  ASSERT_NE(matrix, std::string::npos);
  EXPECT_LT(matrix, md.find("| section | answer |"));
  EXPECT_NE(md.find("| halide-cpu (implementation) |"), std::string::npos);
  EXPECT_LT(md.find("| torchvision (implementation) |"), md.find("(seeded-bug) |"));
  EXPECT_NE(md.find("[**CAUGHT** "), std::string::npos) << "15 cases per op catch at least one seeded bug";
  // The first screen says, in words, the findings, the worst error and the speed, before the grid.
  const size_t glance = md.find("> **Findings:** ");
  EXPECT_LT(glance, matrix);
  EXPECT_LT(md.find("> **Worst error:** "), matrix);
  EXPECT_LT(md.find("> **Speed, ours against the fastest peer**"), matrix);
  // In the HTML: statuses as words with a class the stylesheet colours (no emoji needed), a
  // table of contents whose links land on headings, tables that scroll in their own box.
  EXPECT_NE(html.find("<td class=\"status st-caught\"><a href=\"#failing-cases-of-"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"status st-pass\">"), std::string::npos);
  EXPECT_EQ(html.find("🐞"), std::string::npos);
  EXPECT_EQ(html.find("🟩"), std::string::npos);
  EXPECT_NE(html.find("<nav class=\"toc\">"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"#accuracy-per-op-and-backend\">"), std::string::npos);
  EXPECT_NE(html.find("<h2 id=\"accuracy-per-op-and-backend\">"), std::string::npos);
  EXPECT_NE(html.find("<h3 id=\"failing-cases-of-"), std::string::npos);
  EXPECT_EQ(html.find("<table>"), html.find("<div class=\"scroll\"><table>") + 20);
  EXPECT_NE(html.find("<blockquote class=\"glance\">"), std::string::npos);
  // Self-contained: figures are inline SVG, no image files referenced.
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  for (const auto& s : r["sections"]) EXPECT_FALSE(s["answer"].get<std::string>().empty()) << s["name"];
  // Every CUDA kernel of the build is in its section: as many as the build checked PTX of.
  double built = 0;
  for (const auto& e : fs::directory_iterator(OPLAB_HALIDE_BUILD_DIR)) {
    const std::string n = e.path().filename().string();
    if (n.size() > 14 && n.compare(n.size() - 14, 14, "_cuda.ptx.json") == 0) ++built;
  }
  EXPECT_GE(built, 47.0);  // the seven first ops' 38, grid_sample's 6 (4-D and 5-D), ms_deform_attn's 3
  bool cuda = false;
  for (const auto& s : r["sections"])
    if (s["name"] == "cuda-kernels") {
      cuda = true;
      EXPECT_EQ(s["numbers"].value("kernels", 0.0), built) << s.dump();
    }
  EXPECT_TRUE(cuda) << "no cuda-kernels section";
  fs::remove_all(dir);
}

// A campaign killed while it shrank a failure: its summary still says "running" and lists no
// failure, but the record is on disk. The report says killed and lists the failure.
TEST(Report, AKilledCampaignReadsKilledWithEveryFailureOnDisk) {
  const fs::path dir = fs::temp_directory_path() / ("oplab_report_killed_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string oplab = OPLAB_CLI, out = dir.string();
  ASSERT_EQ(sh(oplab + " fuzz --op roi_pool --backend bug-roipool-half-even --cases 40 --no-fork --out " + out +
               "/fuzz/bug"),
            1);
  const std::string summary_path = out + "/fuzz/bug/summary.json";
  json summary = read_json_file(summary_path);
  ASSERT_FALSE(summary.at("failures").empty());
  const std::string id = summary["failures"][0]["id"];
  summary["failures"] = json::array();  // as the summary stood when the kill came
  summary["status"] = "running";        // the campaign never wrote its end; its lock is free
  write_json_file_atomic(summary_path, summary, 2);
  ASSERT_EQ(sh(oplab + " report --from " + out + " --out " + out + "/report"), 0);
  const json r = read_json_file(out + "/report/report.json");
  const json& fz = r.at("fuzz").at("bug");
  EXPECT_EQ(fz.at("status"), "killed");
  EXPECT_NE(fz.at("state_detail").get<std::string>().find("last event"), std::string::npos) << fz.dump();
  bool listed = false;
  for (const json& f : fz.at("failures")) listed |= f.at("id") == id && f.value("not_in_summary", false);
  EXPECT_TRUE(listed) << fz.at("failures").dump();
  const std::string md = slurp(fs::path(out) / "report" / "index.md");
  EXPECT_NE(md.find("killed"), std::string::npos);
  EXPECT_NE(md.find("1 campaign ran"), std::string::npos);                // not "1 campaigns"
  EXPECT_NE(md.find("| bug-roipool-half-even |"), std::string::npos) << md;  // the backend column
  // --from a campaign's own folder: the report reads it there and says so.
  ASSERT_EQ(sh(oplab + " report --from " + out + "/fuzz/bug --out " + out + "/report-one"), 0);
  const json one = read_json_file(out + "/report-one/report.json");
  EXPECT_EQ(one.at("found_inputs"), json({"summary.json"})) << one.at("found_inputs").dump();
  EXPECT_EQ(one.at("fuzz").at(".").at("status"), "killed");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oplab
