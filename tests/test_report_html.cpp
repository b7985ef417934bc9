// The report's page furniture (reports/html_finish.h) and its first table
// (reports/verdict_matrix.h) on small hand-made inputs: ids and links that meet, statuses as
// words, and the status each kind of record earns — a seeded bug caught only by determinism is
// CAUGHT, one no check caught is MISSED, an implementation's failure is FAIL; and the
// performance page's peer columns (a peer that failed is shown as failed).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "reports/at_a_glance.h"
#include "reports/html_finish.h"
#include "reports/sections.h"
#include "reports/verdict_matrix.h"

namespace oplab::report {
namespace {

using json = nlohmann::json;

json record(const std::string& op, const std::string& backend, const std::string& role, const std::string& property,
            json verdicts) {
  return {{"op", op}, {"backend", backend}, {"role", role}, {"property", property},
          {"cases", 10}, {"verdicts", std::move(verdicts)}};
}

TEST(ReportHtml, AnchorIdsAreLowerCaseWordsJoinedByDashes) {
  EXPECT_EQ(anchor_id("Accuracy per op and backend"), "accuracy-per-op-and-backend");
  EXPECT_EQ(anchor_id("Failing cases of roi_align on c-roi-align.v2"), "failing-cases-of-roi_align-on-c-roi-align-v2");
  EXPECT_EQ(anchor_id("  ms_deform_attn: cost & float32 error  "), "ms_deform_attn-cost-float32-error");
  EXPECT_EQ(anchor_id("***"), "section");
}

TEST(ReportHtml, HeadingsGetUniqueIdsAndTheContentsLinkToThem) {
  std::vector<Heading> found;
  const std::string html =
      anchor_headings("<h2>Notes &amp; more</h2><p>x</p><h3>Detail</h3><h2>Notes &amp; more</h2><h4>deep</h4>", &found);
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].id, "notes-more");
  EXPECT_EQ(found[0].text, "Notes & more");
  EXPECT_EQ(found[2].id, "notes-more-2");
  EXPECT_NE(html.find("<h2 id=\"notes-more-2\">"), std::string::npos) << html;
  EXPECT_NE(html.find("<h4>deep</h4>"), std::string::npos) << "only h2 and h3 are anchored";
  const std::string toc = table_of_contents(found);
  EXPECT_NE(toc.find("<a href=\"#notes-more\">Notes &amp; more</a><ol><li><a href=\"#detail\">Detail</a></li></ol>"),
            std::string::npos)
      << toc;
  EXPECT_NE(toc.find("href=\"#notes-more-2\""), std::string::npos) << toc;
}

TEST(ReportHtml, TablesScrollAndStatusCellsGetTheirClass) {
  const std::string in = "<table><tr><td><a href=\"#x\"><strong>FAIL</strong> 3 fail</a></td>"
                         "<td><strong>PASS</strong> 9 agree</td><td><strong>Note</strong></td></tr></table>";
  const std::string out = mark_statuses(scroll_tables(in));
  EXPECT_NE(out.find("<div class=\"scroll\"><table>"), std::string::npos) << out;
  EXPECT_NE(out.find("</table></div>"), std::string::npos) << out;
  EXPECT_NE(out.find("<td class=\"status st-fail\"><a href=\"#x\"><strong>FAIL</strong>"), std::string::npos) << out;
  EXPECT_NE(out.find("<td class=\"status st-pass\"><strong>PASS</strong>"), std::string::npos) << out;
  EXPECT_NE(out.find("<td><strong>Note</strong>"), std::string::npos) << "a bold word that is no status stays" << out;
  // Every status word has its colour in the stylesheet.
  for (const Status& s : statuses())
    EXPECT_NE(std::string(report_style()).find(".st-" + std::string(s.css) + " {"), std::string::npos) << s.word;
}

TEST(VerdictMatrix, EachRecordEarnsItsStatus) {
  const json records = json::array({
      record("roi_align", "mine", "implementation", "differential", {{"agree", 7}, {"DISAGREE", 3}}),
      record("roi_align", "clean", "implementation", "differential", {{"agree", 10}}),
      record("roi_align", "peer", "implementation", "differential", {{"agree", 8}, {"named-divergence", 2}}),
      // A cheater: agrees in the differential, caught by determinism.
      record("roi_align", "cheat", "seeded-bug", "differential", {{"agree", 10}}),
      record("roi_align", "cheat", "seeded-bug", "determinism", {{"agree", 9}, {"DISAGREE", 1}}),
      record("roi_align", "weak", "seeded-bug", "differential", {{"agree", 10}}),
      record("roi_align", "variant", "study-variant", "differential", {{"agree", 5}, {"DISAGREE", 5}}),
      record("roi_align", "elsewhere", "implementation", "differential", {{"unsupported", 10}}),
  });
  const std::string md = verdict_matrix(records);
  auto row = [&](const std::string& backend) {
    const size_t at = md.find("| " + backend + " (");
    return at == std::string::npos ? std::string() : md.substr(at, md.find('\n', at) - at);
  };
  EXPECT_NE(row("mine").find("[**FAIL** 3 fail, 7 agree](#failing-cases-of-roi_align-on-mine)"), std::string::npos) << md;
  EXPECT_NE(row("clean").find("[**PASS** 10 agree](#accuracy-per-op-and-backend)"), std::string::npos) << md;
  EXPECT_NE(row("peer").find("**EXPLAINED** 8 agree, 2 named"), std::string::npos) << md;
  EXPECT_NE(row("cheat").find("**CAUGHT** 1 fail (determinism), 10 agree"), std::string::npos) << md;
  EXPECT_NE(row("weak").find("**MISSED** 10 agree"), std::string::npos) << md;
  EXPECT_NE(row("variant").find("**DEPARTS** 5 fail"), std::string::npos) << md;
  EXPECT_NE(row("elsewhere").find("| · |"), std::string::npos) << md;
  // Implementations first.
  EXPECT_LT(md.find("| clean ("), md.find("| cheat ("));
}

