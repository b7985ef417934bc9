// `oplab bench`: the standard shapes, forward and backward, halide-cpu (and halide-cuda where
// it runs) against torchvision with the same thread count in the same run. Every figure is a
// ratio (peer time / ours); achieved GB/s is set against the copy bandwidth measured here.
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <thread>

#include "bench/bench.h"
#include "cli/builtin_backends.h"
#include "cli/commands.h"
#include "cli/names.h"
#include "core/case_io.h"
#include "core/op_desc.h"
#include "halide/halide_backend.h"
#include "peer/onnxruntime_backend.h"
#include "peer/opencv_backend.h"
#include "peer/torchvision_backend.h"

namespace oplab::cli {

namespace {

struct Options {
  bool reduced = false;
  int threads = 2;
  int repeats = 5;
  int warmup = 2;
  std::vector<std::string> only;  // substrings of shape names
  std::string out = "out/bench.json";
  bool no_backward = false;
};

bool selected(const Options& opt, const std::string& name) {
  if (opt.only.empty()) return true;
  for (const auto& s : opt.only)
    if (name.find(s) != std::string::npos) return true;
  return false;
}

// A timing as the records hold it: every run, the median, min, max and spread.
json timing_json(const bench::Timing& t) {
  return json{{"median_ms", t.median_ms}, {"min_ms", t.min_ms}, {"max_ms", t.max_ms}, {"spread", t.spread()},
              {"ms", t.runs_ms}};
}

// Our side of one measurement: the prepared kernel call when the glue offers it (buffers
// converted once), else the whole backend run (float conversion included, and said so).
// Returns the call, or null with *why set when the backend does not take the case.
std::function<void()> our_call(Backend& b, HalideDevice device, const Case& c, bool backward, bool* kernel_only,
                               std::string* why) {
  if (auto reason = b.unsupported_reason(c)) {
    *why = *reason;
    return nullptr;
  }
  std::function<void()> call = halide_prepared_call(c, device, backward);
  *kernel_only = bool(call);
  if (!call) call = [&b, c] { (void)evaluate(b, c); };
  return call;
}

// Where the peer lacks the op (deform_roi_pool), the baseline is our double reference: one
// untimed-warmup-free run, since it is slow and single-threaded (said so in the record).
json time_reference_baseline(Backend& ref, const Case& c) {
  const bench::Timing t = bench::time_call([&] { (void)evaluate(ref, c); }, 0, 1);
  return json{{"median_ms", t.median_ms}, {"ms", t.runs_ms}, {"baseline", "ref (double, 1 thread, 1 run)"}};
}

// The peer on the same kind of device as ours: torchvision's CPU kernels against halide-cpu,
// its CUDA kernels against halide-cuda. One request times `repeats` runs after `warmup`.
json time_peer(const json& request, bool backward, const Options& opt, const std::string& device, int repeats,
               int warmup) {
  json req = request;
  req["device"] = device;
  req["threads"] = opt.threads;
  req["repeats"] = repeats;
  req["warmup"] = warmup;
  req["backward"] = backward;
  try {
    return torchvision_bench(req);
  } catch (const std::exception& e) {
    return json{{"unsupported", e.what()}};
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The other live peers on the CPU forward, same thread count, same run: onnxruntime (its own
// bridge process, session built once) and opencv (cv::resize in this process). Each peer's
// median, and its ratio against the fastest peer of the shape (1.0 = the fastest).
void time_other_peers(json& rec, const Case& c, const json& torchvision, const Options& opt) {
  json peers = json::object();
  if (torchvision.contains("median_ms") && !torchvision.contains("baseline")) peers["torchvision"] = torchvision["median_ms"];
  const std::pair<const char*, std::vector<double> (*)(const Case&, int, int)> others[] = {
      {"onnxruntime", onnxruntime_bench}, {"opencv", opencv_bench}};
  for (const auto& [name, bench_fn] : others) {
    try {
      peers[name] = median(bench_fn(c, opt.repeats, opt.threads));
    } catch (const std::exception& e) {
      rec["peer_unsupported"][name] = e.what();
    }
  }
  if (peers.empty()) return;
  double fastest = INFINITY;
  for (const auto& [n, ms] : peers.items()) fastest = std::min(fastest, ms.get<double>());
  rec["peers_ms"] = peers;
  for (const auto& [n, ms] : peers.items()) rec["peer_ratio_to_fastest"][n] = ms.get<double>() / fastest;
  if (rec["ours"].contains("median_ms")) rec["ratio_to_fastest_peer"] = fastest / rec["ours"]["median_ms"].get<double>();
}

std::string fmt(double v, int prec) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << v;
  return os.str();
}

// Every --shape must select at least one shape: an unknown one is one line naming the shapes,
// before anything is timed or written. Returns "" or that line.
std::string check_shapes(const Options& opt, const std::vector<bench::BenchShape>& shapes) {
  std::vector<std::string> names, words;  // suggestions from whole names and their words ("roi_align")
  for (const auto& s : shapes) {
    names.push_back(s.name);
    words.push_back(s.name);
    for (size_t start = 0; start < s.name.size();) {
      size_t end = s.name.find(' ', start);
      if (end == std::string::npos) end = s.name.size();
      if (end > start) words.push_back(s.name.substr(start, end - start));
      start = end + 1;
    }
  }
  for (const auto& want : opt.only) {
    const bool any = std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n.find(want) != std::string::npos; });
    if (any) continue;
    std::vector<std::string> quoted;
    for (const auto& n : names) quoted.push_back("\"" + n + "\"");
    return unknown_name("bench", "shape", want, quoted, "", &words) + " (or a part of one)";
  }
  return "";
}

int run_bench(const Options& opt) {
  const std::vector<bench::BenchShape> shapes = bench::standard_shapes(opt.reduced);
  if (const std::string bad = check_shapes(opt, shapes); !bad.empty()) {
    std::cerr << bad << '\n';
    return kUsage;
  }
  set_halide_threads(opt.threads);
  // The machine's copy bandwidth: the best of three measurements now (one taken while
  // something else briefly runs reads low and would inflate every fraction), and again at the
  // end, since the run's fractions are only as good as this number.
  std::vector<double> copy_runs;
  for (int i = 0; i < 3; ++i) copy_runs.push_back(bench::copy_bandwidth_gbs(opt.threads));
  double copy_gbs = *std::max_element(copy_runs.begin(), copy_runs.end());
  std::cout << "copy bandwidth (" << opt.threads << " threads): " << fmt(copy_gbs, 1) << " GB/s\n";
  // The arithmetic limit, beside it: compute-bound shapes are read against this one.
  const bench::FmaPeak fma = bench::fma_peak_gflops(opt.threads);
  if (fma.gflops > 0)
    std::cout << "FMA peak (" << opt.threads << " threads, " << fma.isa << "): " << fmt(fma.gflops, 0) << " GFLOP/s\n";
  else
    std::cout << "FMA peak: this CPU has no vector FMA the benchmark knows; compute-bound shapes show GFLOP/s only\n";
  std::cout << std::left << std::setw(36) << "shape" << std::setw(10) << "pass" << std::right << std::setw(12)
            << "ours ms" << std::setw(12) << "peer ms" << std::setw(9) << "ratio" << std::setw(9) << "rate"
            << std::setw(8) << "%limit" << "\n";
  json records = json::array();
  Registry& reg = builtin_backends();
  std::vector<std::string> dims;  // what each timed shape is, printed under the table
  bool starred = false, baseline = false, gflops = false, overlapped = false;
  for (const bench::BenchShape& s : shapes) {
    if (!selected(opt, s.name)) continue;
    {
      std::string d = s.name + ":";
      for (const auto& [in, t] : s.c.inputs) d += " " + in + " " + shape_str(t.shape);
      dims.push_back(d + " -> output " + shape_str(op_desc(s.c.op).validate(s.c)) + ", params " + s.c.params.dump());
    }
    for (bool backward : {false, true}) {
      if (backward && opt.no_backward) continue;
      Case c = s.c;
      if (backward) {
        Tensor go(op_desc(c.op).validate(c));
        for (size_t i = 0; i < go.data.size(); ++i) go.data[i] = double(i % 7) / 7.0 - 0.5;
        c.grad_output = std::move(go);
      }
      // halide-opencl is not timed: on pocl's CPU device its times say nothing about a GPU.
      for (auto [name, device] : {std::pair<const char*, HalideDevice>{"halide-cpu", HalideDevice::Cpu},
                                  {"halide-cuda", HalideDevice::Cuda}}) {
        Backend* b = reg.find(name);
        if (!b || b->unavailable_reason()) continue;
        const std::string peer_device = device == HalideDevice::Cuda ? "cuda" : "cpu";
        bool kernel_only = false;
        std::string why;
        const std::function<void()> call = our_call(*b, device, c, backward, &kernel_only, &why);
        // A first request says whether the peer has the op; where it does, ours and the peer
        // alternate run by run (each peer run after a warm-up run of its own), so that a slow
        // phase of this noisy machine falls on both sides alike.
        json peer = time_peer(s.peer_request, backward, opt, peer_device, 1, 1);
        // A peer run of seconds (the pure-PyTorch ms_deform_attn encoder): 3 runs, no warm-up
        // of their own, so that one shape cannot take the main job's quarter of an hour.
        const bool slow = peer.value("median_ms", 0.0) > 1000;
        const int repeats = slow ? std::min(opt.repeats, 3) : opt.repeats, warmup = slow ? 0 : opt.warmup,
                  peer_warmup = slow ? 0 : 1;
        json ours;
        if (!call) {
          ours = json{{"unsupported", why}};
        } else if (peer.contains("median_ms")) {
          std::function<double()> peer_run = [&] {
            const json one = time_peer(s.peer_request, backward, opt, peer_device, 1, peer_warmup);
            if (!one.contains("median_ms")) throw std::runtime_error("the peer stopped answering: " + one.dump());
            return one["median_ms"].get<double>();
          };
          std::function<double()> our_run = [&] {
            const auto t0 = std::chrono::steady_clock::now();
            call();
            return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
          };
          try {
            const auto t = bench::time_alternating({our_run, peer_run}, warmup, repeats);
            ours = timing_json(t[0]);
            peer = timing_json(t[1]);
            peer["alternated"] = true;
            if (slow) peer["slow"] = "a peer run over 1 s: " + std::to_string(repeats) + " runs, no warm-up";
            if (bench::ranges_overlap(t[0], t[1])) peer["overlap"] = true;
          } catch (const std::exception& e) {
            peer = json{{"unsupported", e.what()}};
          }
        }
        if (call && !ours.contains("median_ms")) ours = timing_json(bench::time_call(call, opt.warmup, opt.repeats));
        if (ours.contains("median_ms")) ours["kernel_only"] = kernel_only;
        // Where the peer lacks the op, the CPU kernels are set against our double reference.
        if (peer.contains("unsupported") && device == HalideDevice::Cpu && reg.find("ref"))
          peer = time_reference_baseline(*reg.find("ref"), c);
        json rec{{"shape", s.name}, {"op", c.op}, {"pass", backward ? "backward" : "forward"}, {"backend", name},
                 {"threads", opt.threads}, {"ours", ours}, {"peer", peer}, {"bytes", s.bytes}};
        std::string ours_ms = "-", peer_ms = "-", ratio = "-", gbs = "-", frac = "-";
        if (ours.contains("median_ms")) {
          const double ms = ours["median_ms"];
          ours_ms = fmt(ms, 2) + (ours.value("kernel_only", false) ? "" : "*");
          starred |= !ours.value("kernel_only", false);
          // Compute-bound shapes (flops given) report GFLOP/s in the rate column, the others
          // GB/s and the fraction of the measured copy bandwidth.
          if (!backward && s.flops > 0) {
            rec["gflops"] = s.flops / (ms * 1e-3) / 1e9;
            gbs = fmt(rec["gflops"].get<double>(), 1) + "GF";
            gflops = true;
            if (fma.gflops > 0) {
              rec["fma_fraction"] = rec["gflops"].get<double>() / fma.gflops;
              frac = fmt(100 * rec["fma_fraction"].get<double>(), 0) + "F";
            }
          } else if (!backward) {
            const double g = s.bytes / (ms * 1e-3) / 1e9;
            rec["gbs"] = g;
            rec["copy_fraction"] = g / copy_gbs;
            gbs = fmt(g, 1);
            frac = fmt(100 * g / copy_gbs, 0);
          }
        }
        if (peer.contains("median_ms")) {
          peer_ms = fmt(peer["median_ms"].get<double>(), 2);
          if (ours.contains("median_ms")) {
            rec["ratio"] = peer["median_ms"].get<double>() / ours["median_ms"].get<double>();
            ratio = fmt(rec["ratio"].get<double>(), 1) + "x" + (peer.contains("baseline") ? "r" : "") +
                    (peer.value("overlap", false) ? "~" : "");
            baseline |= peer.contains("baseline");
            overlapped |= peer.value("overlap", false);
          }
        }
        if (!backward && device == HalideDevice::Cpu) time_other_peers(rec, c, peer, opt);
        records.push_back(rec);
        std::cout << std::left << std::setw(36) << s.name << std::setw(10) << (backward ? "backward" : "forward")
                  << std::right << std::setw(12) << ours_ms << std::setw(12) << peer_ms << std::setw(9) << ratio
                  << std::setw(9) << gbs << std::setw(8) << frac << "\n";
        if (rec.contains("peers_ms")) {
          std::cout << "    peers (ms, x fastest):";
          for (const auto& [n, ms] : rec["peers_ms"].items())
            std::cout << ' ' << n << ' ' << fmt(ms.get<double>(), 2) << " (" << fmt(rec["peer_ratio_to_fastest"][n].get<double>(), 1) << "x)";
          if (rec.contains("ratio_to_fastest_peer"))
            std::cout << "; ours against the fastest: " << fmt(rec["ratio_to_fastest_peer"].get<double>(), 1) << "x";
          std::cout << '\n';
        }
      }
    }
  }
  const double copy_end = bench::copy_bandwidth_gbs(opt.threads);
  copy_runs.push_back(copy_end);
  if (copy_end > 1.1 * copy_gbs) {
    // The start was disturbed: every fraction is recomputed against the larger figure.
    std::cout << "copy bandwidth at the end: " << fmt(copy_end, 1) << " GB/s, above the start's " << fmt(copy_gbs, 1)
              << ": the JSON's fractions use the end's figure\n";
    for (json& rec : records)
      if (rec.contains("copy_fraction")) rec["copy_fraction"] = rec["copy_fraction"].get<double>() * copy_gbs / copy_end;
    copy_gbs = copy_end;
  }
  // The columns, and only the markers that appear.
  std::cout << "(ours, peer: median of " << opt.repeats << " runs after " << opt.warmup
            << " warm-up, the two alternating run by run; ratio = peer ms / ours ms; rate = GB/s moved (inputs + output)"
            << (gflops ? ", or GF = GFLOP/s for compute-bound shapes" : "")
            << "; %limit = rate / copy bandwidth" << (gflops ? ", or F: GFLOP/s / FMA peak" : "");
  if (overlapped) std::cout << ";\n ~ = the two sides' [min, max] ranges overlap: the ratio is within this run's noise";
  if (starred) std::cout << ";\n * = timed through the backend's run(), float conversion of the tensors included";
  if (baseline) std::cout << ";\n r = ratio against our double reference, single-threaded, where the peer lacks the op";
  std::cout << ")\nshapes:\n";
  for (const auto& d : dims) std::cout << "  " << d << '\n';
  json report{{"copy_bandwidth_gbs", copy_gbs}, {"copy_bandwidth_runs_gbs", copy_runs},
              {"fma_peak_gflops", fma.gflops}, {"fma_peak_runs_gflops", fma.runs_gflops}, {"fma_isa", fma.isa},
              {"threads", opt.threads}, {"repeats", opt.repeats},
              {"warmup", opt.warmup}, {"reduced", opt.reduced}, {"records", records},
              {"hardware_threads", std::thread::hardware_concurrency()}};
  if (auto v = torchvision_versions()) report["peer_versions"] = *v;
  try {
    write_json_file_atomic(opt.out, report, 2);
  } catch (const std::exception& e) {
    std::cerr << "bench: " << e.what() << '\n';
    return kFailed;
  }
  std::cout << "wrote " << opt.out << "\n";
  return kOk;
}

void add_bench(CLI::App& app) {
  auto opt = std::make_shared<Options>();
  auto* sub = app.add_subcommand("bench", "time the Halide kernels against torchvision on the standard shapes");
  sub->add_flag("--reduced", opt->reduced, "smaller shapes (for the main job)");
  sub->add_option("--threads,-t", opt->threads, "threads for both sides (default 2)")->check(whole_number(1, 1024));
  sub->add_option("--repeats,-r", opt->repeats, "timed runs, the median reported (default 5)")->check(whole_number(1, 100000));
  sub->add_option("--warmup,-w", opt->warmup, "untimed runs first (default 2)")->check(whole_number(0, 100000));
  sub->add_option("--shape,-s", opt->only, "only shapes whose name contains this (repeatable; unknown: exit 2)");
  sub->add_flag("--no-backward", opt->no_backward, "forward only");
  sub->add_option("--out,-o", opt->out, "JSON report (default out/bench.json)");
  sub->callback([opt] { set_exit_code(run_bench(*opt)); });
}

const CommandRegistrar registrar(40, add_bench);

}  // namespace

}  // namespace oplab::cli
