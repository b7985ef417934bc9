// Notebook bicubic_a: PyTorch's bicubic kernel constant A = -0.75 against Keys' A = -0.5 (the
// kernel, the overshoot on a step edge, the frequency response), and where bicubic departs from
// bilinear. The A = -0.75 curves are measured through the reference backend; A = -0.5 has no
// backend, so a local 1-D bicubic with A as a parameter is used, after checking that with
// A = -0.75 it reproduces the reference to rounding.
#include <algorithm>
#include <cmath>
#include <functional>

#include "cli/builtin_backends.h"
#include "notebooks-cpp/page.h"

namespace oplab::nb {
namespace {

// The cubic convolution kernel of SPEC §6 with a free A.
double cubic(double d, double A) {
  const double t = std::fabs(d);
  if (t <= 1) return ((A + 2) * t - (A + 3)) * t * t + 1;
  if (t < 2) return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A;
  return 0;
}
double triangle(double d) { return std::max(0.0, 1 - std::fabs(d)); }

// 1-D bicubic resampling with SPEC §6's taps (edge-replicated), for any A.
std::vector<double> bicubic_1d(const std::vector<double>& x, int64_t out, double A, bool align_corners) {
  const int64_t in = int64_t(x.size());
  const double scale = align_corners ? (out > 1 ? double(in - 1) / double(out - 1) : 0) : double(in) / double(out);
  std::vector<double> y(static_cast<size_t>(out), 0.0);
  for (int64_t d = 0; d < out; ++d) {
    const double src = align_corners ? scale * double(d) : scale * (double(d) + 0.5) - 0.5;
    const double f = std::floor(src), t = src - f;
    const double w[4] = {cubic(t + 1, A), cubic(t, A), cubic(1 - t, A), cubic(2 - t, A)};
    double v = 0;
    for (int m = 0; m < 4; ++m) v += w[m] * x[size_t(std::clamp(int64_t(f) - 1 + m, int64_t(0), in - 1))];
    y[size_t(d)] = v;
  }
  return y;
}

// A 1-D signal through the reference's 2-D interpolate (bicubic and bilinear are 2-D modes):
// input [1, 1, 1, in] -> size [1, out].
std::vector<double> ref_resample(Backend& ref, const std::vector<double>& x, int64_t out, const std::string& mode,
                                 bool align_corners) {
  Case c;
  c.op = "interpolate";
  c.params = json{{"mode", mode}, {"size", {1, out}}, {"align_corners", align_corners}};
  Tensor t({1, 1, 1, int64_t(x.size())});
  t.data = x;
  c.inputs["input"] = t;
  return evaluate(ref, c).outputs.at("output").data;
}

// Fourier transform of an even kernel supported on [-2, 2], by Simpson's rule.
double response(const std::function<double(double)>& k, double f) {
  const int n = 4000;  // even
  const double a = -2, b = 2, h = (b - a) / n;
  double s = 0;
  for (int i = 0; i <= n; ++i) {
    const double d = a + h * i;
    const double w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
    s += w * k(d) * std::cos(2 * M_PI * f * d);
  }
  return s * h / 3;
}

void body(Page& page) {
  Backend& ref = *builtin_backends().find("ref");

  // (1) The kernel, and the reference's impulse response (align_corners=True, 17 -> 257: scale
  // exactly 1/16, so output d samples the kernel at d/16 - 8).
  std::vector<double> impulse(17, 0.0);
  impulse[8] = 1;
  const std::vector<double> ir = ref_resample(ref, impulse, 257, "bicubic", true);
  Series k75{"A = -0.75 (PyTorch)", {}, {}, "lines"}, k50{"A = -0.5 (Keys)", {}, {}, "lines"},
      tri{"bilinear (triangle)", {}, {}, "lines"}, meas{"reference's impulse response", {}, {}, "points"};
  double ir_vs_75 = 0, ir_vs_50 = 0;
  for (size_t d = 0; d < ir.size(); ++d) {
    const double pos = double(d) / 16 - 8;
    if (std::fabs(pos) > 2.5) continue;
    meas.x.push_back(pos), meas.y.push_back(ir[d]);
    ir_vs_75 = std::max(ir_vs_75, std::fabs(ir[d] - cubic(pos, -0.75)));
    ir_vs_50 = std::max(ir_vs_50, std::fabs(ir[d] - cubic(pos, -0.5)));
  }
  for (int i = -250; i <= 250; ++i) {
    const double d = i / 100.0;
    k75.x.push_back(d), k75.y.push_back(cubic(d, -0.75));
    k50.x.push_back(d), k50.y.push_back(cubic(d, -0.5));
    tri.x.push_back(d), tri.y.push_back(triangle(d));
  }
  PlotOptions ko;
  ko.title = "Interpolation kernels";
  ko.xlabel = "distance d (pixels)";
  ko.ylabel = "W(d)";
  ko.extra = {"set key top right"};
  page.line_plot("kernels", ko, {k75, k50, tri, meas});
  page.text("The reference's impulse response lies on the A = -0.75 kernel (max deviation " + fmt(ir_vs_75, 2) +
            ") and not on A = -0.5 (max deviation " + fmt(ir_vs_50, 2) + "). A more negative A deepens the negative "
            "lobes on 1 < |d| < 2: W(1.5) = " + fmt(cubic(1.5, -0.75), 4) + " against " + fmt(cubic(1.5, -0.5), 4) + ".");

  // (2) Overshoot on a step edge, x16 with align_corners=True.
  std::vector<double> step(16, 0.0);
  std::fill(step.begin() + 8, step.end(), 1.0);
  const std::vector<double> s75_ref = ref_resample(ref, step, 241, "bicubic", true);
  const std::vector<double> s75 = bicubic_1d(step, 241, -0.75, true);
  const std::vector<double> s50 = bicubic_1d(step, 241, -0.5, true);
  const std::vector<double> lin = ref_resample(ref, step, 241, "bilinear", true);
  double local_check = 0;
  for (size_t i = 0; i < s75.size(); ++i) local_check = std::max(local_check, std::fabs(s75[i] - s75_ref[i]));
  if (local_check > 1e-12) throw std::runtime_error("the local bicubic does not reproduce the reference (" + fmt(local_check) + ")");
  const double over75 = *std::max_element(s75_ref.begin(), s75_ref.end()) - 1;
  const double under75 = -*std::min_element(s75_ref.begin(), s75_ref.end());
  const double over50 = *std::max_element(s50.begin(), s50.end()) - 1;
  const double under50 = -*std::min_element(s50.begin(), s50.end());
  Series e75{"bicubic A = -0.75 (reference)", {}, {}, "lines"}, e50{"bicubic A = -0.5", {}, {}, "lines"},
      el{"bilinear", {}, {}, "lines"};
  for (size_t i = 0; i < s75.size(); ++i) {
    const double src = double(i) / 16;
    if (src < 4 || src > 11) continue;
    e75.x.push_back(src), e75.y.push_back(s75_ref[i]);
    e50.x.push_back(src), e50.y.push_back(s50[i]);
    el.x.push_back(src), el.y.push_back(lin[i]);
  }
  PlotOptions eo;
  eo.title = "A unit step between samples 7 and 8, upsampled x16";
  eo.xlabel = "source coordinate";
  eo.ylabel = "value";
  eo.extra = {"set key top left", "set yrange [-0.15:1.15]"};
  page.line_plot("step_overshoot", eo, {e75, e50, el});
  page.text("On a unit step, A = -0.75 overshoots by " + fmt(over75, 3) + " and undershoots by " + fmt(under75, 3) +
            "; A = -0.5 by " + fmt(over50, 3) + " and " + fmt(under50, 3) + ". Bilinear never leaves [0, 1]. "
            "(The local bicubic used for A = -0.5 reproduces the reference with A = -0.75 to " + fmt(local_check, 2) + ".)");

  // (3) Frequency response magnitude.
  Series f75{"A = -0.75", {}, {}, "lines"}, f50{"A = -0.5", {}, {}, "lines"}, fl{"bilinear", {}, {}, "lines"};
  double peak75 = 0, peak50 = 0;
  for (int i = 0; i <= 150; ++i) {
    const double f = i / 100.0;
    const double h75 = std::fabs(response([](double d) { return cubic(d, -0.75); }, f));
    const double h50 = std::fabs(response([](double d) { return cubic(d, -0.5); }, f));
    const double hl = std::fabs(response(triangle, f));
    f75.x.push_back(f), f75.y.push_back(h75);
    f50.x.push_back(f), f50.y.push_back(h50);
    fl.x.push_back(f), fl.y.push_back(hl);
    peak75 = std::max(peak75, h75), peak50 = std::max(peak50, h50);
  }
  auto H = [](double f, double A) { return std::fabs(response([A](double d) { return cubic(d, A); }, f)); };
  const double h75_25 = H(0.25, -0.75), h50_25 = H(0.25, -0.5), hl_25 = std::fabs(response(triangle, 0.25));
  const double h75_50 = H(0.5, -0.75), h50_50 = H(0.5, -0.5), hl_50 = std::fabs(response(triangle, 0.5));
  const double h75_75 = H(0.75, -0.75), h50_75 = H(0.75, -0.5), hl_75 = std::fabs(response(triangle, 0.75));
  PlotOptions fo;
  fo.title = "Frequency response magnitude |H(f)| of the kernels";
  fo.xlabel = "frequency (cycles per input pixel; Nyquist = 0.5)";
  fo.ylabel = "|H(f)|";
  fo.extra = {"set key top right", "set arrow from 0.5, graph 0 to 0.5, graph 1 nohead dt 2"};
  page.line_plot("frequency_response", fo, {f75, f50, fl});
  page.table({"kernel", "|H(0.25)|", "|H(0.5)| (Nyquist)", "|H(0.75)| (aliases)", "peak |H|"},
             {{"bicubic A = -0.75", fmt(h75_25, 4), fmt(h75_50, 4), fmt(h75_75, 4), fmt(peak75, 4)},
              {"bicubic A = -0.5", fmt(h50_25, 4), fmt(h50_50, 4), fmt(h50_75, 4), fmt(peak50, 4)},
              {"bilinear", fmt(hl_25, 4), fmt(hl_50, 4), fmt(hl_75, 4), "1"}});
  page.text("In the pass band A = -0.75 lifts the response above A = -0.5 (at f = 0.25: " + fmt(h75_25, 3) + " against " +
            fmt(h50_25, 3) + ", peaking at " + fmt(peak75, 4) + ", above 1: a mild sharpening), while at Nyquist both give " +
            fmt(h75_50, 3) + " (the A terms cancel there). Past Nyquist, where the response lets through what will alias, "
            "the two read " + fmt(h75_75, 3) + " and " + fmt(h50_75, 3) + " at f = 0.75. Bilinear (sinc²) is softer everywhere "
            "in the pass band.");

  // (4) Where bicubic departs from bilinear: x4 upsampling (align_corners=False) of three signals.
  const int64_t in = 16, out = 64;
  struct Signal {
    std::string name;
    std::function<double(double)> f;
  };
  const std::vector<Signal> signals = {{"ramp x", [](double x) { return x; }},
                                       {"quadratic (x/4)^2", [](double x) { return (x / 4) * (x / 4); }},
                                       {"step at 7.5", [](double x) { return x < 7.5 ? 0.0 : 1.0; }}};
  std::vector<Series> diffs;
  std::vector<std::vector<std::string>> rows;
  json dep = json::object();
  for (const auto& s : signals) {
    std::vector<double> x(static_cast<size_t>(in), 0.0);
    for (int64_t i = 0; i < in; ++i) x[size_t(i)] = s.f(double(i));
    const auto cub = ref_resample(ref, x, out, "bicubic", false);
    const auto bil = ref_resample(ref, x, out, "bilinear", false);
    const auto cub50 = bicubic_1d(x, out, -0.5, false);
    Series d{s.name, {}, {}, "lines"};
    double interior = 0, edge = 0, interior50 = 0;
    for (int64_t j = 0; j < out; ++j) {
      const double src = (double(j) + 0.5) * double(in) / double(out) - 0.5;
      const double e = cub[size_t(j)] - bil[size_t(j)];
      d.x.push_back(src), d.y.push_back(e);
      // Interior: all four bicubic taps inside the image and bilinear's source not clamped.
      const bool inside = std::floor(src) - 1 >= 0 && std::floor(src) + 2 <= double(in - 1);
      (inside ? interior : edge) = std::max(inside ? interior : edge, std::fabs(e));
      if (inside) interior50 = std::max(interior50, std::fabs(cub50[size_t(j)] - bil[size_t(j)]));
    }
    diffs.push_back(d);
    rows.push_back({s.name, fmt(interior, 3), fmt(edge, 3), fmt(interior50, 3)});
    dep[s.name] = {{"interior", interior}, {"edge", edge}, {"interior_A=-0.5", interior50}};
  }
  PlotOptions dopt;
  dopt.title = "bicubic - bilinear, 16 -> 64, align_corners=False";
  dopt.xlabel = "source coordinate";
  dopt.ylabel = "difference";
  dopt.extra = {"set key bottom left"};
  page.line_plot("bicubic_minus_bilinear", dopt, diffs);
  page.table({"signal", "max |bicubic - bilinear|, interior", "near an edge (a bicubic tap clamped)",
              "interior, with A = -0.5 instead"},
             rows);
  page.text("Bilinear reproduces a straight line, and so does cubic convolution with A = -0.5 (Keys' choice, the one "
            "with third-order accuracy), but not with A = -0.75: its weights have the right sum but not the right first "
            "moment, so PyTorch's bicubic bends a ramp between samples by up to " +
            fmt(dep["ramp x"]["interior"].get<double>(), 3) + " per unit slope inside the image (A = -0.5: " +
            fmt(dep["ramp x"]["interior_A=-0.5"].get<double>(), 2) + "). Near the edges bicubic also replicates the edge "
            "sample into its outer taps while bilinear clamps its coordinate. On curvature (the quadratic) the two differ "
            "everywhere, and at a step bicubic rings.");

  page.number("impulse_vs_A075_max_dev", ir_vs_75);
  page.number("impulse_vs_A050_max_dev", ir_vs_50);
  page.number("step_overshoot", {{"A=-0.75", over75}, {"A=-0.5", over50}});
  page.number("step_undershoot", {{"A=-0.75", under75}, {"A=-0.5", under50}});
  page.number("H_at_0.25", {{"A=-0.75", h75_25}, {"A=-0.5", h50_25}, {"bilinear", hl_25}});
  page.number("H_at_0.5", {{"A=-0.75", h75_50}, {"A=-0.5", h50_50}, {"bilinear", hl_50}});
  page.number("H_at_0.75", {{"A=-0.75", h75_75}, {"A=-0.5", h50_75}, {"bilinear", hl_75}});
  page.number("H_peak", {{"A=-0.75", peak75}, {"A=-0.5", peak50}});
  page.number("bicubic_minus_bilinear", dep);
  page.answer("A = -0.75 overshoots a unit step by " + fmt(over75, 3) + " (A = -0.5: " + fmt(over50, 3) +
              "), lifts the pass band (|H(0.25)| " + fmt(h75_25, 3) + " vs " + fmt(h50_25, 3) + ", peak " + fmt(peak75, 4) +
              ") with the same Nyquist gain " + fmt(h75_50, 3) + " (bilinear " + fmt(hl_50, 3) +
              "), and, unlike A = -0.5, does not reproduce straight lines: on a ramp it departs from bilinear by " +
              fmt(dep["ramp x"]["interior"].get<double>(), 3) + " inside the image (A = -0.5: " +
              fmt(dep["ramp x"]["interior_A=-0.5"].get<double>(), 2) + ") and by " + fmt(dep["ramp x"]["edge"].get<double>(), 3) +
              " at the edges.");
}

}  // namespace
}  // namespace oplab::nb

int main(int argc, char** argv) {
  return oplab::nb::run_notebook(
      argc, argv, "bicubic_a", "Bicubic: A = -0.75 against A = -0.5, and against bilinear",
      "What does PyTorch's bicubic constant A = -0.75 change against Keys' A = -0.5 (kernel, overshoot on a step, "
      "frequency response), and where does bicubic depart from bilinear?",
      oplab::nb::body);
}
