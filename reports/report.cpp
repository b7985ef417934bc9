#include "reports/report.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "core/case_io.h"
#include "core/op_desc.h"
#include "fuzz/campaign_state.h"
#include "notebooks-cpp/page.h"
#include "reports/at_a_glance.h"
#include "reports/html_finish.h"
#include "reports/markdown_html.h"
#include "reports/sections.h"
#include "reports/verdict_matrix.h"

namespace oplab::report {

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_text(const fs::path& p, const std::string& text) {
  const fs::path tmp = p.string() + ".tmp";
  std::ofstream(tmp) << text;
  fs::rename(tmp, p);
}

std::optional<json> load(const fs::path& p) {
  if (!fs::exists(p)) return std::nullopt;
  return read_json_file(p.string());
}

// A campaign's summary as it truly stands: a "running" campaign that was killed reads killed
// (fuzz/campaign_state.h), and every failure record on disk is listed, also those a campaign
// killed mid-way saved after its last summary.
json as_it_stands(const fs::path& dir, json summary) {
  const fuzz::CampaignState st = fuzz::read_state(dir.string(), summary);
  summary["status"] = st.status;
  if (!st.detail.empty()) summary["state_detail"] = st.detail;
  std::set<std::string> listed;
  for (const json& f : summary.value("failures", json::array())) listed.insert(f.value("id", std::string()));
  for (const json& r : fuzz::failure_records(dir.string()))
    if (!listed.count(r.value("id", std::string())))
      summary["failures"].push_back({{"id", r["id"]}, {"op", r["op"]}, {"backend", r["backend"]},
                                     {"property", r["property"]}, {"detail", r["detail"]},
                                     {"record", (dir / "failures" / (r["id"].get<std::string>() + ".json")).string()},
                                     {"found_after_s", r.value("found_after_s", 0.0)},
                                     {"shrunk", r.value("shrunk", false)}, {"not_in_summary", true}});
  return summary;
}

// Every fuzz campaign summary below `dir` (summary.json files), keyed by their folder.
// Whether `dir` holds the summary of an `oplab campaign` (not of a fuzz campaign).
bool is_campaign_folder(const fs::path& dir) {
  const fs::path p = dir / "summary.json";
  if (!fs::exists(p)) return false;
  const json s = read_json_file(p.string());
  return s.value("options", json::object()).value("mode", std::string()) == "campaign";
}

json fuzz_summaries(const fs::path& dir) {
  json all = json::object();
  if (!fs::exists(dir)) return all;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().filename() == "summary.json") {
      json s = read_json_file(e.path().string());
      const std::string kind = s.value("kind", "");
      if (kind == "oplab-fuzz-campaign" || kind == "oplab-fuzz-merged")
        all[fs::relative(e.path().parent_path(), dir).string()] = as_it_stands(e.path().parent_path(), s);
    }
  return all;
}

// A page's Markdown, its headings one level down and its figures re-rooted at the report.
std::string embed_page(const fs::path& page_dir, const std::string& rel) {
  std::string md = slurp(page_dir / "page.md");
  if (md.rfind("# ", 0) == 0) md = "#" + md;
  md = std::regex_replace(md, std::regex(R"(\]\(([^)/]+\.svg)\))"), "](" + rel + "/$1)");
  return md;
}


// Where the table of contents goes: a paragraph of its own in the Markdown, replaced in the HTML.
constexpr const char* kTocMarker = "OPLAB-TABLE-OF-CONTENTS";

}  // namespace

