#include "reports/html_finish.h"

#include <cctype>
#include <map>
#include <regex>

namespace oplab::report {

std::string anchor_id(const std::string& text) {
  std::string id;
  bool dash = false;
  for (unsigned char ch : text) {
    if (std::isalnum(ch) || ch == '_') {
      if (dash && !id.empty()) id += '-';
      id += char(std::tolower(ch));
      dash = false;
    } else {
      dash = true;
    }
  }
  return id.empty() ? "section" : id;
}

namespace {

std::string without_tags(const std::string& html) {
  static const std::regex tag("<[^>]*>");
  std::string s = std::regex_replace(html, tag, "");
  // The entities cmark writes, back to their characters, for the id and the TOC's text.
  static const std::vector<std::pair<std::string, std::string>> entities = {
      {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}};
  for (const auto& [e, c] : entities)
    for (size_t at = s.find(e); at != std::string::npos; at = s.find(e, at + c.size())) s.replace(at, e.size(), c);
  return s;
}

std::string escaped(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '&') out += "&amp;";
    else if (ch == '<') out += "&lt;";
    else if (ch == '>') out += "&gt;";
    else if (ch == '"') out += "&quot;";
    else out += ch;
  }
  return out;
}

}  // namespace

std::string anchor_headings(const std::string& html, std::vector<Heading>* found) {
  static const std::regex heading("<h([23])>([\\s\\S]*?)</h\\1>");
  std::map<std::string, int> seen;
  std::string out;
  size_t last = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), heading); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    Heading h;
    h.level = m[1].str()[0] - '0';
    h.text = without_tags(m[2].str());
    h.id = anchor_id(h.text);
    if (const int n = ++seen[h.id]; n > 1) h.id += "-" + std::to_string(n);
    out += html.substr(last, size_t(m.position(0)) - last);
    out += "<h" + m[1].str() + " id=\"" + h.id + "\">" + m[2].str() + " <a class=\"anchor\" href=\"#" + h.id +
           "\">#</a></h" + m[1].str() + ">";
    last = size_t(m.position(0) + m.length(0));
    if (found) found->push_back(h);
  }
  return out + html.substr(last);
}

std::string table_of_contents(const std::vector<Heading>& headings) {
  std::string nav = "<nav class=\"toc\"><strong>Contents</strong>\n<ol>\n";
  bool open_sub = false, open_item = false;
  for (const Heading& h : headings) {
    const std::string link = "<a href=\"#" + h.id + "\">" + escaped(h.text) + "</a>";
    if (h.level == 2) {
      if (open_sub) nav += "</ol>", open_sub = false;
      if (open_item) nav += "</li>\n";
      nav += "<li>" + link;
      open_item = true;
    } else if (open_item) {
      if (!open_sub) nav += "<ol>", open_sub = true;
      nav += "<li>" + link + "</li>";
    }
  }
  if (open_sub) nav += "</ol>";
  if (open_item) nav += "</li>\n";
  return nav + "</ol></nav>\n";
}

std::string scroll_tables(const std::string& html) {
  static const std::regex open("<table>"), close("</table>");
  return std::regex_replace(std::regex_replace(html, open, "<div class=\"scroll\"><table>"), close, "</table></div>");
}

const std::vector<Status>& statuses() {
  static const std::vector<Status> s = {
      {"PASS", "pass", "every case agrees with the reference"},
      {"EXPLAINED", "explained", "agrees but for named divergences or float32 boundary flips within the op's budget"},
      {"OVER-BUDGET", "over-budget", "float32 boundary flips over the op's budget (a finding)"},
      {"FAIL", "fail", "failing cases (a finding)"},
      {"CAUGHT", "caught", "a seeded bug the harness caught"},
      {"MISSED", "missed", "a seeded bug no check caught (the harness is too weak)"},
      {"DEPARTS", "departs", "a study variant departing from the spec, as it is meant to"},
  };
  return s;
}

std::string mark_statuses(const std::string& html) {
  std::string words;
  for (const Status& s : statuses()) words += (words.empty() ? "" : "|") + std::string(s.word);
  static const std::regex cell("<td>((?:<a href=\"[^\"]*\">)?)<strong>(" + words + ")</strong>");
  std::map<std::string, std::string> css;
  for (const Status& s : statuses()) css[s.word] = s.css;
  std::string out;
  size_t last = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), cell); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out += html.substr(last, size_t(m.position(0)) - last);
    out += "<td class=\"status st-" + css[m[2].str()] + "\">" + m[1].str() + "<strong>" + m[2].str() + "</strong>";
    last = size_t(m.position(0) + m.length(0));
  }
  return out + html.substr(last);
}

const char* report_style() {
  // Status: a word first (readable in any font, by anyone), a colour and a border style second.
  return R"(<style>
body { font-family: system-ui, "DejaVu Sans", sans-serif; max-width: 1200px; margin: 2em auto; padding: 0 1em; color: #222; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td { overflow-wrap: break-word; }
figure { margin: 1em 0; max-width: 100%; } figcaption { font-size: 0.85em; color: #555; }
svg { max-width: 100%; height: auto; }
img { max-width: 100%; }
code { background: #f6f6f6; padding: 0 0.2em; overflow-wrap: anywhere; }
pre { overflow-x: auto; }
h2 { border-top: 2px solid #ddd; padding-top: 1em; margin-top: 2em; }
a.anchor { color: #bbb; text-decoration: none; font-size: 0.8em; }
nav.toc { background: #fafafa; border: 1px solid #ddd; padding: 0.5em 1em; margin: 1em 0; font-size: 0.9em; }
nav.toc ol { margin: 0.2em 0; } nav.toc ol ol { font-size: 0.95em; }
td.status a { color: inherit; text-decoration: none; display: block; }
td.status { font-size: 0.85em; }
td.status strong { white-space: nowrap; }
.st-pass { background: #d9f2d9; }
.st-explained { background: #dbe8f7; }
.st-over-budget { background: #ffe2b8; border: 2px dashed #b35900 !important; }
.st-fail { background: #f8c9c9; border: 2px solid #a00 !important; }
.st-caught { background: #e8dcf5; }
.st-missed { background: #f8c9c9; border: 2px dotted #a00 !important; }
.st-departs { background: #eeeeee; }
.glance { border: 2px solid #888; padding: 0.5em 1em; margin: 1em 0; }
</style>)";
}

}  // namespace oplab::report
