// Notebook roipool_quantisation: how far RoIPool's two roundings (the box to whole feature
// pixels, then the bins to whole pixels) move its bins from RoIAlign's exact ones, on the
// RoIAlign article's example (a 665 x 665 box at stride 32: 665/32 = 20.78) and over box positions.
//
// The bins are read back from the ops themselves: on a ramp input X[y, x] = x, roi_pool (max)
// returns the last column of each bin, on -X it returns minus the first, and roi_align (avg)
// returns the bin's centre (a bilinear sample of a linear function is exact).
#include <cmath>

#include "cli/builtin_backends.h"
#include "notebooks-cpp/page.h"

namespace oplab::nb {
namespace {

constexpr int64_t kFeat = 25;        // 800 / 32
constexpr double kScale = 1.0 / 32;  // spatial_scale of a stride-32 feature map
constexpr double kBox = 665;         // box side in image pixels
constexpr int64_t kBins = 7;

// Input [1, 1, 25, 25] with X[y, x] = sign * x.
Tensor ramp(double sign) {
  Tensor t({1, 1, kFeat, kFeat});
  for (int64_t y = 0; y < kFeat; ++y)
    for (int64_t x = 0; x < kFeat; ++x) t.at(0, 0, y, x) = sign * double(x);
  return t;
}

// One roi per left edge x1 (image pixels), each 665 x 665 with its top at 0.
Tensor boxes(const std::vector<double>& x1s) {
  Tensor r({int64_t(x1s.size()), 5});
  for (size_t k = 0; k < x1s.size(); ++k) {
    r.at(int64_t(k), 0) = 0;
    r.at(int64_t(k), 1) = x1s[k];
    r.at(int64_t(k), 2) = 0;
    r.at(int64_t(k), 3) = x1s[k] + kBox;
    r.at(int64_t(k), 4) = kBox;
  }
  return r;
}

Case roi_case(const std::string& op, const Tensor& input, const Tensor& rois, bool aligned) {
  Case c;
  c.op = op;
  c.params = json{{"output_size", {kBins, kBins}}, {"spatial_scale", kScale}};
  if (op == "roi_align") {
    c.params["sampling_ratio"] = 2;  // mmcv's and the article's setting
    c.params["aligned"] = aligned;
  }
  c.inputs["input"] = input;
  c.inputs["rois"] = rois;
  return c;
}

// Bins of every roi along x, as read back from the ops: RoIPool [first, last] columns and
// RoIAlign centres (legacy and aligned).
struct Bins {
  std::vector<std::vector<double>> pool_first, pool_last, align_legacy, align_aligned;
};

Bins measure(Backend& ref, const std::vector<double>& x1s) {
  const Tensor rois = boxes(x1s);
  auto out = [&](const Case& c) { return evaluate(ref, c).outputs.at("output"); };
  const Tensor last = out(roi_case("roi_pool", ramp(1), rois, false));
  const Tensor neg_first = out(roi_case("roi_pool", ramp(-1), rois, false));
  const Tensor legacy = out(roi_case("roi_align", ramp(1), rois, false));
  const Tensor aligned = out(roi_case("roi_align", ramp(1), rois, true));
  Bins b;
  for (size_t k = 0; k < x1s.size(); ++k) {
    std::vector<double> f, l, lg, al;
    for (int64_t pw = 0; pw < kBins; ++pw) {
      // Row ph = 0; the ramp does not depend on y.
      f.push_back(-neg_first.at(int64_t(k), 0, 0, pw));
      l.push_back(last.at(int64_t(k), 0, 0, pw));
      lg.push_back(legacy.at(int64_t(k), 0, 0, pw));
      al.push_back(aligned.at(int64_t(k), 0, 0, pw));
    }
    b.pool_first.push_back(f), b.pool_last.push_back(l), b.align_legacy.push_back(lg), b.align_aligned.push_back(al);
  }
  return b;
}

void body(Page& page) {
  Backend& ref = *builtin_backends().find("ref");

  // The article's example: box [0, 665] at stride 32.
  const Bins ex = measure(ref, {0.0});
  const double pool_width = ex.pool_last[0].back() - ex.pool_first[0].front() + 1;  // whole pixels covered
  const double align_bin = (ex.align_legacy[0].back() - ex.align_legacy[0].front()) / double(kBins - 1);
  const double exact = kBox * kScale;
  std::vector<std::vector<std::string>> rows;
  for (int64_t pw = 0; pw < kBins; ++pw) {
    const double f = ex.pool_first[0][size_t(pw)], l = ex.pool_last[0][size_t(pw)];
    const double c = ex.align_legacy[0][size_t(pw)];
    rows.push_back({std::to_string(pw), fmt(f) + " .. " + fmt(l), fmt(l - f + 1), fmt(c - align_bin / 2, 4) + " .. " + fmt(c + align_bin / 2, 4),
                    fmt((f + l) / 2, 4), fmt(c, 4), fmt((f + l) / 2 - c, 3)});
  }
  page.text("**The article's example.** A 665 x 665 box on an 800 x 800 image, feature stride 32, 7 x 7 output. "
            "The box is " + fmt(exact, 4) + " feature pixels wide. Caffe's RoIPool (the article) truncates this to 20; "
            "torchvision rounds both corners (round(0) = 0, round(20.78) = 21) and counts both ends, so its RoI covers " +
            fmt(pool_width) + " whole pixels and each bin spans " + fmt(pool_width / kBins, 3) +
            " of them, rounded again outward (floor of the start, ceil of the end), so neighbouring bins overlap. "
            "RoIAlign keeps " + fmt(exact, 4) + " and bins of " + fmt(align_bin, 4) + " (measured from the spacing of its bin centres).");
  page.table({"bin", "RoIPool columns", "RoIPool width", "RoIAlign extent (legacy)", "RoIPool centre", "RoIAlign centre",
              "centre shift (feature px)"},
             rows);

  // Sweep the box's left edge over two feature pixels in quarter image pixels.
  std::vector<double> x1s;
  for (int i = 0; i <= 256; ++i) x1s.push_back(0.25 * i);
  const Bins sw = measure(ref, x1s);
  Series vs_legacy{"RoIPool vs RoIAlign (legacy, aligned=False)", {}, {}, "lines"};
  Series vs_aligned{"RoIPool vs RoIAlign (aligned=True)", {}, {}, "lines"};
  Series width_err{"RoIPool bin width - RoIAlign bin width (worst bin)", {}, {}, "lines"};
  double worst_legacy = 0, worst_aligned = 0, worst_width = 0, mean_legacy = 0;
  for (size_t k = 0; k < x1s.size(); ++k) {
    double e_leg = 0, e_al = 0, e_w = 0;
    for (int64_t pw = 0; pw < kBins; ++pw) {
      const double f = sw.pool_first[k][size_t(pw)], l = sw.pool_last[k][size_t(pw)];
      const double centre = (f + l) / 2;
      e_leg = std::max(e_leg, std::fabs(centre - sw.align_legacy[k][size_t(pw)]));
      e_al = std::max(e_al, std::fabs(centre - sw.align_aligned[k][size_t(pw)]));
      e_w = std::max(e_w, std::fabs((l - f + 1) - align_bin));
    }
    vs_legacy.x.push_back(x1s[k]), vs_legacy.y.push_back(e_leg);
    vs_aligned.x.push_back(x1s[k]), vs_aligned.y.push_back(e_al);
    width_err.x.push_back(x1s[k]), width_err.y.push_back(e_w);
    worst_legacy = std::max(worst_legacy, e_leg);
    worst_aligned = std::max(worst_aligned, e_al);
    worst_width = std::max(worst_width, e_w);
    mean_legacy += e_leg / double(x1s.size());
  }
  PlotOptions opt;
  opt.title = "RoIPool bin centres against RoIAlign, 665 px box sliding right (stride 32, 7x7)";
  opt.xlabel = "box left edge x1 (image pixels)";
  opt.ylabel = "worst bin, |centre difference| (feature pixels)";
  opt.extra = {"set key below", "set xtics 8"};
  page.line_plot("centre_error_vs_x1", opt, {vs_legacy, vs_aligned});
  PlotOptions wopt = opt;
  wopt.title = "RoIPool bin width against RoIAlign's 2.97, worst bin";
  wopt.ylabel = "|width difference| (feature pixels)";
  page.line_plot("width_error_vs_x1", wopt, {width_err});
  page.text("Sliding the box right by one feature pixel (32 image pixels) repeats the pattern: the RoIPool bins jump "
            "by a whole pixel when round(x1/32) steps, while RoIAlign's move smoothly. Against legacy RoIAlign "
            "(the same pixel-centre convention) this is the quantisation alone; against aligned RoIAlign the "
            "half-pixel shift of the corrected convention adds to it.");

  page.number("box_feature_px", exact);
  page.number("roipool_covered_px", pool_width);
  page.number("roipool_bin_px", pool_width / kBins);
  page.number("roialign_bin_px", align_bin);
  page.number("worst_centre_shift_vs_legacy_px", worst_legacy);
  page.number("mean_worst_centre_shift_vs_legacy_px", mean_legacy);
  page.number("worst_centre_shift_vs_aligned_px", worst_aligned);
  page.number("worst_width_error_px", worst_width);
  page.answer("665/32 = " + fmt(exact, 4) + " becomes " + fmt(pool_width) + " whole pixels in RoIPool (bins " +
              fmt(pool_width / kBins, 3) + " vs RoIAlign's " + fmt(align_bin, 3) + "); over box positions its bin centres sit up to " +
              fmt(worst_legacy, 3) + " feature px (" + fmt(worst_legacy * 32, 3) + " image px) from legacy RoIAlign's and up to " +
              fmt(worst_aligned, 3) + " px (" + fmt(worst_aligned * 32, 3) + " image px) from aligned RoIAlign's, with bin widths off by up to " +
              fmt(worst_width, 3) + " px.");
}

}  // namespace
}  // namespace oplab::nb

int main(int argc, char** argv) {
  return oplab::nb::run_notebook(
      argc, argv, "roipool_quantisation", "RoIPool's quantisation against RoIAlign",
      "How far do RoIPool's roundings (box corners, then bins, to whole feature pixels) move its bins from "
      "RoIAlign's, on the 665/32 = 20.78 example and as the box slides?",
      oplab::nb::body);
}
