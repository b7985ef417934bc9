// Notebook dcn_variants: where the two DCN study variants of the seed articles part from
// torchvision (the reference, which the project holds equal to torchvision to 1e-10), mapped
// over offset magnitude x kernel size x padding; and what materialising the [N, C, Ho*kh, Wo*kw]
// tensor costs in memory against a fused kernel.
#include <algorithm>
#include <cmath>
#include <random>

#include "cli/builtin_backends.h"
#include "notebooks-cpp/page.h"

namespace oplab::nb {
namespace {

const std::vector<double> kMagnitudes = {0, 0.25, 0.5, 1, 2, 4, 8};
const std::vector<int64_t> kKernels = {1, 2, 3, 4, 5};
const std::vector<int64_t> kPaddings = {0, 1, 2};
constexpr int kCasesPerCell = 4;

// A random deform_conv2d case: 1 x 2 x 7 x 7 input, 2 output channels, k x k kernel, stride 1,
// offsets uniform in [-mag, mag], a mask on every other case.
Case random_case(std::mt19937_64& rng, int64_t k, int64_t pad, double mag, bool with_mask) {
  const int64_t N = 1, C = 2, Co = 2, H = 7, W = 7, K = k * k;
  const int64_t Ho = H + 2 * pad - k + 1, Wo = W + 2 * pad - k + 1;
  std::uniform_real_distribution<double> unit(-1, 1), u01(0, 1);
  auto filled = [&](Shape s, auto& dist, double scale) {
    Tensor t(std::move(s));
    for (double& v : t.data) v = scale * dist(rng);
    return t;
  };
  Case c;
  c.op = "deform_conv2d";
  c.params = json{{"stride", {1, 1}}, {"padding", {pad, pad}}, {"dilation", {1, 1}}};
  c.inputs["input"] = filled({N, C, H, W}, unit, 1.0);
  c.inputs["weight"] = filled({Co, C, k, k}, unit, 1.0);
  c.inputs["offset"] = filled({N, 2 * K, Ho, Wo}, unit, mag);
  if (with_mask) c.inputs["mask"] = filled({N, K, Ho, Wo}, u01, 1.0);
  return c;
}

struct Shape4 {
  const char* name;
  int64_t N, C, H, W, Co, k;
};

// Bytes (float32) of the buffers a fused kernel reads and writes, and of the materialised
// tensor T[N, C, Ho*k, Wo*k]. Stride 1 and "same" padding, so Ho = H, Wo = W.
struct Memory {
  double fused = 0, T = 0;
};
Memory memory_of(const Shape4& s) {
  const double K = double(s.k * s.k), HoWo = double(s.H * s.W);
  Memory m;
  const double input = double(s.N * s.C) * double(s.H * s.W);
  const double offset = double(s.N) * 2 * K * HoWo, mask = double(s.N) * K * HoWo;
  const double weight = double(s.Co * s.C) * K, output = double(s.N * s.Co) * HoWo;
  m.fused = 4 * (input + offset + mask + weight + output);
  m.T = 4 * double(s.N * s.C) * K * HoWo;
  return m;
}

std::string joined(const json& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n.get<std::string>();
  return s.empty() ? "no (k, padding)" : s;
}

std::string mib(double bytes) { return fmt(bytes / (1024.0 * 1024.0), 3) + " MiB"; }

void body(Page& page) {
  Registry& reg = builtin_backends();
  Backend* ref = reg.find("ref");
  const std::vector<std::string> variants = {"dcn-4uiiurz1", "dcn-onnx"};

  std::vector<std::string> col_labels, row_labels;
  for (double m : kMagnitudes) col_labels.push_back("|off|<=" + fmt(m));
  for (int64_t k : kKernels)
    for (int64_t p : kPaddings) row_labels.push_back("k=" + std::to_string(k) + " pad=" + std::to_string(p));

  json numbers = json::object();
  std::vector<std::vector<std::string>> summary_rows;
  for (const std::string& vname : variants) {
    Backend* v = reg.find(vname);
    if (!v) throw std::runtime_error("backend " + vname + " is not built in");
    std::mt19937_64 rng(1234);  // the same cases for both variants
    std::vector<std::vector<double>> grid;
    double worst_equal = 0, worst_any = 0;
    int cells_equal = 0;
    std::vector<std::string> equal_cells;
    for (int64_t k : kKernels)
      for (int64_t pad : kPaddings) {
        std::vector<double> row;
        for (double mag : kMagnitudes) {
          double worst = 0;
          for (int t = 0; t < kCasesPerCell; ++t) {
            const Case c = random_case(rng, k, pad, mag, t % 2 == 1);
            std::string why;
            const auto want = try_evaluate(*ref, c, &why);
            const auto got = try_evaluate(*v, c, &why);
            if (!want || !got) throw std::runtime_error(vname + ": " + why);
            const Tensor& r = want->outputs.at("output");
            worst = std::max(worst, max_abs_diff(r, got->outputs.at("output")) / std::max(max_abs(r), 1e-300));
          }
          row.push_back(worst);
          worst_any = std::max(worst_any, worst);
          if (worst <= 1e-12) {
            ++cells_equal;
            worst_equal = std::max(worst_equal, worst);
          }
        }
        // A (k, pad) row is "equal" when every magnitude agrees to rounding.
        if (*std::max_element(row.begin(), row.end()) <= 1e-12)
          equal_cells.push_back("k=" + std::to_string(k) + "/pad=" + std::to_string(pad));
        grid.push_back(row);
      }
    PlotOptions opt;
    opt.title = vname + " vs ref: max |variant - ref| / max |ref| (" + std::to_string(kCasesPerCell) + " random cases per cell)";
    opt.xlabel = "offset magnitude";
    opt.ylabel = "kernel size, padding";
    opt.height = 620;
    page.heatmap(vname == "dcn-onnx" ? "map_onnx" : "map_4uiiurz1", opt, col_labels, row_labels, grid, "relative difference",
                 /*log10=*/true);
    std::string eq;
    for (const auto& e : equal_cells) eq += (eq.empty() ? "" : ", ") + e;
    numbers[vname] = {{"cells", int(grid.size() * kMagnitudes.size())},
                      {"cells_equal_1e-12", cells_equal},
                      {"max_relative_difference", worst_any},
                      {"rows_equal_at_every_magnitude", equal_cells}};
    summary_rows.push_back({vname, std::to_string(cells_equal) + " / " + std::to_string(grid.size() * kMagnitudes.size()),
                            fmt(worst_any), eq.empty() ? "none" : eq});
  }
  page.table({"variant", "cells equal to ref (<= 1e-12)", "largest relative difference", "(k, padding) equal at every magnitude"},
             summary_rows);
  page.text(
      "Each cell is the worst of " + std::to_string(kCasesPerCell) +
      " random cases (input 1x2x7x7, 2 output channels, stride 1, offsets uniform in [-m, m], a mask on half "
      "of them), measured as max |variant - ref| divided by max |ref|. Cells at 1e-17 are bit-equal.\n\n"
      "* `dcn-onnx` pads by p + [p == 0] and Clips every corner into the padded image; a clipped corner always "
      "lands on a zero border, which is exactly SPEC §2's per-corner zero rule, so it is torchvision to rounding "
      "everywhere.\n"
      "* `dcn-4uiiurz1` starts p_0 at 1 and p_n at -(k-1)//2: the taps land where torchvision's do only for "
      "k = 2 and 3 (for k = 1 every tap sits one pixel further down and right, for k = 4 and 5 one pixel up and left, "
      "already at zero offset). With padding 0 "
      "its clamp reads the image border twice (y = -0.5 gives 2·X[0,x] instead of 0.5·X[0,x], and even a "
      "zero offset landing exactly on the last row doubles it), so the k = 2, 3 rows differ at padding 0 and "
      "agree from padding 1 on, where the clamped border is a zero row.");

  // Memory: the materialised tensor against a fused kernel.
  const std::vector<Shape4> shapes = {{"N1 C64 56x56 k3", 1, 64, 56, 56, 64, 3},
                                      {"N8 C64 56x56 k3", 8, 64, 56, 56, 64, 3},
                                      {"N4 C128 64x64 k3", 4, 128, 64, 64, 128, 3},
                                      {"N8 C64 56x56 k5", 8, 64, 56, 56, 64, 5},
                                      {"N8 C256 56x56 k7", 8, 256, 56, 56, 256, 7}};
  std::vector<std::vector<std::string>> mem_rows;
  json mem = json::array();
  for (const auto& s : shapes) {
    const Memory m = memory_of(s);
    mem_rows.push_back({s.name, mib(m.fused), mib(m.T), fmt((m.fused + m.T) / m.fused), mib(5 * m.T),
                        fmt((m.fused + 5 * m.T) / m.fused)});
    mem.push_back({{"shape", s.name}, {"fused_bytes", m.fused}, {"T_bytes", m.T}, {"ratio_with_T", (m.fused + m.T) / m.fused},
                   {"ratio_with_5T", (m.fused + 5 * m.T) / m.fused}});
  }
  numbers["memory"] = mem;
  page.text(
      "**Memory.** A fused kernel (the Halide kernel, or any kernel that samples inside the GEMM tile) touches "
      "the input, offset, mask, weight and output only. The seed's module writes the blended samples into "
      "T[N, C, Ho·k, Wo·k] first: N·C·k²·Ho·Wo floats, k² times the input. As written it also holds the four "
      "gathered corner tensors (x_q_lt, x_q_rb, x_q_lb, x_q_rt), each as large as T, so its forward keeps at "
      "least 5·T alive (and autograd saves them for the backward). Bytes are float32, stride 1, same padding "
      "(Ho = H), Co = C, with a mask.");
  page.table({"shape", "fused kernel", "T", "(fused + T) / fused", "5·T", "(fused + 5T) / fused"}, mem_rows);
  std::vector<std::string> shape_names;
  std::vector<std::vector<double>> bars(3);
  for (const auto& s : shapes) {
    const Memory m = memory_of(s);
    shape_names.push_back(s.name);
    bars[0].push_back(m.fused / 1048576.0);
    bars[1].push_back((m.fused + m.T) / 1048576.0);
    bars[2].push_back((m.fused + 5 * m.T) / 1048576.0);
  }
  PlotOptions bopt;
  bopt.title = "memory of deform_conv2d by shape, float32";
  bopt.ylabel = "MiB";
  bopt.logy = true;
  bopt.height = 520;
  bopt.extra = {"set key top left", "set yrange [1:*]"};
  page.bar_plot("memory_by_shape", bopt, shape_names, {"fused kernel", "fused + T", "fused + 5 T"}, bars);

  // Bytes as a function of the kernel size for the N8 C64 56x56 shape.
  Series fused{"fused kernel", {}, {}, "linespoints"}, tee{"fused + materialised T", {}, {}, "linespoints"},
      five{"fused + 5 T (the module's forward, at least)", {}, {}, "linespoints"};
  for (int64_t k = 1; k <= 9; ++k) {
    const Memory m = memory_of({"", 8, 64, 56, 56, 64, k});
    fused.x.push_back(double(k)), fused.y.push_back(m.fused / 1048576.0);
    tee.x.push_back(double(k)), tee.y.push_back((m.fused + m.T) / 1048576.0);
    five.x.push_back(double(k)), five.y.push_back((m.fused + 5 * m.T) / 1048576.0);
  }
  PlotOptions mopt;
  mopt.title = "memory of deform_conv2d, N8 C64 56x56, float32";
  mopt.xlabel = "kernel size k";
  mopt.ylabel = "MiB";
  mopt.logy = true;
  mopt.extra = {"set key top left"};
  page.line_plot("memory_vs_k", mopt, {fused, tee, five});

  const Memory std3 = memory_of(shapes[1]);
  const auto& u4 = numbers["dcn-4uiiurz1"];
  const auto& ox = numbers["dcn-onnx"];
  page.answer("dcn-onnx equals ref in " + std::to_string(ox["cells_equal_1e-12"].get<int>()) + "/" +
              std::to_string(ox["cells"].get<int>()) + " cells (worst " + fmt(ox["max_relative_difference"].get<double>(), 2) +
              "); dcn-4uiiurz1 equals ref in " + std::to_string(u4["cells_equal_1e-12"].get<int>()) + "/" +
              std::to_string(u4["cells"].get<int>()) + " cells, at every magnitude only for " + joined(u4["rows_equal_at_every_magnitude"]) +
              ", and is off by up to " + fmt(u4["max_relative_difference"].get<double>(), 2) +
              " of max|out| elsewhere; its T costs " + mib(std3.T) + " for N8 C64 56x56 k3, " +
              fmt((std3.fused + std3.T) / std3.fused, 3) + "x a fused kernel's buffers.");
  for (auto& [key, value] : numbers.items()) page.number(key, value);
}

}  // namespace
}  // namespace oplab::nb

int main(int argc, char** argv) {
  return oplab::nb::run_notebook(
      argc, argv, "dcn_variants", "DCN study variants against torchvision",
      "Where do the two DCN variants of the seed articles (4uiiurz1's pure-PyTorch module, the ONNX decomposition) "
      "diverge from torchvision, and what does materialising the [N, C, Ho*k, Wo*k] tensor cost in memory?",
      oplab::nb::body);
}
