// Performance from `oplab bench`: each kernel against the peer on the standard shapes, with
// the ratio, the achieved bandwidth and its fraction of the copy bandwidth measured in the run.
#include "notebooks-cpp/page.h"
#include "reports/sections.h"

namespace oplab::report {

json performance_section(const json& bench, const std::string& pages) {
  nb::Page page(pages, "performance", "Performance against the peer",
                "How fast is each kernel against torchvision with the same threads, and how close to memory bandwidth?");
  const double copy = bench.value("copy_bandwidth_gbs", 0.0), fma = bench.value("fma_peak_gflops", 0.0);
  // "12.1 (11.8-13.0)": the median and the range of the runs, where the record has them.
  auto ms_text = [](const json& t) {
    std::string v = nb::fmt(t["median_ms"].get<double>());
    if (t.contains("min_ms") && t.contains("max_ms"))
      v += " (" + nb::fmt(t["min_ms"].get<double>()) + "-" + nb::fmt(t["max_ms"].get<double>()) + ")";
    return v;
  };
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> categories;
  std::vector<std::vector<double>> ms(2);
  double best = 0, worst = 1e300;
  int with_ratio = 0;
  for (const json& r : bench.at("records")) {
    const json& ours = r["ours"];
    const json& peer = r["peer"];
    const bool have = ours.contains("median_ms"), have_peer = peer.contains("median_ms");
    std::string ratio = "-";
    const bool baseline = peer.contains("baseline");  // the peer lacks the op: our double reference
    if (r.contains("ratio")) {
      const double x = r["ratio"];
      ratio = nb::fmt(x) + "x" + (baseline ? " (vs ref)" : "") + (peer.value("overlap", false) ? " ~" : "");
      if (!baseline) best = std::max(best, x), worst = std::min(worst, x), ++with_ratio;
    }
    rows.push_back({r["shape"], r["pass"], r["backend"],
                    have ? ms_text(ours) + (ours.value("kernel_only", false) ? "" : "*")
                         : ours.value("unsupported", std::string("-")),
                    have_peer ? ms_text(peer) + (baseline ? " (ref)" : "")
                              : peer.value("unsupported", std::string("-")),
                    ratio, r.contains("gflops") ? nb::fmt(r["gflops"].get<double>()) : "-",
                    r.contains("gbs") ? nb::fmt(r["gbs"].get<double>()) : "-",
                    r.contains("copy_fraction") ? nb::fmt(100 * r["copy_fraction"].get<double>(), 2) + "%" : "-",
                    r.contains("fma_fraction") ? nb::fmt(100 * r["fma_fraction"].get<double>(), 2) + "%" : "-"});
    if (have && have_peer && !baseline) {
      categories.push_back(r["shape"].get<std::string>() + " " + r["pass"].get<std::string>().substr(0, 3));
      ms[0].push_back(ours["median_ms"]);
      ms[1].push_back(peer["median_ms"]);
    }
  }
  page.answer(with_ratio ? "Ratios (peer time / ours) from " + nb::fmt(worst) + "x to " + nb::fmt(best) + "x over " +
                               std::to_string(with_ratio) + " measurements with " + std::to_string(bench.value("threads", 0)) +
                               " threads; copy bandwidth " + nb::fmt(copy) + " GB/s" +
                               (fma > 0 ? ", FMA peak " + nb::fmt(fma) + " GFLOP/s" : std::string()) + "."
                         : "No measurement had both sides (see the table for why).");
  page.text("Median of " + std::to_string(bench.value("repeats", 0)) + " runs after " + std::to_string(bench.value("warmup", 0)) +
            " warm-up runs, " + std::to_string(bench.value("threads", 0)) + " threads on both sides, float32; " +
            (bench.value("reduced", false) ? "reduced shapes (the main job's)" : "the standard shapes of the design notes") +
            ". GB/s counts every input read once and the output written once; deform_conv2d, bound by arithmetic, "
            "reports GFLOP/s instead. * = timed through the backend's run(), float conversion included. Where the peer "
            "lacks the op (deform_roi_pool) the ratio is against our double reference, one thread, one run. Ours and the "
            "peer alternate run by run; times show the median and (min-max) of the runs, and ~ marks a ratio whose two "
            "ranges overlap (within this run's noise). The limits are measured in the same run: the copy bandwidth "
            "and the FMA peak (a loop of independent vector FMAs on the same threads).");
  page.table({"shape", "pass", "backend", "ours ms", "peer ms", "ratio", "GFLOP/s", "GB/s", "of copy bw", "of FMA peak"}, rows);
  if (!categories.empty()) {
    nb::PlotOptions o;
    o.title = "median time per call (ms, log scale)";
    o.ylabel = "ms";
    o.logy = true;
    o.width = 1100;
    page.bar_plot("times", o, categories, {"ours", "torchvision"}, ms);
  }
  page.number("copy_bandwidth_gbs", copy);
  if (fma > 0) page.number("fma_peak_gflops", fma);
  page.write();
  return json{{"name", "performance"}, {"measurements_with_ratio", with_ratio}};
}

}  // namespace oplab::report
