#pragma once
// What every study notebook shares: a page (title, question, a one-line answer with measured
// numbers, text, tables, figures) written as OUT/<name>/page.md and OUT/<name>/page.json, and
// plots drawn by gnuplot as SVG. A plot writes its data file and script beside the page and runs
// `gnuplot <script>` as a child process; a failing gnuplot is an error, never a missing figure.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/backend.h"

namespace oplab::nb {

using json = nlohmann::json;

// One line of a line plot. `with` is gnuplot's plotting style: "lines", "linespoints",
// "points", "steps", "impulses".
struct Series {
  std::string label;
  std::vector<double> x, y;
  std::string with = "lines";
};

struct PlotOptions {
  std::string title, xlabel, ylabel;
  bool logx = false, logy = false;
  int width = 800, height = 480;
  std::vector<std::string> extra;  // further gnuplot commands, e.g. "set yrange [-1:1]"
};

class Page {
 public:
  // Creates OUT/<name>/ (and OUT).
  Page(const std::string& out_root, std::string name, std::string title, std::string question);

  const std::string& dir() const { return dir_; }
  const std::string& name() const { return name_; }

  // The answer in one line, with the numbers this run measured.
  void answer(std::string one_line) { answer_ = std::move(one_line); }
  // A paragraph of Markdown.
  void text(const std::string& markdown);
  // A Markdown table.
  void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);
  // A measured number for page.json ("numbers"), under `key`.
  void number(const std::string& key, json value) { numbers_[key] = std::move(value); }

  // Plots: each writes <fig>.dat, <fig>.gp and <fig>.svg into the page's folder, and links the
  // figure from the page at this point of the text.
  void line_plot(const std::string& fig, const PlotOptions& opt, const std::vector<Series>& series);
  // values[row][col]; rows are drawn bottom to top. `log10`: colour by log10 of the value
  // (values <= floor are drawn at floor). Each cell is labelled with its value.
  void heatmap(const std::string& fig, const PlotOptions& opt, const std::vector<std::string>& col_labels,
               const std::vector<std::string>& row_labels, const std::vector<std::vector<double>>& values,
               const std::string& cb_label, bool log10, double floor = 1e-17);
  // Clustered bars: values[series][category].
  void bar_plot(const std::string& fig, const PlotOptions& opt, const std::vector<std::string>& categories,
                const std::vector<std::string>& series_names, const std::vector<std::vector<double>>& values);

  // Grey-level pictures side by side, `per_row` to a row: each panel a [rows][cols] raster drawn
  // top row first, values clipped to [lo, hi] (black to white). Embedded in the SVG as images.
  struct Picture {
    std::string title;
    std::vector<std::vector<double>> pixels;
  };
  void pictures(const std::string& fig, const std::string& caption, const std::vector<Picture>& panels, int per_row,
                double lo, double hi, int panel_px = 220);

  // Writes page.md and page.json. Throws if the answer is missing.
  void write() const;

 private:
  void run_gnuplot(const std::string& fig, const std::string& script) const;
  std::string preamble(const std::string& fig, const PlotOptions& opt) const;
  void add_figure(const std::string& fig, const std::string& caption);

  std::string name_, title_, question_, answer_, dir_;
  std::vector<std::string> blocks_;   // Markdown blocks in order (text, tables, figure links)
  std::vector<std::string> figures_;  // svg file names
  json numbers_ = json::object();
};

// "%.{sig}g" of a double.
// Text as one cell of a GFM table: '|' escaped (a bare one would split the cell), line breaks
// turned into spaces.
std::string md_cell(const std::string& text);
// Text that Markdown must show as it is (a kernel's message, a divergence's description):
// `*`, `_`, backticks, brackets and angle brackets escaped, so `2*loc - 1` is no emphasis.
std::string md_plain(const std::string& text);

std::string fmt(double v, int sig = 3);

// Evaluates `c` on `b` (validation, availability, support); empty with the reason in *why when
// the backend cannot evaluate it (unavailable, unsupported or an error).
std::optional<Result> try_evaluate(Backend& b, const Case& c, std::string* why = nullptr);

// max |a - b| over two tensors of the same shape (NaN counts as infinite difference).
double max_abs_diff(const Tensor& a, const Tensor& b);
double max_abs(const Tensor& t);

// The main() of a notebook: parses --out DIR (default "notebooks-out"), builds the page, runs
// `body`, writes the page. Returns the process exit code (1 on any error, with one line on stderr).
int run_notebook(int argc, char** argv, const std::string& name, const std::string& title,
                 const std::string& question, const std::function<void(Page&)>& body);

}  // namespace oplab::nb
