#include "peer/pillow_backend.h"
#include "peer/feature_values.h"
#include "peer/plane_resize_repro.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>

#include "core/case_io.h"
#include "core/line_child.h"
#include "core/op_desc.h"
#include "core/params.h"
#include "external/exec_backend.h"
#include "peer/uint8_two_pass.h"

#ifndef OPLAB_PYTHON
#define OPLAB_PYTHON "/usr/bin/python3"
#endif
#ifndef OPLAB_PILLOW_SCRIPT
#define OPLAB_PILLOW_SCRIPT "pillow_bridge.py"
#endif

namespace oplab {

namespace fs = std::filesystem;

namespace {

std::string env_or(const char* var, const std::string& fallback) {
  const char* v = std::getenv(var);
  return (v && *v) ? std::string(v) : fallback;
}

// OPLAB_PILLOW_SCRIPT, else the copy an install put under PREFIX/share/oplab, else the source
// tree's.
std::string script_path() {
  if (const char* v = std::getenv("OPLAB_PILLOW_SCRIPT"); v && *v) return v;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "oplab" / "pillow_bridge.py";
    if (fs::exists(installed, ec)) return installed.string();
  }
  return OPLAB_PILLOW_SCRIPT;
}

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// What Pillow's Image.resize cannot be asked (SPEC §16), known from the case alone.
std::optional<std::string> why_unsupported(const Case& c) {
  if (c.op != "interpolate") return "the pillow peer has only interpolate (Image.resize), not " + c.op;
  const InterpParams p = parse_interpolate(c);
  if (p.axes.size() != 2) return std::string("Pillow resizes 2-D images only, not 1-D or 3-D input");
  if (p.align_corners) return std::string("Image.resize has no align_corners (its grid is half-pixel)");
  if (p.mode == InterpMode::Nearest)
    return std::string("Pillow's NEAREST reads int((dst + 0.5) * in/out), nearest-exact's rule, not nearest's floor(dst * scale)");
  if (p.N * p.C > 4096) return std::string("the pillow bridge resizes one plane at a time: at most 4096 planes");
  return std::nullopt;
}

class PillowBackend : public Backend {
 public:
  explicit PillowBackend(bool uint8 = false) : uint8_(uint8) {}
  std::string name() const override { return uint8_ ? "pillow-uint8" : "pillow"; }
  std::string description() const override {
    return std::string("Pillow Image.resize on ") + (uint8_ ? "mode L (8-bit)" : "mode F (float32)") +
           " images, one [H, W] plane at a time, via a Python bridge (" + python() +
           "); BILINEAR, BICUBIC (antialiased, a = -0.5), NEAREST, BOX; forward only";
  }
  bool opt_in() const override { return uint8_; }
  double uint8_error(const Case& c) const override { return uint8_ ? pillow_uint8_error(c).rounding : 0.0; }
  double uint8_clipping(const Case& c) const override { return uint8_ ? pillow_uint8_error(c).clipping : 0.0; }
  std::optional<std::string> unavailable_reason() const override { return inner().unavailable_reason(); }
  std::optional<std::string> unsupported_reason(const Case& c) const override {
    if (auto why = why_unsupported(c)) return why;
    // Measured (Image.resize in mode F, box and bilinear): 0 where a NaN pixel makes the
    // spec's output NaN; uint8 images are quantised, finite.
    if (!uint8_ && any_non_finite(c.in("input")))
      return std::string("Pillow's float resize answers 0 where a NaN pixel makes the spec's output NaN");
    return std::nullopt;
  }
  DType dtype(const std::string&) const override { return uint8_ ? DType::UInt8 : DType::Float32; }
  bool computes_grads(const std::string&) const override { return false; }
  bool out_of_process() const override { return true; }
  const std::vector<Divergence>& divergences() const override { return pillow_divergences(); }
  bool writes_repro() const override { return true; }
  std::optional<ReproScript> repro_script(const ReproRequest& r) const override { return pillow_repro(r, uint8_); }
  Result run(const Case& c, const ValidParams& vp) override {
    if (auto why = why_unsupported(c)) throw Unsupported("pillow: " + *why);
    Result r = inner().run(c, vp);
    r.backend = name();
    return r;
  }

 private:
  static std::string python() { return env_or("OPLAB_PYTHON", OPLAB_PYTHON); }

  Backend& inner() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!inner_) {
      ExecSpec s;
      s.name = name();
      s.command = "exec " + quoted(python()) + " -u " + quoted(script_path()) + (uint8_ ? " --mode L" : " --mode F");
      std::error_code ec;
      s.log = (fs::temp_directory_path(ec) / ("oplab-" + name() + "-" + std::to_string(getpid()) + ".stderr.log")).string();
      s.timeout_s = 60;  // a large plane stack through JSON takes a while
      inner_ = make_exec_backend(s);
    }
    return *inner_;
  }

  bool uint8_;
  mutable std::mutex mutex_;
  mutable std::unique_ptr<Backend> inner_;
};