json build(const Options& opt) {
  const fs::path from(opt.from), out(opt.out), pages = out / "pages";
  fs::create_directories(pages);
  json report{{"schema_version", 1}, {"from", opt.from}, {"sections", json::array()}, {"missing_inputs", json::array()}, {"found_inputs", json::array()}};
  {
    const std::time_t now = std::time(nullptr);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    report["generated"] = buf;
  }
  std::set<std::string> ops, backends, checks;
  std::vector<std::string> order;
  json inputs = json::object();
  json campaign_summary, bench_json;  // for the first screen (reports/at_a_glance.h)

  // --from may be the main job's folder (campaign/, fuzz/, gradcheck.json, ...) or the output
  // folder of one campaign or fuzz campaign: each input is looked for where it can be.
  const fs::path campaign_dir = is_campaign_folder(from) ? from : from / "campaign";
  const fs::path fuzz_root = is_campaign_folder(from) ? fs::path() : fs::exists(from / "summary.json") ? from : from / "fuzz";
  if (auto loaded = load(campaign_dir / "summary.json")) {
    report["found_inputs"].push_back(fs::relative(campaign_dir / "summary.json", from).string());
    const std::optional<json> c = as_it_stands(campaign_dir, *loaded);
    campaign_summary = *c;
    json s = accuracy_section(*c, pages.string());
    divergences_section(*c, pages.string());
    report["accuracy"] = (*c)["records"];
    for (const json& r : (*c)["records"]) ops.insert(r["op"]), backends.insert(r["backend"]);
    backends.insert("ref");
    checks.insert("campaign (differential, float32 error bound)");
    const json opts = c->value("options", json::object());
    inputs["campaign seed"] = opts.value("seed", json(0));
    inputs["campaign cases per op"] = opts.value("cases", json(0));
    inputs["campaign status"] = c->value("status", json("?"));
    order.push_back("accuracy");
    order.push_back("divergences");
  } else {
    report["missing_inputs"].push_back("campaign/summary.json");
    missing_section("accuracy", "Accuracy per op and backend", "oplab campaign", pages.string());
    order.push_back("accuracy");
  }
  if (auto g = load(from / "gradcheck.json")) {
    report["found_inputs"].push_back("gradcheck.json");
    gradcheck_section(*g, pages.string());
    report["gradcheck"] = {{"summary", g->value("summary", json::array())}, {"sides", g->value("sides", json::array())},
                           {"seed", g->value("seed", json(nullptr))}};
    for (const json& r : g->value("summary", json::array()))
      ops.insert(r.value("op", "")), backends.insert(r.value("backend", "")), checks.insert("gradcheck " + r.value("method", ""));
    inputs["gradcheck seed"] = g->value("seed", json(nullptr));
  } else {
    report["missing_inputs"].push_back("gradcheck.json");
    missing_section("gradcheck", "Gradient checks", "oplab gradcheck", pages.string());
  }
  order.push_back("gradcheck");
  const json fz = fuzz_root.empty() ? json::object() : fuzz_summaries(fuzz_root);
  for (const auto& [dir, s] : fz.items())
    report["found_inputs"].push_back((fs::relative(fuzz_root, from) / dir / "summary.json").lexically_normal().string());
  if (!fz.empty()) {
    fuzz_section(fz, pages.string());
    report["fuzz"] = fz;
    for (const auto& [dir, s] : fz.items()) {
      for (const auto& [op, n] : member(s["cases"], "per_op").items()) ops.insert(op);
      const json b = s.value("options", json::object()).value("backends", json());
      if (b.is_string()) backends.insert(b.get<std::string>());
      if (b.is_array())
        for (const auto& x : b) backends.insert(x.get<std::string>());
      for (const json& r : s.value("records", json::array())) checks.insert("fuzz " + r.value("property", std::string("?")));
    }
  } else {
    report["missing_inputs"].push_back("fuzz/*/summary.json");
    missing_section("fuzz", "Fuzz campaigns", "oplab fuzz", pages.string());
  }
  order.push_back("fuzz");
  if (auto b = load(from / "bench.json")) {
    report["found_inputs"].push_back("bench.json");
    performance_section(*b, pages.string());
    bench_json = *b;
    report["performance"] = {{"copy_bandwidth_gbs", (*b)["copy_bandwidth_gbs"]}, {"threads", (*b)["threads"]},
                             {"records", (*b)["records"]}};
    checks.insert("benchmark");
    inputs["bench threads"] = (*b).value("threads", 0);
    if (b->contains("peer_versions")) inputs["peer_versions"] = (*b)["peer_versions"];
  } else {
    report["missing_inputs"].push_back("bench.json");
    missing_section("performance", "Performance against the peers", "oplab bench", pages.string());
  }
  order.push_back("performance");
  {
    // The build's PTX checks (halide/ptx_check), one JSON per CUDA kernel.
    json kernels = json::array();
    std::vector<fs::path> files;
    if (fs::exists(from / "cuda-kernels"))
      for (const auto& e : fs::directory_iterator(from / "cuda-kernels"))
        if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) kernels.push_back(read_json_file(f.string()));
    if (!kernels.empty()) {
      cuda_kernels_section(kernels, pages.string());
      report["cuda_kernels"] = kernels;
      checks.insert("CUDA PTX (build time)");
    } else {
      report["missing_inputs"].push_back("cuda-kernels/*.json");
      missing_section("cuda-kernels", "CUDA kernels (checked at build time)", "the build (build/halide/*_cuda.ptx.json)",
                      pages.string());
    }
    order.push_back("cuda-kernels");
  }

  // Study notebooks: their pages are copied in as they are.
  if (fs::exists(from / "notebooks"))
    for (const auto& e : fs::directory_iterator(from / "notebooks"))
      if (fs::exists(e.path() / "page.json")) {
        const std::string name = "nb-" + e.path().filename().string();
        fs::remove_all(pages / name);
        fs::copy(e.path(), pages / name, fs::copy_options::recursive);
        order.push_back(name);
        checks.insert("notebook " + e.path().filename().string());
      }
  machine_section(inputs, pages.string(), opt.command);
  order.push_back("reproduce");

  // index.md: contents with every page's one-line answer, then the pages.
  std::ostringstream md;
  // First screen: what needs attention in words, then the grid; the contents follow.
  md << "# oplab report\n\nGenerated " << report["generated"].get<std::string>() << " from `" << opt.from << "`.\n\n";
  md << at_a_glance(campaign_summary, bench_json) << "\n";
  if (report.contains("accuracy")) {
    const std::string matrix = verdict_matrix(report["accuracy"]);
    if (!matrix.empty()) md << "## Verdicts of the campaign, op x backend\n\n" << matrix << "\n";
  }
  md << kTocMarker << "\n\n## Every section's answer\n\n| section | answer |\n|---|---|\n";
  for (const auto& name : order) {
    json pj = read_json_file((pages / name / "page.json").string());
    pj["page"] = "pages/" + name;
    report["sections"].push_back(pj);
    const std::string title = pj.value("title", name);
    md << "| [" << nb::md_cell(title) << "](#" << anchor_id(title) << ") | " << nb::md_cell(pj.value("answer", "")) << " |\n";
  }
  auto joined = [](const std::set<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s.empty() ? std::string("none") : s;
  };
  md << "\n**Ops:** " << joined(ops) << ".  \n**Backends:** " << joined(backends) << ".  \n**Checks that ran:** "
     << joined(checks) << ".\n";
  md << "\n**Read:** " << (report["found_inputs"].empty() ? std::string("nothing") : report["found_inputs"].dump()) << "\n";
  if (!report["missing_inputs"].empty()) md << "\n**Not found:** " << report["missing_inputs"].dump() << "\n";
  for (const auto& name : order) md << "\n" << embed_page(pages / name, "pages/" + name) << "\n";
  report["ops"] = std::vector<std::string>(ops.begin(), ops.end());
  report["backends"] = std::vector<std::string>(backends.begin(), backends.end());
  report["checks"] = std::vector<std::string>(checks.begin(), checks.end());

  {
    std::string text = md.str();  // index.md has no contents list: a Markdown viewer makes its own
    if (const size_t at = text.find(kTocMarker); at != std::string::npos) text.erase(at, std::strlen(kTocMarker) + 2);
    write_text(out / "index.md", text);
  }
  std::vector<Heading> headings;
  std::string body = anchor_headings(markdown_to_html(md.str()), &headings);
  body = mark_statuses(scroll_tables(inline_svgs(body, out.string())));
  if (const size_t at = body.find("<p>" + std::string(kTocMarker) + "</p>"); at != std::string::npos)
    body.replace(at, std::strlen(kTocMarker) + 7, table_of_contents(headings));
  if (const size_t at = body.find("<blockquote>"); at != std::string::npos)  // the first screen's summary
    body.replace(at, 12, "<blockquote class=\"glance\">");
  write_text(out / "index.html",
             "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
             "content=\"width=device-width, initial-scale=1\"><title>oplab report</title>" +
                 std::string(report_style()) + "</head><body>\n" + body + "</body></html>\n");
  write_json_file_atomic((out / "report.json").string(), report, 2);
  return report;
}

}  // namespace oplab::report
