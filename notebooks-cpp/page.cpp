#include "notebooks-cpp/page.h"

#include <algorithm>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <CLI/CLI.hpp>

namespace oplab::nb {

namespace fs = std::filesystem;

namespace {

// A string as a gnuplot single-quoted literal (the only escape there is '' for ').
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') out += "''";
    else out += ch;
  }
  return out + "'";
}

// Numbers in data files: full precision, and NaN/Inf as gnuplot reads them (missing/undefined).
std::string datum(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Inf" : "-Inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << content;
  if (!f.flush()) throw std::runtime_error("cannot write " + path);
}

}  // namespace

std::string fmt(double v, int sig) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", sig, v);
  return buf;
}

Page::Page(const std::string& out_root, std::string name, std::string title, std::string question)
    : name_(std::move(name)), title_(std::move(title)), question_(std::move(question)) {
  dir_ = (fs::path(out_root) / name_).string();
  fs::create_directories(dir_);
}

void Page::text(const std::string& markdown) { blocks_.push_back(markdown); }

std::string md_cell(const std::string& text) {
  std::string s;
  for (char ch : text) {
    if (ch == '|') s += "\\|";
    else s += ch == '\n' ? ' ' : ch;
  }
  return s;
}

std::string md_plain(const std::string& text) {
  std::string s;
  for (char ch : text) {
    if (ch == '*' || ch == '_' || ch == '`' || ch == '[' || ch == ']' || ch == '<' || ch == '>' || ch == '\\') s += '\\';
    s += ch;
  }
  return s;
}

void Page::table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::ostringstream md;
  md << "|";
  for (const auto& h : header) md << " " << md_cell(h) << " |";
  md << "\n|";
  for (size_t i = 0; i < header.size(); ++i) md << "---|";
  for (const auto& row : rows) {
    md << "\n|";
    for (const auto& cell : row) md << " " << md_cell(cell) << " |";
  }
  blocks_.push_back(md.str());
}

void Page::add_figure(const std::string& fig, const std::string& caption) {
  figures_.push_back(fig + ".svg");
  blocks_.push_back("![" + caption + "](" + fig + ".svg)");
}

// The SVG terminal and the labels every plot shares. `noenhanced` keeps underscores in names
// as they are (enhanced text would make them subscripts).
std::string Page::preamble(const std::string& fig, const PlotOptions& opt) const {
  std::ostringstream gp;
  gp << "set terminal svg size " << opt.width << "," << opt.height
     << " noenhanced font 'sans,12' background rgb 'white'\n";
  gp << "set output " << quoted(fig + ".svg") << "\n";
  if (!opt.title.empty()) gp << "set title " << quoted(opt.title) << "\n";
  if (!opt.xlabel.empty()) gp << "set xlabel " << quoted(opt.xlabel) << "\n";
  if (!opt.ylabel.empty()) gp << "set ylabel " << quoted(opt.ylabel) << "\n";
  if (opt.logx) gp << "set logscale x\n";
  if (opt.logy) gp << "set logscale y\n";
  gp << "set grid\n";
  for (const auto& e : opt.extra) gp << e << "\n";
  return gp.str();
}

