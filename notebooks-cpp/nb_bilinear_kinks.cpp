// Notebook bilinear_kinks: where bilinear sampling is not differentiable along a coordinate (the
// range cut-offs y = -1 and y = H, the edge rows y = 0 and y = H-1, and every integer lattice
// line in between), and which one-sided derivative each backend's gradient returns there.
//
// Two rules are studied, through the ops that take a gradient with respect to a coordinate:
//  * deform_conv2d (SPEC §2's rule B: corners outside the image read 0, the value fades to 0 at
//    y = -1 and y = H): d/d(offset y) of one sample.
//  * deform_roi_pool (SPEC §4's RoIAlign rule: the edge is replicated within one pixel, the value
//    jumps to 0 beyond y < -1 and y > H): d/d(offset y) of a 1 x 1 bin holding one sample,
//    divided by gamma * roi height to give d/dy.
// For every backend that can evaluate the backward, the gradient at each point is compared with
// left and right finite differences of that backend's own forward (step h = 1e-3, shorter than
// the distance to the next kink, so both sides are exact slopes of the piecewise-linear value).
#include <cmath>
#include <random>

#include "cli/builtin_backends.h"
#include "notebooks-cpp/page.h"

namespace oplab::nb {
namespace {

constexpr int64_t kH = 4;       // image rows: kinks at -1, 0, 1, 2, 3, 4
constexpr double kX = 1.3;      // every sample's column: between lattice lines
constexpr double kStep = 1e-3;  // finite-difference step
constexpr double kGamma = 0.1;

// The backends studied (study and seeded-bug variants of other ops stay out of the page).
const std::vector<std::string> kBackends = {"ref", "torchvision", "halide-cpu", "halide-cuda", "halide-opencl", "dcn-4uiiurz1", "drp-mmcv-grad"};

// An H x W image whose columns repeat with period 8, so that cases of different widths (a case's
// width follows its number of points) read the same pixel values around x = kX.
Tensor image(int64_t W) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  double base[kH][8];
  for (auto& row : base)
    for (double& v : row) v = u(rng);
  Tensor t({1, 1, kH, W});
  for (int64_t y = 0; y < kH; ++y)
    for (int64_t x = 0; x < W; ++x) t.at(0, 0, y, x) = base[y][x % 8];
  return t;
}

// deform_conv2d, 3 x 3 kernel, padding 0, only the centre tap weighted: output (0, ox) samples
// (1 + Δy, ox + 1 + Δx), so Δy = y - 1 and Δx = kX - ox - 1 put point ox at (y, kX).
Case dcn_points(const std::vector<double>& ys, bool with_grad) {
  const int64_t n = int64_t(ys.size()), W = n + 2;
  Case c;
  c.op = "deform_conv2d";
  c.params = json{{"stride", {1, 1}}, {"padding", {0, 0}}, {"dilation", {1, 1}}};
  c.inputs["input"] = image(W);
  Tensor w({1, 1, 3, 3});
  w.at(0, 0, 1, 1) = 1;
  c.inputs["weight"] = w;
  Tensor off({1, 18, kH - 2, n});
  for (int64_t ox = 0; ox < n; ++ox) {
    off.at(0, 8, 0, ox) = ys[size_t(ox)] - 1;  // tap 4 (the centre), Δy
    off.at(0, 9, 0, ox) = kX - double(ox) - 1;  // Δx
  }
  c.inputs["offset"] = off;
  if (with_grad) c.grad_output = Tensor({1, 1, kH - 2, n}, 1.0);
  return c;
}

// deform_roi_pool: one 1 x 1 bin per point, roi [0, kX, y, kX + 1, y + 1] (aligned, scale 1,
// sampling_ratio 1): its one sample sits at (y, kX); offset channel 1 moves it by gamma * 1 * off.
Case drp_points(const std::vector<double>& ys, bool with_grad) {
  const int64_t n = int64_t(ys.size());
  Case c;
  c.op = "deform_roi_pool";
  c.params = json{{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", 1}, {"gamma", kGamma}};
  c.inputs["input"] = image(6);
  Tensor rois({n, 5});
  for (int64_t k = 0; k < n; ++k)
    rois.at(k, 0) = 0, rois.at(k, 1) = kX, rois.at(k, 2) = ys[size_t(k)], rois.at(k, 3) = kX + 1, rois.at(k, 4) = ys[size_t(k)] + 1;
  c.inputs["rois"] = rois;
  c.inputs["offset"] = Tensor({n, 2, 1, 1});
  if (with_grad) c.grad_output = Tensor({n, 1, 1, 1}, 1.0);
  return c;
}

struct Op {
  std::string name, rule;
  Case (*points)(const std::vector<double>&, bool);
  std::vector<double> kinks;
};

// Values f(y) and gradients df/dy of `b` at every y; empty when `b` cannot evaluate them.
struct Eval {
  std::vector<double> value, grad;
};
std::optional<Eval> evaluate_points(Backend& b, const Op& op, const std::vector<double>& ys, bool with_grad, std::string* why) {
  const auto r = try_evaluate(b, op.points(ys, with_grad), why);
  if (!r) return std::nullopt;
  Eval e;
  const Tensor& out = r->outputs.at("output");
  for (size_t k = 0; k < ys.size(); ++k) {
    if (op.name == "deform_conv2d") {
      e.value.push_back(out.at(0, 0, 0, int64_t(k)));
      if (with_grad) e.grad.push_back(r->grads.at("offset").at(0, 8, 0, int64_t(k)));
    } else {
      e.value.push_back(out.at(int64_t(k), 0, 0, 0));
      if (with_grad) e.grad.push_back(r->grads.at("offset").at(int64_t(k), 1, 0, 0) / kGamma);  // roi height 1
    }
  }
  return e;
}

std::string side_of(double g, double left, double right, double tol) {
  auto near = [&](double a, double b) { return std::fabs(a - b) <= tol * (1 + std::fabs(b)); };
  const bool l = near(g, left), r = near(g, right);
  if (l && r) return "both (smooth)";
  if (r) return "right";
  if (l) return "left";
  return "neither";
}

void body(Page& page) {
  Registry& reg = builtin_backends();
  const std::vector<double> kinks = {-1, 0, 1, 2, double(kH - 1), double(kH), 1.5};
  const std::vector<Op> ops = {{"deform_conv2d", "rule B: corners outside read 0", dcn_points, kinks},
                               {"deform_roi_pool", "RoIAlign rule: edge replicated, 0 beyond", drp_points, kinks}};
  std::vector<double> dense;
  for (int i = -150; i <= 100 * kH + 50; ++i) dense.push_back(double(i) / 100.0);

  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;
  json numbers = json::object();
  std::vector<std::string> answer_parts;
  for (const Op& op : ops) {
    std::vector<Series> curves;
    json per_backend = json::object();
    for (const std::string& name : kBackends) {
      Backend* b = reg.find(name);
      if (!b) continue;
      std::string why;
      const auto curve = evaluate_points(*b, op, dense, true, &why);
      if (!curve) {
        notes.push_back(op.name + " on " + name + ": " + why);
        continue;
      }
      if (name == "ref") curves.push_back({"value f(y), ref", dense, curve->value, "lines"});
      // Dashed differently per backend: where two backends agree their curves lie on each other.
      curves.push_back({"df/dy, " + name, dense, curve->grad, "lines dt " + std::to_string(curves.size() + 1)});

      // Kinks: f(y - h), f(y), f(y + h) and the gradient at y.
      std::vector<double> ys;
      for (double y : op.kinks) ys.insert(ys.end(), {y - kStep, y, y + kStep});
      const auto f = evaluate_points(*b, op, ys, false, &why);
      const auto g = evaluate_points(*b, op, op.kinks, true, &why);
      if (!f || !g) {
        notes.push_back(op.name + " on " + name + ": " + why);
        continue;
      }
      const double tol = b->is_float32() ? 2e-3 : 1e-6;
      std::string sides;
      json pts = json::array();
      for (size_t k = 0; k < op.kinks.size(); ++k) {
        const double fl = f->value[3 * k], f0 = f->value[3 * k + 1], fr = f->value[3 * k + 2];
        const double left = (f0 - fl) / kStep, right = (fr - f0) / kStep, grad = g->grad[k];
        const std::string side = side_of(grad, left, right, tol);
        rows.push_back({op.name, name, fmt(op.kinks[k]), fmt(f0, 4), fmt(left, 4), fmt(right, 4), fmt(grad, 4), side});
        pts.push_back({{"y", op.kinks[k]}, {"value", f0}, {"fd_left", left}, {"fd_right", right}, {"grad", grad}, {"side", side}});
        if (op.kinks[k] != 1.5) sides += (sides.empty() ? "" : " ") + fmt(op.kinks[k]) + ":" + side.substr(0, side.find(' '));
      }
      per_backend[name] = pts;
      answer_parts.push_back(op.name + "/" + name + " [" + sides + "]");
    }
    numbers[op.name] = per_backend;
    PlotOptions o;
    o.title = op.name + " (" + op.rule + "): value and df/dy of one sample at x = 1.3, H = 4";
    o.xlabel = "sample row y";
    o.ylabel = "value / derivative";
    o.height = 520;
    o.extra = {"set key outside bottom center horizontal font ',10'"};
    for (double y : op.kinks)
      if (y != 1.5) o.extra.push_back("set arrow from " + fmt(y) + ", graph 0 to " + fmt(y) + ", graph 1 nohead dt 3 lc rgb 'gray'");
    page.line_plot("kinks_" + op.name, o, curves);
  }
  page.table({"op", "backend", "y", "f(y)", "FD left", "FD right", "gradient", "gradient matches"}, rows);
  page.text("FD left = (f(y) - f(y - h)) / h and FD right = (f(y + h) - f(y)) / h with h = 1e-3, each on the backend's "
            "own forward; y = 1.5 is a smooth control point. Under rule B (deform_conv2d) the value is continuous and "
            "fades to 0 at y = -1 and y = H; every integer is a kink. Under the RoIAlign rule (deform_roi_pool) the value "
            "is flat on [-1, 0] and on [H-1, H], and jumps to 0 beyond -1 and H, so the one-sided slopes at -1 and H are "
            "of order f/h on the outer side. The project's convention (docs/semantics.md) is the right-sided derivative "
            "where the value is continuous; at a jump there is no slope on the outer side and the reference returns the "
            "inner side's, 0.");
  if (!notes.empty()) {
    std::string md = "**Backends not shown:**\n";
    for (const auto& n : notes) md += "\n* " + n;
    page.text(md);
  }
  for (auto& [k, v] : numbers.items()) page.number(k, v);
  page.number("not_shown", notes);
  std::string answer = "Non-differentiable at y = -1, 0, 1, 2, H-1 = 3, H = 4; the gradient returned there (per kink, matching side): ";
  for (size_t i = 0; i < answer_parts.size(); ++i) answer += (i ? "; " : "") + answer_parts[i];
  page.answer(answer + ".");
}

}  // namespace
}  // namespace oplab::nb

int main(int argc, char** argv) {
  return oplab::nb::run_notebook(
      argc, argv, "bilinear_kinks", "Bilinear sampling at its kinks: which derivative each backend returns",
      "Where is bilinear sampling not differentiable along a coordinate (y = -1, 0, H-1, H and the integer lattice), "
      "and which one-sided derivative does each backend's gradient take there?",
      oplab::nb::body);
}
