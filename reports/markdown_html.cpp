#include "reports/markdown_html.h"

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace oplab::report {

std::string markdown_to_html(const std::string& markdown) {
  cmark_gfm_core_extensions_ensure_registered();
  cmark_parser* parser = cmark_parser_new(CMARK_OPT_DEFAULT);
  if (cmark_syntax_extension* table = cmark_find_syntax_extension("table"))
    cmark_parser_attach_syntax_extension(parser, table);
  cmark_parser_feed(parser, markdown.data(), markdown.size());
  cmark_node* doc = cmark_parser_finish(parser);
  char* html = cmark_render_html(doc, CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(parser));
  std::string out = html ? html : "";
  std::free(html);
  cmark_node_free(doc);
  cmark_parser_free(parser);
  return out;
}

std::string inline_svgs(const std::string& html, const std::string& root) {
  static const std::regex img(R"re(<img src="([^"]+\.svg)" alt="([^"]*)" />)re");
  std::string out;
  auto begin = std::sregex_iterator(html.begin(), html.end(), img);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out += html.substr(last, size_t(m.position(0)) - last);
    std::ifstream f(std::filesystem::path(root) / m[1].str());
    if (!f) throw std::runtime_error("report: figure " + m[1].str() + " is missing");
    std::stringstream ss;
    ss << f.rdbuf();
    std::string svg = ss.str();
    const size_t start = svg.find("<svg");
    if (start != std::string::npos) svg = svg.substr(start);
    out += "<figure>" + svg + "<figcaption>" + m[2].str() + "</figcaption></figure>";
    last = size_t(m.position(0) + m.length(0));
  }
  out += html.substr(last);
  return out;
}

}  // namespace oplab::report