std::unique_ptr<Backend> make_f() { return make_pillow_backend(false); }
std::unique_ptr<Backend> make_l() { return make_pillow_backend(true); }
const BackendRegistrar kPillow(kOrderPillow, make_f), kPillowL(kOrderPillow + 1, make_l);

// Pillow's filters (Resample.c): triangle, Keys' cubic a = -0.5, the box 1 on (-0.5, 0.5].
double pillow_filter(InterpMode mode, double x) {
  const double t = std::fabs(x), a = -0.5;
  switch (mode) {
    case InterpMode::Bilinear: return t < 1 ? 1 - t : 0;
    case InterpMode::Bicubic:
      if (t < 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
      if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
      return 0;
    default: return x > -0.5 && x <= 0.5 ? 1 : 0;
  }
}

}  // namespace

std::unique_ptr<Backend> make_pillow_backend(bool uint8) { return std::make_unique<PillowBackend>(uint8); }

PillowTaps pillow_taps(InterpMode mode, int64_t in, int64_t out) {
  const double s = double(in) / double(out), stretch = std::max(s, 1.0);
  const double support = (mode == InterpMode::Bicubic ? 2.0 : mode == InterpMode::Bilinear ? 1.0 : 0.5) * stretch;
  PillowTaps taps(static_cast<size_t>(out));
  for (int64_t o = 0; o < out; ++o) {
    const double centre = (double(o) + 0.5) * s;
    const int64_t lo = std::max<int64_t>(int64_t(centre - support + 0.5), 0);
    const int64_t hi = std::min<int64_t>(int64_t(centre + support + 0.5), in);
    double total = 0;
    for (int64_t i = lo; i < hi; ++i) {
      const double w = pillow_filter(mode, (double(i) - centre + 0.5) / stretch);
      taps[size_t(o)].push_back({i, w});
      total += w;
    }
    if (total != 0)
      for (auto& t : taps[size_t(o)]) t.second /= total;
  }
  return taps;
}

Uint8Error pillow_uint8_error(const Case& c) {
  const InterpParams p = parse_interpolate(c);
  if (p.axes.size() != 2 || p.mode == InterpMode::NearestExact || p.mode == InterpMode::Nearest) return {};  // copies
  // Resample.c: the horizontal pass first, then the vertical one, 22 fractional bits.
  return two_pass_uint8_error(pillow_taps(p.mode, p.axes[0].in, p.axes[0].out), pillow_taps(p.mode, p.axes[1].in, p.axes[1].out),
                              c.in("input"), true, 22);
}

std::function<double(int)> start_pillow_bench(const Case& c, int threads) {
  PillowBackend b;
  if (auto why = b.unavailable_reason()) throw BackendUnavailable("pillow: " + *why);
  validate_case(c);
  if (auto why = why_unsupported(c)) throw Unsupported("pillow: " + *why);
  // Timed only where Image.resize computes the case's own function (no divergence that changes
  // it): not plain bicubic, not plain bilinear shrinking, not area on a non-integer ratio.
  const InterpParams p = parse_interpolate(c);
  bool shrinks = false, integer_bins = true;
  for (const InterpAxis& a : p.axes) shrinks |= a.out < a.in, integer_bins &= a.in % a.out == 0;
  if (!p.antialias && (p.mode == InterpMode::Bicubic || (p.mode == InterpMode::Bilinear && shrinks)))
    throw Unsupported("pillow: BILINEAR and BICUBIC are the antialias filters, another function than this case's");
  if (p.mode == InterpMode::Area && !integer_bins) throw Unsupported("pillow: BOX is area only on integer ratios");
  LineChildOptions o;
  o.argv = {env_or("OPLAB_PYTHON", OPLAB_PYTHON), "-u", script_path(), "--mode", "F", "--bench"};
  o.stderr_path = "/dev/null";
  auto bridge = std::make_shared<LineChild>(std::move(o));
  auto request = [bridge](const json& req) {
    const std::string reply = bridge->request(req.dump(), 600);  // a hung bridge is killed, not waited on
    const json j = json::parse(reply, nullptr, false);
    if (!j.is_object() || j.contains("error") || !j.contains("ms") || j["ms"].empty())
      throw std::runtime_error("pillow: the bench bridge answered: " + reply.substr(0, 160));
    return j["ms"].front().get<double>();
  };
  // The case (its planes) goes once, with one warm-up; later requests time the kept planes.
  (void)request(json{{"case", case_to_json(c)}, {"repeats", 1}, {"warmup", 1}, {"threads", threads}});
  return [request](int pre_runs) { return request(json{{"repeats", 1}, {"warmup", pre_runs}}); };
}

}  // namespace oplab
