#pragma once
// What turns the report's rendered Markdown into a page a reviewer can find their way in
// (reports/report.cpp): every h2/h3 gets an id, a table of contents links to them, every table
// scrolls inside its own box instead of widening the page, and the verdict grid's status words
// get the classes the stylesheet colours them by. The Markdown stays safe (cmark-gfm's default
// drops raw HTML, and backend names and descriptions reach it): these are applied afterwards,
// on markup only cmark itself wrote.
#include <string>
#include <vector>

namespace oplab::report {

// The id a heading with this text gets: lower case, every run of characters other than letters,
// digits and '_' one '-', none at the ends. Links into the report use it too ("#" + anchor_id).
std::string anchor_id(const std::string& text);

struct Heading {
  int level = 2;
  std::string id, text;  // text: the heading's words, tags removed
};

// <h2>/<h3> as <h2 id="...">, ids unique in the page (a second "Notes" is "notes-2"). The
// headings in order go to *found.
std::string anchor_headings(const std::string& html, std::vector<Heading>* found);

// <nav class="toc"> listing the h2 headings (and their h3s, nested).
std::string table_of_contents(const std::vector<Heading>& headings);

// Every <table> inside <div class="scroll">.
std::string scroll_tables(const std::string& html);

// A table cell that begins with a status word in bold (optionally inside a link), as the
// verdict grid writes it ("**FAIL** 3 fail"), gets class "status st-<word>".
std::string mark_statuses(const std::string& html);

// The words mark_statuses knows, each with its meaning (the grid's legend).
struct Status {
  const char* word;     // "PASS"
  const char* css;      // "pass"
  const char* meaning;  // "every case agrees with ref"
};
const std::vector<Status>& statuses();

// The stylesheet of the report.
const char* report_style();

}  // namespace oplab::report