// Runs gnuplot on the script in the page's folder (so the script names its files relatively)
// and fails with gnuplot's own message when it does not exit 0.
void Page::run_gnuplot(const std::string& fig, const std::string& script) const {
  const std::string script_name = fig + ".gp";
  write_file((fs::path(dir_) / script_name).string(), script);
  int err_pipe[2];
  if (pipe(err_pipe) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    close(err_pipe[0]);
    dup2(err_pipe[1], STDERR_FILENO);
    dup2(err_pipe[1], STDOUT_FILENO);
    if (chdir(dir_.c_str()) != 0) _exit(126);
    execlp("gnuplot", "gnuplot", script_name.c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "cannot run gnuplot: %s (install gnuplot-nox)\n", std::strerror(errno));
    _exit(127);
  }
  close(err_pipe[1]);
  std::string messages;
  char buf[4096];
  ssize_t got;
  while ((got = read(err_pipe[0], buf, sizeof buf)) > 0) messages.append(buf, size_t(got));
  close(err_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("gnuplot failed on " + (fs::path(dir_) / script_name).string() + ": " + messages);
  if (!fs::exists(fs::path(dir_) / (fig + ".svg"))) throw std::runtime_error("gnuplot wrote no " + fig + ".svg");
}

void Page::line_plot(const std::string& fig, const PlotOptions& opt, const std::vector<Series>& series) {
  std::ostringstream data;
  for (size_t s = 0; s < series.size(); ++s) {
    if (series[s].x.size() != series[s].y.size()) throw std::logic_error(fig + ": series " + series[s].label + " x/y sizes differ");
    data << "# " << series[s].label << "\n";
    for (size_t i = 0; i < series[s].x.size(); ++i) data << datum(series[s].x[i]) << " " << datum(series[s].y[i]) << "\n";
    data << "\n\n";  // two blank lines end a data set (gnuplot's `index`)
  }
  write_file((fs::path(dir_) / (fig + ".dat")).string(), data.str());
  std::ostringstream gp;
  gp << preamble(fig, opt);
  gp << "plot ";
  for (size_t s = 0; s < series.size(); ++s) {
    if (s) gp << ", \\\n     ";
    gp << quoted(fig + ".dat") << " index " << s << " using 1:2 with " << series[s].with << " lw 2 title "
       << quoted(series[s].label);
  }
  gp << "\n";
  run_gnuplot(fig, gp.str());
  add_figure(fig, opt.title.empty() ? fig : opt.title);
}

void Page::heatmap(const std::string& fig, const PlotOptions& opt, const std::vector<std::string>& col_labels,
                   const std::vector<std::string>& row_labels, const std::vector<std::vector<double>>& values,
                   const std::string& cb_label, bool log10, double floor) {
  // Long format (x y value label) so that every cell can carry its own text label.
  std::ostringstream data;
  for (size_t r = 0; r < values.size(); ++r) {
    for (size_t c = 0; c < values[r].size(); ++c) {
      const double v = values[r][c];
      const double shown = log10 ? std::log10(std::max(v, floor)) : v;
      data << c << " " << r << " " << datum(std::isnan(v) ? NAN : shown) << " \"" << fmt(v, 2) << "\"\n";
    }
    data << "\n";
  }
  write_file((fs::path(dir_) / (fig + ".dat")).string(), data.str());
  std::ostringstream gp;
  PlotOptions o = opt;
  gp << preamble(fig, o);
  gp << "unset grid\n";
  gp << "set xrange [-0.5:" << double(col_labels.size()) - 0.5 << "]\n";
  gp << "set yrange [-0.5:" << double(row_labels.size()) - 0.5 << "]\n";
  gp << "set xtics (";
  for (size_t c = 0; c < col_labels.size(); ++c) gp << (c ? ", " : "") << quoted(col_labels[c]) << " " << c;
  gp << ")\nset ytics (";
  for (size_t r = 0; r < row_labels.size(); ++r) gp << (r ? ", " : "") << quoted(row_labels[r]) << " " << r;
  gp << ")\n";
  gp << "set cblabel " << quoted(log10 ? "log10 " + cb_label : cb_label) << "\n";
  gp << "set palette rgbformulae 33,13,10\n";
  // Cells as filled boxes (not `with image`): works for any grid size and skips NaN cells.
  gp << "set style fill solid 1.0 noborder\n";
  gp << "plot " << quoted(fig + ".dat") << " using 1:2:(0.5):(0.5):3 with boxxyerror fc palette notitle, \\\n     "
     << quoted(fig + ".dat")
     << " using 1:2:4 with labels font 'sans,9' notitle\n";
  run_gnuplot(fig, gp.str());
  add_figure(fig, opt.title.empty() ? fig : opt.title);
}

void Page::pictures(const std::string& fig, const std::string& caption, const std::vector<Picture>& panels, int per_row,
                    double lo, double hi, int panel_px) {
  const int n = int(panels.size()), cols = std::max(1, std::min(per_row, n)), rows = (n + cols - 1) / cols;
  std::ostringstream gp;
  gp << "set terminal svg size " << cols * panel_px << "," << rows * (panel_px + 24)
     << " noenhanced font 'sans,11' background rgb 'white'\n";
  gp << "set output " << quoted(fig + ".svg") << "\n";
  gp << "set palette gray\nunset colorbox\nset size ratio -1\nunset xtics\nunset ytics\nunset border\n";
  gp << "set cbrange [" << datum(lo) << ":" << datum(hi) << "]\n";
  gp << "set multiplot layout " << rows << "," << cols << "\n";
  for (int i = 0; i < n; ++i) {
    // One matrix file per panel. gnuplot draws a matrix's first row at the bottom, so the rows
    // are written last to first and the picture stands upright.
    const std::string dat = fig + "_" + std::to_string(i) + ".dat";
    std::ostringstream data;
    const auto& px = panels[size_t(i)].pixels;
    for (size_t r = px.size(); r-- > 0;) {
      for (size_t c = 0; c < px[r].size(); ++c) data << (c ? " " : "") << datum(std::clamp(px[r][c], lo, hi));
      data << "\n";
    }
    write_file((fs::path(dir_) / dat).string(), data.str());
    gp << "set title " << quoted(panels[size_t(i)].title) << "\n";
    gp << "plot " << quoted(dat) << " matrix with image notitle\n";
  }
  gp << "unset multiplot\n";
  run_gnuplot(fig, gp.str());
  add_figure(fig, caption);
}

void Page::bar_plot(const std::string& fig, const PlotOptions& opt, const std::vector<std::string>& categories,
                    const std::vector<std::string>& series_names, const std::vector<std::vector<double>>& values) {
  std::ostringstream data;
  for (size_t c = 0; c < categories.size(); ++c) {
    data << "\"" << categories[c] << "\"";
    for (size_t s = 0; s < series_names.size(); ++s) data << " " << datum(values.at(s).at(c));
    data << "\n";
  }
  write_file((fs::path(dir_) / (fig + ".dat")).string(), data.str());
  std::ostringstream gp;
  gp << preamble(fig, opt);
  gp << "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.8 border -1\n";
  gp << "set xtics rotate by -30\n";
  gp << "set key outside top center horizontal\n";  // a legend inside would cover bars
  for (const auto& e : opt.extra) gp << e << "\n";   // the caller's commands win over these defaults
  gp << "plot ";
  for (size_t s = 0; s < series_names.size(); ++s) {
    if (s) gp << ", \\\n     ";
    gp << quoted(fig + ".dat") << " using " << s + 2 << (s == 0 ? ":xtic(1)" : "") << " title " << quoted(series_names[s]);
  }
  gp << "\n";
  run_gnuplot(fig, gp.str());
  add_figure(fig, opt.title.empty() ? fig : opt.title);
}

void Page::write() const {
  if (answer_.empty()) throw std::logic_error(name_ + ": the page has no answer");
  std::ostringstream md;
  md << "# " << title_ << "\n\n";
  md << "**Question.** " << question_ << "\n\n";
  md << "**Answer.** " << answer_ << "\n";
  for (const auto& b : blocks_) md << "\n" << b << "\n";
  write_file((fs::path(dir_) / "page.md").string(), md.str());
  const json page = {{"name", name_},       {"title", title_},      {"question", question_},
                     {"answer", answer_},   {"figures", figures_},  {"numbers", numbers_}};
  write_file((fs::path(dir_) / "page.json").string(), page.dump(2) + "\n");
}

std::optional<Result> try_evaluate(Backend& b, const Case& c, std::string* why) {
  try {
    return evaluate(b, c);
  } catch (const std::exception& e) {
    if (why) *why = e.what();
    return std::nullopt;
  }
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  if (a.shape != b.shape) return INFINITY;
  double m = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    const double d = std::fabs(a.data[i] - b.data[i]);
    if (std::isnan(d)) {
      if (std::isnan(a.data[i]) && std::isnan(b.data[i])) continue;
      return INFINITY;
    }
    m = std::max(m, d);
  }
  return m;
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (double v : t.data) m = std::max(m, std::fabs(v));
  return m;
}

int run_notebook(int argc, char** argv, const std::string& name, const std::string& title,
                 const std::string& question, const std::function<void(Page&)>& body) {
  CLI::App app{"study notebook " + name + ": " + question};
  std::string out = "notebooks-out";
  app.add_option("--out", out, "folder that receives <out>/" + name + "/page.md, page.json and the figures");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    Page page(out, name, title, question);
    body(page);
    page.write();
    std::cout << (fs::path(page.dir()) / "page.md").string() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace oplab::nb