TEST(AtAGlance, FindingsAndMissedSeededBugsAreNamed) {
  const json campaign = {{"records", json::array({
                             record("roi_align", "mine", "implementation", "differential", {{"DISAGREE", 3}}),
                             record("roi_align", "weak", "seeded-bug", "differential", {{"agree", 10}}),
                             record("roi_align", "strong", "seeded-bug", "differential", {{"DISAGREE", 2}}),
                             // Its op not in the campaign: every case unsupported, neither caught nor missed.
                             record("roi_align", "absent", "seeded-bug", "differential", {{"unsupported", 10}}),
                         })}};
  const std::string md = at_a_glance(campaign, json());
  EXPECT_NE(md.find("**Findings:** 1 — [roi_align on mine](#failing-cases-of-roi_align-on-mine): 3 failing (differential)"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("**Seeded bugs:** 1 of 2 caught; **missed**: weak."), std::string::npos) << md;
  EXPECT_NE(md.find("**Speed:** no benchmark was found."), std::string::npos) << md;
  const json clean = {{"records", json::array({record("roi_align", "ok", "implementation", "differential", {{"agree", 10}})})}};
  EXPECT_NE(at_a_glance(clean, json()).find("**Findings:** none"), std::string::npos);
}

TEST(AtAGlance, SpeedIsOursAgainstTheFastestPeerPerOp) {
  const json bench = {{"records", json::array({
                          {{"op", "grid_sample"}, {"pass", "forward"}, {"ratio_to_fastest_peer", 1.9}, {"fastest_peer", "torchvision"},
                           {"peer", json::object()}},
                          {{"op", "grid_sample"}, {"pass", "backward"}, {"ratio", 0.69}, {"peer", json::object()}},
                          {{"op", "deform_roi_pool"}, {"pass", "forward"}, {"ratio", 50.0}, {"peer", {{"baseline", "ref"}}}},
                      })}};
  const std::string md = at_a_glance(json(), bench);
  EXPECT_NE(md.find("grid_sample **0.69x**–1.9x (slowest: backward vs torchvision)"), std::string::npos) << md;
  EXPECT_EQ(md.find("deform_roi_pool"), std::string::npos) << "no peer has it: no ratio to a peer";
}

// The performance page (its page.md) that `bench` makes, written under a folder of its own.
std::string performance_page(const json& bench, const std::string& folder) {
  const std::string dir = ::testing::TempDir() + "/" + folder;
  std::filesystem::remove_all(dir);
  performance_section(bench, dir);
  std::ifstream f(std::filesystem::path(dir) / "performance" / "page.md");
  std::stringstream md;
  md << f.rdbuf();
  return md.str();
}

// A peer that failed on a shape (a crashed bridge) is shown as failed, with why, in its own
// column of the performance page; a peer that lacks the op stays "-".
TEST(PerformancePage, APeerThatFailedIsShownAsFailed) {
  const json bench = {{"threads", 2},
                      {"records", json::array({{{"shape", "roi_align sr2"},
                                                {"op", "roi_align"},
                                                {"pass", "forward"},
                                                {"ours", {{"median_ms", 20.0}}},
                                                {"peer", {{"unsupported", "torchvision: no such mode"}}},
                                                {"peer_failed", {{"onnxruntime", "the process stopped reading its input"}}},
                                                {"peer_unsupported", {{"pillow", "pillow: only interpolate"}}}}})}};
  const std::string md = performance_page(bench, "perf_failed");
  EXPECT_NE(md.find("| failed: the process stopped reading its input |"), std::string::npos) << md;
  EXPECT_EQ(md.find("pillow"), std::string::npos) << "a peer that lacks the op gets no column";
}

// The page says how its figures were timed: with pre-runs (the bench's default) or cold, as
// the bench's JSON records it; a record from before the field says neither.
TEST(PerformancePage, ItSaysWhetherEachTimedRunFollowedAPreRun) {
  auto page = [](const json& pre_runs) {
    json bench = {{"threads", 2},
                  {"records", json::array({{{"shape", "grid"},
                                            {"op", "grid_sample"},
                                            {"pass", "forward"},
                                            {"ours", {{"median_ms", 2.0}}},
                                            {"peer", {{"median_ms", 4.0}}}}})}};
    if (!pre_runs.is_null()) bench["pre_runs"] = pre_runs;
    return performance_page(bench, "perf_pre_runs");
  };
  const std::string warm = page(1), cold = page(0), old = page(json());
  EXPECT_NE(warm.find("each timed run right after an untimed run of the same side"), std::string::npos) << warm;
  EXPECT_NE(cold.find("each timed as the others leave the machine"), std::string::npos) << cold;
  for (const std::string* md : {&warm, &old}) EXPECT_EQ(md->find("as the others leave the machine"), std::string::npos);
  EXPECT_EQ(old.find("untimed run of the same side"), std::string::npos) << old;
}

}  // namespace
}  // namespace oplab::report
