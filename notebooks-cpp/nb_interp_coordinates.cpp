// Notebook interp_coordinates: where each interpolate mode reads its source (source coordinate
// against destination index, with and without align_corners), PyTorch's two CPU shortcuts that
// ignore the formula (same size -> copy, nearest 2x -> dst >> 1), measured against the torchvision
// backend when it can run, and OpenCV's rounding of the output size against PyTorch's floor.
//
// The source coordinate is read from the op itself: on a ramp X[.., x] = x, linear modes return
// the (clamped) source coordinate, nearest modes the source index, area the centre of its bin.
#include <cmath>

#include "cli/builtin_backends.h"
#include "notebooks-cpp/page.h"

namespace oplab::nb {
namespace {

// A ramp along the last axis of `shape`.
Tensor ramp(const Shape& shape) {
  Tensor t(shape);
  const int64_t W = shape.back();
  for (int64_t i = 0; i < t.numel(); ++i) t.data[size_t(i)] = double(i % W);
  return t;
}

Case interp(const Tensor& input, const std::string& mode, const json& size, const json& sf, const json& align_corners) {
  Case c;
  c.op = "interpolate";
  c.params = json{{"mode", mode}, {"align_corners", align_corners}};
  if (!size.is_null()) c.params["size"] = size;
  if (!sf.is_null()) c.params["scale_factor"] = sf;
  c.inputs["input"] = input;
  return c;
}

struct Mode {
  std::string label, mode;
  json align_corners;
};

// Source coordinate against destination index for every mode, in -> out along W.
std::vector<Series> mappings(Backend& ref, int64_t in, int64_t out) {
  const std::vector<Mode> modes = {{"nearest", "nearest", nullptr},
                                   {"nearest-exact", "nearest-exact", nullptr},
                                   {"bilinear, align_corners=False", "bilinear", false},
                                   {"bilinear, align_corners=True", "bilinear", true},
                                   {"bicubic, align_corners=False", "bicubic", false},
                                   {"area", "area", nullptr}};
  std::vector<Series> all;
  const Tensor x = ramp({1, 1, 1, in});
  for (const auto& m : modes) {
    const Tensor y = evaluate(ref, interp(x, m.mode, {1, out}, nullptr, m.align_corners)).outputs.at("output");
    Series s{m.label, {}, {}, "linespoints"};
    for (int64_t d = 0; d < out; ++d) s.x.push_back(double(d)), s.y.push_back(y.at(0, 0, 0, d));
    all.push_back(s);
  }
  Series formula{"half-pixel formula (dst + 0.5) in/out - 0.5, unclamped", {}, {}, "lines"};
  for (int64_t d = 0; d < out; ++d)
    formula.x.push_back(double(d)), formula.y.push_back((double(d) + 0.5) * double(in) / double(out) - 0.5);
  all.push_back(formula);
  return all;
}

std::string row_of(const Tensor& t) {
  std::string s;
  const int64_t W = t.shape.back();
  for (int64_t x = 0; x < W; ++x) s += (x ? " " : "") + fmt(t.data[size_t(x)], 3);
  return s;
}

void body(Page& page) {
  Registry& reg = builtin_backends();
  Backend& ref = *reg.find("ref");

  // (1) Mappings.
  PlotOptions up;
  up.title = "Source coordinate read by each mode, 5 -> 12 (measured on a ramp)";
  up.xlabel = "destination index";
  up.ylabel = "source coordinate";
  up.extra = {"set key top left font ',10'"};
  page.line_plot("mapping_up_5_to_12", up, mappings(ref, 5, 12));
  PlotOptions down = up;
  down.title = "Source coordinate read by each mode, 12 -> 5 (measured on a ramp)";
  page.line_plot("mapping_down_12_to_5", down, mappings(ref, 12, 5));
  page.text("align_corners=True pins the corner pixels' centres together: scale (in-1)/(out-1), source = scale·dst, "
            "so 0 and in-1 are hit exactly. align_corners=False maps pixel areas: source = (dst+0.5)·in/out - 0.5, "
            "which goes below 0 at the first outputs when upsampling; linear modes clamp it to 0 (the flat start "
            "of the bilinear curve), bicubic does not clamp the coordinate but its taps (edge replication), nearest "
            "takes floor(dst·in/out) (the top-left convention: it is never centred), nearest-exact "
            "floor((dst+0.5)·in/out) (centred), area the centre of its integer bin [floor(a·in/out), ceil((a+1)·in/out)).");

  // (2) PyTorch's shortcuts against the formula.
  Backend* tv = reg.find("torchvision");
  std::string tv_why;
  if (tv) {
    if (auto why = tv->unavailable_reason()) tv_why = *why, tv = nullptr;
  } else {
    tv_why = "the torchvision backend is not built in";
  }
  struct Probe {
    std::string what;
    Shape shape;
    std::string mode;
    json sf, align_corners;
  };
  const std::vector<Probe> probes = {
      {"nearest 5x5, sf 1.1 (out 5 = in)", {1, 1, 5, 5}, "nearest", 1.1, nullptr},
      {"bilinear 5x5, sf 1.1 (out 5 = in)", {1, 1, 5, 5}, "bilinear", 1.1, false},
      {"bicubic 5x5, sf 1.1 (both axes keep size)", {1, 1, 5, 5}, "bicubic", 1.1, false},
      {"bicubic 7x5, sf (1.5, 1.1) (only W keeps size)", {1, 1, 7, 5}, "bicubic", json{1.5, 1.1}, false},
      {"nearest 5x5, sf 2.1 (out 10 = 2 in)", {1, 1, 5, 5}, "nearest", 2.1, nullptr},
      {"nearest 1-D 5, sf 2.1 (out 10 = 2 in)", {1, 1, 5}, "nearest", 2.1, nullptr}};
  std::vector<std::vector<std::string>> rows;
  int shortcuts_seen = 0, probes_run = 0;
  json probe_numbers = json::array();
  for (const auto& p : probes) {
    const Case c = interp(ramp(p.shape), p.mode, nullptr, p.sf, p.align_corners);
    const Tensor r = evaluate(ref, c).outputs.at("output");
    std::string tv_row = "(" + tv_why + ")", diff = "-";
    if (tv) {
      std::string why;
      if (auto got = try_evaluate(*tv, c, &why)) {
        const Tensor& t = got->outputs.at("output");
        const double d = max_abs_diff(r, t);
        tv_row = row_of(t);
        diff = fmt(d, 3);
        ++probes_run;
        if (d > 1e-9) ++shortcuts_seen;
        probe_numbers.push_back({{"case", p.what}, {"ref_row0", row_of(r)}, {"torchvision_row0", tv_row}, {"max_abs_diff", d}});
      } else {
        tv_row = "(" + why + ")";
      }
    }
    rows.push_back({p.what, row_of(r), tv_row, diff});
  }
  page.table({"case (input = column index)", "ref (the formula), first row", "torchvision, first row", "max |tv - ref|"}, rows);
  page.text("On this ramp a row reading 0 1 2 3 4 is a copy, and 0 0 1 1 2 2 ... is dst >> 1. PyTorch's CPU forward "
            "kernels copy an axis whose output size equals its input size (nearest and linear modes), and 2-D nearest with "
            "out = 2·in uses dst >> 1, whatever the scale factor says; bicubic's forward and 1-D nearest's forward follow "
            "the formula (their backward kernels take the shortcuts, docs/semantics.md). The reference follows the formula "
            "(SPEC §6); the project names these divergences interp-same-size-copy and interp-nearest-2x-shift.");

  // (3) Output size: PyTorch's floor against OpenCV's rounding (cvRound, half to even).
  const std::vector<double> sfs = {1.5, 1.3, 0.75, 2.5};
  std::vector<std::vector<std::string>> size_rows;
  json size_numbers = json::object();
  Series d_floor{"PyTorch: floor(in * sf) - in * sf", {}, {}, "linespoints"}, d_round{"OpenCV: cvRound(in * sf) - in * sf", {}, {}, "linespoints"};
  for (double sf : sfs) {
    int differ = 0;
    std::string first;
    for (int64_t in = 1; in <= 32; ++in) {
      const Case c = interp(ramp({1, 1, in}), "linear", nullptr, sf, false);
      std::string why;
      const auto r = try_evaluate(ref, c, &why);
      const int64_t torch_out = r ? r->outputs.at("output").shape.back() : 0;  // 0: PyTorch refuses (out < 1)
      const int64_t cv_out = int64_t(std::nearbyint(double(in) * sf));
      if (torch_out != cv_out) {
        ++differ;
        if (first.empty()) first = "in " + std::to_string(in) + ": " + std::to_string(torch_out) + " vs " + std::to_string(cv_out);
      }
      if (sf == 1.5) {
        d_floor.x.push_back(double(in)), d_floor.y.push_back(double(torch_out) - double(in) * sf);
        d_round.x.push_back(double(in)), d_round.y.push_back(double(cv_out) - double(in) * sf);
      }
    }
    size_rows.push_back({fmt(sf), std::to_string(differ) + " / 32", first.empty() ? "-" : first});
    size_numbers[fmt(sf)] = differ;
  }
  PlotOptions so;
  so.title = "Output size against in * sf, sf = 1.5";
  so.xlabel = "input size";
  so.ylabel = "output size - in * sf";
  so.extra = {"set yrange [-1.2:0.8]", "set key bottom left"};
  page.line_plot("output_size_rounding", so, {d_floor, d_round});
  page.table({"scale factor", "input sizes 1..32 where PyTorch and OpenCV disagree", "first disagreement (PyTorch vs OpenCV)"}, size_rows);
  page.text("PyTorch floors in·sf (in double); OpenCV's cv::resize with fx rounds it (cvRound), so every input whose "
            "product has a fractional part above one half gets one more output pixel in OpenCV (W = 5, "
            "sf = 1.5: 7 against 8). cvRound rounds an exact half to even, so 2.5 gives 2 and 7.5 gives 8.");

  const Tensor w5 = evaluate(ref, interp(ramp({1, 1, 5}), "linear", nullptr, 1.5, false)).outputs.at("output");
  page.number("shortcut_probes_run_on_torchvision", probes_run);
  page.number("shortcut_probes_differing_from_formula", shortcuts_seen);
  page.number("shortcut_probes", probe_numbers);
  page.number("torchvision", tv ? "available" : tv_why);
  page.number("size_disagreements_per_sf", size_numbers);
  page.number("pytorch_out_W5_sf1.5", w5.shape.back());
  page.answer(std::string("align_corners=False reads (dst+0.5)·in/out - 0.5 (clamped at 0 for linear modes), True reads dst·(in-1)/(out-1); ") +
              (tv ? "torchvision departs from the formula in " + std::to_string(shortcuts_seen) + " of " + std::to_string(probes_run) +
                        " shortcut probes (same-size copy, nearest dst>>1)"
                  : "the shortcuts could not be measured (" + tv_why + ")") +
              "; W = 5, sf = 1.5 gives " + std::to_string(w5.shape.back()) + " outputs in PyTorch and " +
              std::to_string(int64_t(std::nearbyint(5 * 1.5))) + " in OpenCV, and floor vs round disagree for " +
              std::to_string(size_numbers["1.5"].get<int>()) + " of 32 input sizes at sf = 1.5.");
}

}  // namespace
}  // namespace oplab::nb

int main(int argc, char** argv) {
  return oplab::nb::run_notebook(
      argc, argv, "interp_coordinates", "Interpolation coordinates, align_corners and PyTorch's shortcuts",
      "Where does each interpolate mode read its source, what does align_corners change, where do PyTorch's "
      "same-size and nearest-2x shortcuts leave the formula, and how does OpenCV's rounding of the output size differ?",
      oplab::nb::body);
}
