// `oplab bench`: the standard shapes, forward and backward, halide-cpu (and halide-cuda where
// it runs; halide-cpu-f16 / -cuda-f16 in rows of their own for the ops they have) against
// torchvision (and on the CPU forward the other live peers) with the same thread count, every
// side timed in one alternation (bench/peer_timing.h). Every figure is a ratio (peer time /
// ours); achieved GB/s is set against the copy bandwidth measured here.
#include <algorithm>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <malloc.h>
#include <thread>

#include "bench/bench.h"
#include "bench/peer_timing.h"
#include "cli/builtin_backends.h"
#include "cli/commands.h"
#include "cli/names.h"
#include "core/case_io.h"
#include "core/op_desc.h"
#include "halide/halide_backend.h"
#include "peer/onnxruntime_backend.h"
#include "peer/opencv_backend.h"
#include "peer/pillow_backend.h"
#include "peer/torchvision_backend.h"

namespace oplab::cli {

namespace {

struct Options {
  bool reduced = false;
  int threads = 2;
  int repeats = 5;
  int warmup = 2;
  bool cold = false;  // no pre-runs (bench/peer_timing.h)
  int pre_runs() const { return cold ? 0 : 1; }
  std::vector<std::string> only;  // substrings of shape names
  std::string out = "out/bench.json";
  bool no_backward = false;
  std::string device = "all";  // cpu, cuda or all (each that can run here)
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
std::function<void()> our_call(Backend& b, HalideDevice device, HalideStorage storage, const Case& c, bool backward,
                               bool* kernel_only, std::string* why) {
  if (auto reason = b.unsupported_reason(c)) {
    *why = *reason;
    return nullptr;
  }
  std::function<void()> call = halide_prepared_call(c, device, backward, storage);
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

// A peer run longer than this (the pure-PyTorch ms_deform_attn encoder: seconds) makes the
// measurement a slow one: fewer runs, no warm-ups, so that one shape cannot take the main
// job's quarter of an hour.
constexpr double kSlowMs = 1000;

// torchvision on the same kind of device as ours: its CPU kernels against halide-cpu, its CUDA
// kernels against halide-cuda. Each request times one run after the measurement's pre-runs, in
// the bridge, back to back, as every side's (bench/peer_timing.h; a pre-run for torchvision
// alone, which it once had, left it the only side timed warm: docs/bench/2026-11-29b-cpu.md);
// the probe, after one untimed run, says whether torchvision has the op at all.
bench::PeerSide torchvision_side(const json& request, bool backward, const Options& opt, const std::string& device) {
  auto one = [=](int peer_warmup) {
    json req = request;
    req["device"] = device;
    req["threads"] = opt.threads;
    req["repeats"] = 1;
    req["warmup"] = peer_warmup;
    req["backward"] = backward;
    const json r = torchvision_bench(req);  // throws Unsupported where torchvision lacks the case
    if (!r.contains("median_ms")) throw std::runtime_error("torchvision answered " + r.dump());
    return r["median_ms"].get<double>();
  };
  return {"torchvision", [one] {
            const double probe = one(1);
            return bench::StartedPeer{one, probe};
          }};
}

// The other live peers, on the CPU forward with the same thread count: onnxruntime (its own
// bridge process, session built once), opencv (cv::resize in this process) and pillow
// (Image.resize in its own bridge process, the planes made images once).
std::vector<bench::PeerSide> other_cpu_peers(const Case& c, const json& random_inputs, const Options& opt) {
  return {{"onnxruntime", [&c, &random_inputs, &opt] {
             OnnxruntimeBench b = start_onnxruntime_bench(c, opt.threads, random_inputs);
             return bench::StartedPeer{b.run, b.probe_ms};
           }},
          {"opencv", [&c, &opt] {
             std::function<double(int)> run = start_opencv_bench(c, opt.threads);
             const double probe = run(0);
             return bench::StartedPeer{run, probe};
           }},
          {"pillow", [&c, &opt] {
             std::function<double(int)> run = start_pillow_bench(c, opt.threads);
             const double probe = run(0);
             return bench::StartedPeer{run, probe};
           }}};
}

// A peer's figures as the record holds them: its timing and overlap flag, or why it has none
// ("unsupported": it lacks the case; "failed": it should have timed it and did not).
json peer_json(const bench::PeerTiming& p, const bench::Measurement& m) {
  if (!p.t) return json{{p.failed ? "failed" : "unsupported", p.unsupported}};
  json j = timing_json(*p.t);
  j["alternated"] = true;
  if (p.overlap) j["overlap"] = true;
  if (p.slow) j["slow"] = "a peer run over 1 s: " + std::to_string(m.repeats) + " runs, no warm-up, no pre-run";
  return j;
}

// Every peer's figures beside torchvision's (the CPU forward): `peers` (each peer's timing,
// overlap flag and ratio peer / ours), `peers_ms`, each peer against the fastest, ours against
// the fastest (and whether that ratio is within the noise), and why a peer has no figure.
void record_peers(json& rec, const bench::Measurement& m) {
  for (const bench::PeerTiming& p : m.peers) {
    json j = peer_json(p, m);
    if (!p.t) {
      rec[p.failed ? "peer_failed" : "peer_unsupported"][p.name] = p.unsupported;
      continue;
    }
    if (m.ours) j["ratio"] = p.t->median_ms / m.ours->median_ms;
    rec["peers"][p.name] = j;
    rec["peers_ms"][p.name] = p.t->median_ms;
  }
  if (!rec.contains("peers_ms")) return;
  std::string fastest;
  for (const auto& [n, ms] : rec["peers_ms"].items())
    if (fastest.empty() || ms.get<double>() < rec["peers_ms"][fastest].get<double>()) fastest = n;
  const double fastest_ms = rec["peers_ms"][fastest];
  for (const auto& [n, ms] : rec["peers_ms"].items()) rec["peer_ratio_to_fastest"][n] = ms.get<double>() / fastest_ms;
  rec["fastest_peer"] = fastest;
  if (m.ours) {
    rec["ratio_to_fastest_peer"] = rec["peers"][fastest]["ratio"];
    if (rec["peers"][fastest].value("overlap", false)) rec["fastest_peer_overlap"] = true;
  }
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

// Bytes of freed heap glibc may keep before it trims (M_TRIM_THRESHOLD; an int): the most.
constexpr int kKeepHeap = 2147483647;

int run_bench(const Options& opt) {
  const std::vector<bench::BenchShape> shapes = bench::standard_shapes(opt.reduced);
  if (const std::string bad = check_shapes(opt, shapes); !bad.empty()) {
    std::cerr << bad << '\n';
    return kUsage;
  }
  if (opt.device == "cuda")
    if (Backend* cuda = builtin_backends().find("halide-cuda"); !cuda || cuda->unavailable_reason()) {
      std::cerr << "bench: --device cuda: halide-cuda cannot run here ("
                << (cuda ? *cuda->unavailable_reason() : std::string("not built")) << ")\n";
      return kUnavailable;
    }
  set_halide_threads(opt.threads);
  // The sides alternate run by run on the same cores: OpenMP threads that spin-wait after a
  // run (PyTorch in its bridge process) steal the cores from the next side; the bridges start
  // later and inherit this. A user's setting stands.
  setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  // Every side allocates its outputs and scratch anew on each run (PyTorch, the ONNX Runtime
  // binding, Halide's internal buffers). glibc serves a large block with a fresh mmap and
  // unmaps it when freed, so each run pays a page fault per 4 KiB touched: on a virtual
  // machine that was most of a peer's time (nearest x2 forward on 2 cores: torchvision 259 ms,
  // onnxruntime 484 ms, 11.9 and 22.8 ms with the heap kept through the environment). The bench
  // times kernels in a steady state, so every side keeps freed memory for its next run: here
  // through mallopt, in the bridges (started later) through glibc's environment variables.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, kKeepHeap);
  setenv("MALLOC_MMAP_MAX_", "0", 0);
  setenv("MALLOC_TRIM_THRESHOLD_", std::to_string(kKeepHeap).c_str(), 0);
  // The machine's copy bandwidth: the best of three measurements now (one taken while
  // something else briefly runs reads low and would inflate every fraction), and again at the
  // end, since the run's fractions are only as good as this number.
  std::vector<double> copy_runs;
  for (int i = 0; i < 3; ++i) copy_runs.push_back(bench::copy_bandwidth_gbs(opt.threads));
  double copy_gbs = *std::max_element(copy_runs.begin(), copy_runs.end());
  std::cout << "copy bandwidth (" << opt.threads << " threads): " << fmt(copy_gbs, 1) << " GB/s" << std::endl;
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
      // The float16 backends get a row of their own only for the ops they have kernels for
      // (deform_roi_pool's forward, NHWC), beside the float32 row of the same shape.
      for (auto [storage, device] : {std::pair{HalideStorage::Float32, HalideDevice::Cpu},
                                     std::pair{HalideStorage::Float32, HalideDevice::Cuda},
                                     std::pair{HalideStorage::Float16, HalideDevice::Cpu},
                                     std::pair{HalideStorage::Float16, HalideDevice::Cuda}}) {
        if (opt.device != "all" && opt.device != (device == HalideDevice::Cuda ? "cuda" : "cpu")) continue;
        const char* name = halide_backend_name(device, storage);
        Backend* b = reg.find(name);
        if (!b || b->unavailable_reason()) continue;
        if (storage != HalideStorage::Float32 && (b->unsupported_reason(c) || (backward && !b->computes_grads(c.op))))
          continue;
        const std::string peer_device = device == HalideDevice::Cuda ? "cuda" : "cpu";
        bool kernel_only = false;
        std::string why;
        const std::function<void()> call = our_call(*b, device, storage, c, backward, &kernel_only, &why);
        // Ours and every peer alternate run by run (bench/peer_timing.h): torchvision on the
        // same kind of device, and on the CPU forward the other live peers as well.
        std::vector<bench::PeerSide> peers{torchvision_side(s.peer_request, backward, opt, peer_device)};
        const bool all_peers = !backward && device == HalideDevice::Cpu;
        if (all_peers)
          for (bench::PeerSide& p : other_cpu_peers(c, s.peer_request.at("random_inputs"), opt)) peers.push_back(std::move(p));
        std::function<double()> our_run;
        if (call) our_run = [&call] { return bench::ms_of(call); };
        const bench::Measurement m =
            bench::measure(our_run, peers, bench::TimingPlan{opt.warmup, opt.repeats, kSlowMs, 3, opt.pre_runs()});
        json ours = m.ours ? timing_json(*m.ours) : json{{"unsupported", why}};
        json peer = peer_json(m.peers.front(), m);
        if (ours.contains("median_ms")) ours["kernel_only"] = kernel_only;
        // Where the peer lacks the op, the CPU kernels are set against our double reference.
        if (peer.contains("unsupported") && device == HalideDevice::Cpu && reg.find("ref"))
          peer = time_reference_baseline(*reg.find("ref"), c);
        // A float16 kernel moves half the bytes (its rois, float32 in both, are a few KB).
        const double bytes = storage == HalideStorage::Float16 ? s.bytes / 2 : s.bytes;
        json rec{{"shape", s.name}, {"op", c.op}, {"pass", backward ? "backward" : "forward"}, {"backend", name},
                 {"threads", opt.threads}, {"ours", ours}, {"peer", peer}, {"bytes", bytes},
                 {"pre_runs", m.pre_runs}, {"peer_pre_runs", m.peer_pre_runs}};
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
            // The limits measured here are the CPU's: a GPU kernel gets its rate alone.
            if (fma.gflops > 0 && device == HalideDevice::Cpu) {
              rec["fma_fraction"] = rec["gflops"].get<double>() / fma.gflops;
              frac = fmt(100 * rec["fma_fraction"].get<double>(), 0) + "F";
            }
          } else if (!backward) {
            const double g = bytes / (ms * 1e-3) / 1e9;
            rec["gbs"] = g;
            gbs = fmt(g, 1);
            if (device == HalideDevice::Cpu) {
              rec["copy_fraction"] = g / copy_gbs;
              frac = fmt(100 * g / copy_gbs, 0);
            }
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
        if (all_peers) record_peers(rec, m);
        records.push_back(rec);
        // Every row on disk as soon as it is measured (marked incomplete): a run cut short by
        // a time limit or a signal keeps what it measured.
        try {
          write_json_file_atomic(opt.out, json{{"complete", false}, {"device", opt.device}, {"records", records}}, 2);
        } catch (const std::exception&) {  // reported by the final write below
        }
        const std::string row = storage == HalideStorage::Float32 ? s.name : s.name + " " + name;
        std::cout << std::left << std::setw(36) << row << std::setw(10) << (backward ? "backward" : "forward")
                  << std::right << std::setw(12) << ours_ms << std::setw(12) << peer_ms << std::setw(9) << ratio
                  << std::setw(9) << gbs << std::setw(8) << frac << std::endl;  // a row as it is measured
        if (rec.contains("peers_ms")) {
          std::cout << "    peers (ms, x fastest):";
          for (const auto& [n, ms] : rec["peers_ms"].items())
            std::cout << ' ' << n << ' ' << fmt(ms.get<double>(), 2) << " (" << fmt(rec["peer_ratio_to_fastest"][n].get<double>(), 1) << "x)";
          if (rec.contains("ratio_to_fastest_peer")) {
            std::cout << "; ours against the fastest: " << fmt(rec["ratio_to_fastest_peer"].get<double>(), 1) << "x"
                      << (rec.value("fastest_peer_overlap", false) ? "~" : "");
            overlapped |= rec.value("fastest_peer_overlap", false);
          }
          std::cout << '\n';
        }
        // A peer that should have timed the case and did not is told under its row, not only
        // in the JSON: its missing figure is not a missing op.
        for (const bench::PeerTiming& p : m.peers)
          if (p.failed) std::cout << "    " << p.name << " failed, no figure: " << p.unsupported << '\n';
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
  std::cout << "(ours, peer: median of " << opt.repeats << " runs after " << opt.warmup << " warm-up, "
            << (opt.cold ? "each side timed as the others leave the machine"
                         : "each right after an untimed run of the same side")
            << ", ours and every peer alternating run by run; ratio = peer ms / ours ms; rate = GB/s moved (inputs + output)"
            << (gflops ? ", or GF = GFLOP/s for compute-bound shapes" : "")
            << "; %limit = rate / copy bandwidth" << (gflops ? ", or F: GFLOP/s / FMA peak" : "");
  if (overlapped) std::cout << ";\n ~ = the ratio's two sides' [min, max] ranges overlap: it is within this run's noise";
  if (starred) std::cout << ";\n * = timed through the backend's run(), float conversion of the tensors included";
  if (baseline) std::cout << ";\n r = ratio against our double reference, single-threaded, where the peer lacks the op";
  std::cout << ")\nshapes:\n";
  for (const auto& d : dims) std::cout << "  " << d << '\n';
  json report{{"copy_bandwidth_gbs", copy_gbs}, {"copy_bandwidth_runs_gbs", copy_runs},
              {"fma_peak_gflops", fma.gflops}, {"fma_peak_runs_gflops", fma.runs_gflops}, {"fma_isa", fma.isa},
              {"threads", opt.threads}, {"repeats", opt.repeats},
              {"warmup", opt.warmup}, {"pre_runs", opt.pre_runs()}, {"reduced", opt.reduced}, {"records", records}, {"complete", true},
              {"device", opt.device},
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
  sub->add_flag("--cold", opt->cold,
                "no untimed run of a side right before each of its timed runs (each timed as the others leave the machine)");
  sub->add_option("--device", opt->device, "cpu (halide-cpu), cuda (halide-cuda) or all (default: each that runs here)")
      ->check(CLI::IsMember({"cpu", "cuda", "all"}));
  sub->add_option("--out,-o", opt->out, "JSON report (default out/bench.json)");
  sub->callback([opt] { set_exit_code(run_bench(*opt)); });
}

const CommandRegistrar registrar(40, add_bench);

}  // namespace

}  // namespace oplab::cli
