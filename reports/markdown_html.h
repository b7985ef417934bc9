#pragma once
#include <string>

namespace oplab::report {

// GitHub-flavoured Markdown (tables) to HTML, by cmark-gfm.
std::string markdown_to_html(const std::string& markdown);

// Replaces every <img src="X.svg" ...> whose file exists under `root` with the SVG itself, so
// the page is self-contained.
std::string inline_svgs(const std::string& html, const std::string& root);

}  // namespace oplab::report
