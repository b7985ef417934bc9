// Performance from `oplab bench`: each kernel against every peer on the standard shapes, with
// the ratio to the fastest, the achieved bandwidth and its fraction of the copy bandwidth measured in the run.
#include <map>
#include <set>

#include "notebooks-cpp/page.h"
#include "reports/sections.h"

namespace oplab::report {

namespace {

// "12.1 (11.8-13.0)": the median and the range of the runs, where the record has them.
std::string ms_text(const json& t) {
  std::string v = nb::fmt(t["median_ms"].get<double>());
  if (t.contains("min_ms") && t.contains("max_ms"))
    v += " (" + nb::fmt(t["min_ms"].get<double>()) + "-" + nb::fmt(t["max_ms"].get<double>()) + ")";
  return v;
}

// The peers a bench record timed, by name: "peers" when the bench timed several, else its one
// "peer" (torchvision: the only peer with backwards).
std::map<std::string, json> peers_of(const json& r) {
  std::map<std::string, json> out;
  if (r.contains("peers") && r["peers"].is_object()) {
    for (const auto& [name, t] : r["peers"].items()) out[name] = t;
  } else if (r.contains("peer") && r["peer"].contains("median_ms") && !r["peer"].contains("baseline")) {
    out["torchvision"] = r["peer"];
  }
  return out;
}

// The peers that should have timed the record's case and failed (a crashed bridge, an answer
// that made no sense), by name, with why: shown as such, not as a peer without the op.
json failed_peers(const json& r) {
  json out = r.value("peer_failed", json::object());
  if (r.contains("peer") && r["peer"].contains("failed")) out["torchvision"] = r["peer"]["failed"];
  return out;
}

}  // namespace

json performance_section(const json& bench, const std::string& pages) {
  nb::Page page(pages, "performance", "Performance against the peers",
                "How fast is each kernel against the fastest peer (torchvision, ONNX Runtime, OpenCV, Pillow) with the "
                "same threads, and how close to the machine's limits?");
  const double copy = bench.value("copy_bandwidth_gbs", 0.0), fma = bench.value("fma_peak_gflops", 0.0);
  // Every peer any record timed, for the columns.
  std::set<std::string> peer_names;
  for (const json& r : bench.at("records")) {
    for (const auto& [name, t] : peers_of(r)) peer_names.insert(name);
    const json failed = failed_peers(r);
    for (const auto& [name, why] : failed.items()) peer_names.insert(name);
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> categories;
  std::vector<std::vector<double>> ratios(1);
  double best = 0, worst = 1e300;
  std::string worst_at;
  int with_ratio = 0;
  for (const json& r : bench.at("records")) {
    const json& ours = r["ours"];
    const json& peer = r["peer"];
    const bool have = ours.contains("median_ms");
    const bool baseline = peer.contains("baseline");  // no peer has the op: our double reference
    const std::map<std::string, json> peers = peers_of(r);
    std::string fastest = r.value("fastest_peer", peers.size() == 1 ? peers.begin()->first : std::string());
    double x = -1;
    if (r.contains("ratio_to_fastest_peer")) x = r["ratio_to_fastest_peer"];
    else if (r.contains("ratio") && !baseline) x = r["ratio"];
    std::vector<std::string> row{r["shape"], r["pass"],
                                 have ? ms_text(ours) + (ours.value("kernel_only", false) ? "" : "*")
                                      : ours.value("unsupported", std::string("-"))};
    const json failed = failed_peers(r);
    for (const std::string& name : peer_names) {
      auto it = peers.find(name);
      row.push_back(it != peers.end() && it->second.contains("median_ms") ? ms_text(it->second)
                    : failed.contains(name)                               ? "failed: " + failed[name].get<std::string>()
                                                                          : "-");
    }
    std::string ratio = "-";
    if (x > 0) {
      const bool overlap = peers.count(fastest) && peers.at(fastest).value("overlap", false);
      ratio = nb::fmt(x) + "x vs " + fastest + (overlap ? " ~" : "");
      best = std::max(best, x), ++with_ratio;
      if (x < worst) worst = x, worst_at = r["shape"].get<std::string>() + " " + r["pass"].get<std::string>();
      categories.push_back(r["shape"].get<std::string>() + " " + r["pass"].get<std::string>().substr(0, 3));
      ratios[0].push_back(x);
    } else if (baseline && r.contains("ratio")) {
      ratio = nb::fmt(r["ratio"].get<double>()) + "x vs ref (no peer has it)";
    }
    row.push_back(ratio);
    row.push_back(r.contains("gflops") ? nb::fmt(r["gflops"].get<double>()) : "-");
    row.push_back(r.contains("gbs") ? nb::fmt(r["gbs"].get<double>()) : "-");
    row.push_back(r.contains("copy_fraction") ? nb::fmt(100 * r["copy_fraction"].get<double>(), 2) + "%" : "-");
    row.push_back(r.contains("fma_fraction") ? nb::fmt(100 * r["fma_fraction"].get<double>(), 2) + "%" : "-");
    rows.push_back(row);
  }
  page.answer(with_ratio ? "Ours against the fastest peer (its time / ours) from " + nb::fmt(worst) + "x (" + worst_at +
                               ") to " + nb::fmt(best) + "x over " + std::to_string(with_ratio) + " measurements with " +
                               std::to_string(bench.value("threads", 0)) + " threads; copy bandwidth " + nb::fmt(copy) +
                               " GB/s" + (fma > 0 ? ", FMA peak " + nb::fmt(fma) + " GFLOP/s" : std::string()) + "."
                         : "No measurement had both sides (see the table for why).");
  // How each run was timed (bench/peer_timing.h); a record older than the field says neither.
  std::string method;
  if (bench.contains("pre_runs"))
    method = bench.value("pre_runs", 0) > 0 ? ", each timed run right after an untimed run of the same side (a peer "
                                              "taking over a second a run: none for it, and fewer runs)"
                                            : ", each timed as the others leave the machine";
  page.text("Median of " + std::to_string(bench.value("repeats", 0)) + " runs after " + std::to_string(bench.value("warmup", 0)) +
            " warm-up runs, " + std::to_string(bench.value("threads", 0)) + " threads on every side, float32; " +
            (bench.value("reduced", false) ? "reduced shapes (the main job's)" : "the standard shapes of the design notes") +
            ". Each peer's time is shown; the ratio is against the fastest of them (backwards: torchvision, the one peer "
            "that has them). GB/s counts every input read once and the output written once; deform_conv2d, bound by "
            "arithmetic, reports GFLOP/s instead. * = timed through the backend's run(), float conversion included. "
            "Where no peer has the op (deform_roi_pool) the ratio is against our double reference, one thread, one "
            "run. Ours and each peer alternate run by run" + method +
            "; times show the median and (min-max) of the runs, and ~ marks "
            "a ratio whose two ranges overlap (within this run's noise); \"failed\" names a peer that should have timed the "
            "shape and did not, with why (a peer without the op shows -). The limits are measured in the same run: the "
            "copy bandwidth and the FMA peak (a loop of independent vector FMAs on the same threads).");
  std::vector<std::string> header{"shape", "pass", "ours ms"};
  for (const std::string& name : peer_names) header.push_back(name + " ms");
  for (const char* h : {"ours vs fastest peer", "GFLOP/s", "GB/s", "of copy bw", "of FMA peak"}) header.push_back(h);
  page.table(header, rows);
  if (!categories.empty()) {
    nb::PlotOptions o;
    o.title = "ours against the fastest peer: its time / ours (log scale; above 1 we are faster)";
    o.ylabel = "speed-up";
    o.logy = true;
    o.width = 1100;
    o.height = 560;
    o.extra = {"set key off", "set xtics rotate by -60 font 'sans,9'", "set bmargin 12", "set rmargin 16",
               "set arrow from graph 0, first 1 to graph 1, first 1 nohead lw 2 lc rgb 'black'"};
    page.bar_plot("ratios", o, categories, {"ours vs fastest peer"}, ratios);
  }
  page.number("copy_bandwidth_gbs", copy);
  if (fma > 0) page.number("fma_peak_gflops", fma);
  page.number("worst_ratio_to_fastest_peer", with_ratio ? worst : 0.0);
  page.write();
  return json{{"name", "performance"}, {"measurements_with_ratio", with_ratio}};
}

}  // namespace oplab::report
