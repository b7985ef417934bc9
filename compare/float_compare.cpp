#include "compare/float_compare.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "compare/dtype_case.h"
#include "compare/op_compare.h"
#include "core/geometry_rounding.h"
#include "core/op_desc.h"
#include "external/dtype_convert.h"

namespace oplab::compare {

namespace {

// The nudges of the flip search, in units of the backend's u: a chain of a few roundings
// (kSlopeNudge, also the step of the geometry slope) and a generous one (kFarNudge).
constexpr double kSlopeNudge = 4, kFarNudge = 32;

// Largest coordinate magnitude in pixels: where float32 sampling positions lose precision.
double coordinate_scale(const Case& c) {
  double C = 1;
  for (const auto& [name, t] : c.inputs) {
    if (name == "input")
      for (size_t d = 2; d < t.shape.size(); ++d) C = std::max(C, double(t.shape[d]));
    if (!is_coordinate_input(c.op, name)) continue;
    const double s = name == "rois" ? c.params.value("spatial_scale", 1.0) : 1.0;
    for (double v : t.data)
      if (std::isfinite(v) && std::fabs(v) < 1e7) C = std::max(C, std::fabs(v) * s);
  }
  return C;
}


// The coordinate input whose gradient is a difference of neighbouring pixels (deform_conv2d's
// and deform_roi_pool's offset, grid_sample's grid, ms_deform_attn's sampling_locations), or
// nullptr.
const char* coordinate_grads(const Case& c) {
  if (!c.grad_output) return nullptr;
  for (const char* name : {"offset", "grid", "sampling_locations"})
    if (c.inputs.count(name)) return name;
  return nullptr;
}

// The case with its coordinates nudged (the op's compare traits say how).
Case nudged_case(const Case& c, double ra, double rb, double end_sign) {
  Case n = c;
  op_compare(c.op).nudge(n, ra, rb, end_sign);
  return n;
}

struct Tensors {
  std::vector<std::pair<std::string, const Tensor*>> list;
};

Tensors all_tensors(const Result& r) {
  Tensors t;
  for (const auto& [name, x] : r.outputs) t.list.emplace_back("outputs." + name, &x);
  for (const auto& [name, x] : r.grads) t.list.emplace_back("grads." + name, &x);
  return t;
}

const Tensor* find(const Result& r, const std::string& key) {
  for (const auto& [name, t] : all_tensors(r).list)
    if (name == key) return t;
  return nullptr;
}

bool same_class(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return true;
}

}  // namespace

// Float32 rounding of every input, as the kernel sees them, then whatever the op's kernels
// round beyond their inputs (the op's compare traits).
Case float_rounded_case(const Case& c) {
  Case f = c;
  for (auto& [name, t] : f.inputs)
    for (double& v : t.data) v = double(float(v));
  if (auto round = op_compare(c.op).kernel_rounding) round(f);
  return f;
}

namespace {

// Every floating number of a parameter value (a scalar or a list of them) rounded to t:
// integers, booleans and strings stay as they are.
void round_params(nlohmann::json& j, DType t) {
  if (j.is_number_float()) {
    j = round_to_dtype(j.get<double>(), t);
  } else if (j.is_array() || j.is_object()) {
    for (auto& v : j) round_params(v, t);
  }
}

}  // namespace

Case dtype_formed_case(const Case& c, DType t) {
  Case f = dtype_rounded_case(c, t);
  round_params(f.params, t);
  if (auto scale = op_compare(c.op).dtype_geometry) scale(f, t);
  if (t == DType::Float32)
    if (auto round = op_compare(c.op).kernel_rounding) round(f);
  return f;
}

namespace {

// ---- step 1: evaluate

// The reference, its magnitude case (the A of every bound) and the backend. False, with the
// outcome set to Error or Unsupported, when either side cannot be evaluated.
struct Sides {
  Result want, got, mag;
};

// The A of every bound: the reference (through `eval`) on the magnitude case(s).
// `partials`: as OpCompare::magnitude takes it.
Result magnitude_result(Backend& ref, const Case& c, const std::function<Result(Backend&, const Case&)>& eval,
                        bool partials) {
  Result mag = eval(ref, magnitude_case(c));
  // Weights of either sign: the op states the sum of |terms| itself (OpCompare::magnitude).
  if (auto exact = op_compare(c.op).magnitude) exact(c, mag, partials);
  const char* coord = coordinate_grads(c);
  if (coord && mag.grads.count(coord)) {
    // Coordinate gradients: the largest of the three magnitude estimates (each a lower
    // estimate of the sum of |terms|; the alternating ones are exact for a single sample).
    Tensor& a = mag.grads.at(coord);
    for (int alt : {1, 2}) {
      const Result r = eval(ref, magnitude_case(c, alt));
      const Tensor& b = r.grads.at(coord);
      for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = std::max(std::fabs(a.data[i]), std::fabs(b.data[i]));
    }
  }
  return mag;
}

bool evaluate_sides(Backend& ref, Backend& backend, const Case& c, Sides& s, FloatOutcome& o,
                    const std::function<Result(Backend&, const Case&)>& eval_backend) {
  try {
    s.want = evaluate(ref, c);
    // A kernel forming its geometry in its own type (not the Halide kernels' rule) evaluates
    // its weights there too: the magnitude counts their partial results.
    s.mag = magnitude_result(ref, c, [](Backend& b, const Case& x) { return evaluate(b, x); },
                             o.rule != FlipRule::KernelRounding);
  } catch (const std::exception& e) {  // the oracle's outcome, not the backend's (SPEC §15)
    o.verdict = Verdict::Skipped;
    o.oracle_failed = true;
    o.detail = "the oracle (" + ref.name() + ") failed: " + e.what();
    return false;
  }
  try {
    s.got = eval_backend(backend, c);
  } catch (const KernelCrash& e) {  // its process died or hung (an out-of-process backend)
    o.verdict = Verdict::Error;
    o.detail = e.what();
    o.crashed = true;
    return false;
  } catch (const Unsupported& e) {
    o.verdict = Verdict::Unsupported;
    o.detail = e.what();
    return false;
  } catch (const std::exception& e) {
    o.verdict = Verdict::Error;
    o.detail = e.what();
    return false;
  }
  return true;
}

// ---- step 2: the bound of every element

// B_i = multiple * kappa * (A_i + 1e-3 max A) for the elements of one tensor.
struct TensorBound {
  // multiple x kappa: the rounding of sums and stored values (and, under the kernel-rounding
  // rule, of the coordinates); geo: the coordinates' first-order share for a kernel forming
  // its geometry in its own type, already scaled.
  double multiple = kDefaultBoundMultiple, kappa = 0, geo = 0, amax = 0;
  // Below the dtype's normal range a rounding errs by up to half its smallest subnormal,
  // whatever the value: each of the element's n terms and stored roundings may (float16:
  // 2^-25 each; float32 and bfloat16: 2^-150, nothing).
  double underflow = 0;
  double rel() const { return multiple * kappa + geo; }
  // A magnitude that is not finite (the reference's NaN where a divergence's equivalent puts
  // one) leaves the element the tensor's floor, so that another run may still explain it.
  double at(double a) const {
    return rel() * ((std::isfinite(a) ? std::fabs(a) : 0.0) + 1e-3 * amax) + underflow + 1e-30;
  }
};

// The unit roundoffs of a bound: of the sums (the accumulation type) and of the geometry and
// the stored values (the dtype), and the roundings of stored values counted on top of 2C.
struct Roundoff {
  double acc = 0x1p-24, store = 0x1p-24, stored_values = 0;
  double tiny = 0;  // half the smallest subnormal of the narrower of the two types
};

// Half the smallest positive subnormal of t: the most a rounding to t errs below its normal range.
double half_smallest_subnormal(DType t) {
  switch (t) {
    case DType::Float16: return 0x1p-25;
    case DType::BFloat16: return 0x1p-134;
    case DType::Float32: return 0x1p-150;
    case DType::Float64:
    case DType::UInt8: break;  // uint8 has its own rule (compare/uint8_compare.h)
  }
  return 0x1p-1075;
}

TensorBound tensor_bound(const Case& c, const std::string& key, const Tensor& want, const Tensor& mag, double n_fwd,
                         double C, double multiple, const Roundoff& u) {
  TensorBound b;
  b.multiple = multiple;
  // Gradients sum over every output that reads an element: scale n by the fan-in.
  double n = n_fwd;
  if (key.rfind("grads.", 0) == 0 && c.grad_output && !want.data.empty())
    n = n_fwd * (double(c.grad_output->numel()) / double(want.numel()) + 1) * 4;
  // Under the kernel-rounding rule the coordinates' 2 u C sits inside the 8x multiple, as the
  // Halide kernels' bound always had it. A kernel forming its geometry in its own type gets
  // 2 u C A once more, with a multiple of 2 instead: 2 u C A is already an upper estimate of
  // the slope times the coordinate's error (a bilinear value moves by at most the difference
  // of two pixels per pixel moved), the measured slope term (FlipSearch) covers what is
  // beyond it, and a multiple of 8 would let a float16 kernel on a 64-pixel map off by half
  // its answer pass (tests/test_precision_rule.cpp).
  if (u.stored_values == 0) {
    b.kappa = u.acc * n + u.store * 2 * C;
  } else {
    b.kappa = u.acc * n + u.store * u.stored_values;
    b.geo = 2 * u.store * 2 * C;
  }
  b.underflow = u.tiny * (n + 4);
  for (double v : mag.data)
    if (std::isfinite(v)) b.amax = std::max(b.amax, std::fabs(v));
  return b;
}

// "grads.input[3]: 0.25 vs ref 0.5", the way every verdict names an element.
std::string element_text(const std::string& key, size_t i, double e, double r) {
  std::ostringstream os;
  os.precision(9);
  os << key << "[" << i << "]: " << e << " vs ref " << r;
  return os.str();
}

bool within(double r, double e, double bound) { return same_class(r, e) && (!std::isfinite(r) || std::fabs(e - r) <= bound); }

// ---- step 3: the geometry slope and the flip search

// The reference on the alternatives the backend's flip rule admits, computed on the first
// failing element. Under the kernel-rounding rule (the Halide kernels) that is the
// float32-rounded case alone. Under the rule for a kernel that forms its geometry in its own
// dtype T (SPEC §15), it is the case with its inputs and parameters as T forms them (the
// T-formed case), and that case with its coordinates nudged by kSlopeNudge and kFarNudge T ulps
// (one axis or both, either way, boxes growing and shrinking); where none of those explains an
// element of a case with several boxes, the same nudges of one box at a time (a kernel's
// rounding moves each box its own way: one sample exactly on x = W may land inside in one box
// and outside in another).
//
// Those of them within kSlopeNudge ulps that take every discrete decision as the case does
// (for values and feature gradients the floor of a bilinear sample may differ: the value is
// continuous across it) measure the slope term (b) of SPEC §15: how far the rounding of the
// geometry moves each element continuously. An element within its bound plus twice the
// largest such move agrees. Any alternative that reproduces the backend's value otherwise is a
// flip, of the first kind of decision it moves (named on first use).
class FlipSearch {
 public:
  FlipSearch(Backend& ref, const Case& c, FlipRule rule, DType dtype) : ref_(ref), c_(c), rule_(rule), dtype_(dtype) {}

  // True when element i of `key` (reference r, backend e, shape `shape`) is within `bound`
  // plus twice the geometry's slope term.
  bool slope_explains(const std::string& key, const Shape& shape, size_t i, double r, double e, double bound) {
    if (rule_ == FlipRule::KernelRounding || !std::isfinite(r) || !std::isfinite(e)) return false;
    prepare();
    // A coordinate's gradient is the difference of the pixels around a sample: it jumps where
    // the floor moves. Values and feature gradients do not.
    const bool floor_matters = key.rfind("grads.", 0) == 0 && is_coordinate_input(c_.op, key.substr(6));
    double g = 0;
    for (Alternative& a : alts_) {
      if (a.nudge > kSlopeNudge || a.one_box) continue;
      const Tensor* t = find(a.result, key);
      if (!t || t->shape != shape || !std::isfinite(t->data[i]) || !same_decisions(a, floor_matters)) continue;
      g = std::max(g, std::fabs(t->data[i] - r));
    }
    return g > 0 && std::fabs(e - r) <= bound + 2 * g;
  }

  // The kind of decision that explains element i of `key` at value e, or nullptr. On the
  // other side of a decision the element's magnitude may be larger than on this one (a
  // cut-off side reads 0): the bound grows by the alternative's own value.
  // Where the case's own magnitude of the element is not finite (its reference is NaN or
  // Inf: a pixel of the input is), the bound on a run whose reference is finite there is that
  // run's own, from its magnitude (evaluated for it): the case's bound is only the tensor's
  // floor. (A fuzz case: bicubic on a float64 grid reads a NaN pixel with weight 0, giving
  // NaN; on the grid as float32 it reads other taps, -1.0e-17 in double where float32 sums to
  // 0, and the floor of 1e-30 called the kernel wrong.)
  const FlipKind* explain(const std::string& key, const Shape& shape, size_t i, double e, double bound,
                          const TensorBound& tb, double case_magnitude) {
    prepare();
    if (const FlipKind* k = explain_from(0, key, shape, i, e, bound, tb, case_magnitude)) return k;
    const size_t first_box = alts_.size();
    prepare_one_box();
    return explain_from(first_box, key, shape, i, e, bound, tb, case_magnitude);
  }

  // The same, without the bound's growth by the alternative's value: an element that a bound as
  // wide as its terms admits (SPEC §15's precision exhausted) is not that when one of the
  // reference's runs with the geometry as the kernel forms it reproduces it within `tol` (a
  // float16 box that is empty in half and not in double gives exactly the empty box's answer).
  // `*flip`: the run that reproduces it takes another decision than the case (else it only
  // moved the element continuously: the slope of SPEC §15, not a flip).
  // Whether the case's geometry, formed in the kernel's type, overflows it (a grid value of
  // 12345.5 unnormalised in float16 is past 65504): SPEC §15's precision exhausted for an
  // element the kernel answers with Inf or NaN there.
  bool geometry_overflows() {
    if (rule_ == FlipRule::KernelRounding) return false;
    prepare();
    return overflowed_;
  }

  bool reproduces(const std::string& key, const Shape& shape, size_t i, double e, double tol, const FlipKind** flip) {
    *flip = nullptr;
    if (rule_ == FlipRule::KernelRounding) return false;
    prepare();
    for (Alternative& a : alts_) {
      const Tensor* t = find(a.result, key);
      if (!t || t->shape != shape || !within(t->data[i], e, tol)) continue;
      if (!same_decisions(a, true)) *flip = &kind_of(a);
      return true;
    }
    return false;
  }

 private:
  struct Alternative {
    Case c;
    Result result;
    double nudge = 0;  // in the dtype's ulps
    bool one_box = false;
    // The type the reference formed its geometry in for this run (core/geometry_rounding.h):
    // float64 for the nudged cases, the kernel's type for the geometry-in-T runs.
    DType geometry = DType::Float64;
    GeometryPart part = GeometryPart::Whole;
    bool named = false;
    FlipKind kind = FlipKind::InputRounding;
    int same[2] = {-1, -1};  // takes the case's decisions (all but floors, all): -1 not yet known
    std::optional<Result> mag;  // its magnitude run, where an element needs it (magnitude_of)
  };

  // The first kind of decision the alternative takes otherwise than the case (named on first use).
  const FlipKind& kind_of(Alternative& a) {
    if (!a.named) {
      GeometryIn scope(a.geometry, a.part);  // its decisions as its run took them
      a.kind = flip_kind_between(c_, decisions(), a.c);
      a.named = true;
    }
    return a.kind;
  }

  const FlipKind* explain_from(size_t from, const std::string& key, const Shape& shape, size_t i, double e, double bound,
                               const TensorBound& tb, double case_magnitude) {
    for (size_t n = from; n < alts_.size(); ++n) {
      Alternative& a = alts_[n];
      const Tensor* t = find(a.result, key);
      if (!t || t->shape != shape) continue;  // a rounded scale factor may change the output's size
      const double ra = t->data[i];
      double b = bound + tb.rel() * std::fabs(ra);
      if (!std::isfinite(case_magnitude) && std::isfinite(ra)) b = std::max(b, tb.at(magnitude_of(a, key, shape, i)));
      if (!within(ra, e, b)) continue;
      return &kind_of(a);
    }
    return nullptr;
  }

  // The run's own magnitude of element i of `key` (NaN where it has none), evaluated once per run.
  double magnitude_of(Alternative& a, const std::string& key, const Shape& shape, size_t i) {
    if (!a.mag) {
      try {
        GeometryIn scope(a.geometry, a.part);
        a.mag = magnitude_result(ref_, a.c, [](Backend& b, const Case& x) { return evaluate(b, x); },
                                 rule_ != FlipRule::KernelRounding);
      } catch (const std::exception&) {
        a.mag = Result{};
      }
    }
    const Tensor* m = find(*a.mag, key);
    return m && m->shape == shape ? m->data[i] : NAN;
  }

  // The nudges of one level: either axis alone or both, either way, the end corner with or
  // against the start.
  template <class F>
  static void each_nudge(F&& f) {
    for (double ulps : {kSlopeNudge, kFarNudge})
      for (double sa : {1.0, -1.0, 0.0})
        for (double sb : {1.0, -1.0, 0.0})
          if (sa != 0 || sb != 0)
            for (double end_sign : {1.0, -1.0}) f(ulps, sa, sb, end_sign);
  }

  void prepare() {
    if (ready_) return;
    ready_ = true;
    if (rule_ == FlipRule::KernelRounding) {
      add(float_rounded_case(c_), 0, false);
      return;
    }
    formed_ = dtype_formed_case(c_, dtype_);
    add(formed_, 0, false);
    // The reference with its geometry formed in T, each operation rounded as the kernel rounds
    // it: on the case with spatial_scale as given (torch multiplies by a double scale) and on
    // the T-formed one (a kernel that rounds the scale first); a float16 or bfloat16 kernel may
    // form its geometry in float32 instead (it loads half and computes in float).
    // Some kernels round only the scales they derive from the parameters (torch's CPU
    // interpolate: a float scale, the source coordinate in double).
    for (DType g : {dtype_, DType::Float32}) {
      add_in(g, GeometryPart::Whole, c_);
      // The case formed in g: a half kernel that computes in float rounds its scale to float.
      add_in(g, GeometryPart::Whole, g == dtype_ ? formed_ : dtype_formed_case(c_, g));
      add_in(g, GeometryPart::Parameters, c_);
      if (dtype_ == DType::Float32) break;
    }
    const double u = unit_roundoff(dtype_);
    each_nudge([&](double ulps, double sa, double sb, double end_sign) {
      add(nudged_case(formed_, sa * ulps * u, sb * ulps * u, end_sign), ulps, false);
    });
  }

  // Boxes nudged one at a time (a case with 2 to 8 boxes; more would cost too many runs).
  void prepare_one_box() {
    if (rule_ == FlipRule::KernelRounding || boxes_ready_) return;
    boxes_ready_ = true;
    auto it = formed_.inputs.find("rois");
    if (it == formed_.inputs.end() || it->second.rank() != 2 || it->second.dim(0) < 2 || it->second.dim(0) > 8) return;
    const Tensor& rois = it->second;
    const double u = unit_roundoff(dtype_);
    each_nudge([&](double ulps, double sa, double sb, double end_sign) {
      const Case all = nudged_case(formed_, sa * ulps * u, sb * ulps * u, end_sign);
      for (int64_t k = 0; k < rois.dim(0); ++k) {
        Case one = formed_;
        Tensor& r = one.inputs.at("rois");
        for (int64_t j = 0; j < rois.dim(1); ++j) r.at(k, j) = all.inputs.at("rois").at(k, j);
        add(one, ulps, true);
      }
    });
  }

  void add_in(DType geometry, GeometryPart part, const Case& alt) {
    try {
      GeometryIn scope(geometry, part);
      Alternative a{alt, evaluate(ref_, alt), 0, false, geometry, part};
      overflowed_ |= geometry_overflowed();
      alts_.push_back(std::move(a));
    } catch (const std::exception&) {
    }
  }

  void add(const Case& alt, double nudge, bool one_box) {
    try {
      Alternative a{alt, evaluate(ref_, alt), nudge, one_box};
      alts_.push_back(std::move(a));
    } catch (const std::exception&) {  // a nudge that makes the case invalid proves nothing
    }
  }

  bool same_decisions(Alternative& a, bool floors) {
    int& same = a.same[floors ? 1 : 0];
    if (same < 0) {
      try {
        Decisions da;
        {
          GeometryIn scope(a.geometry, a.part);
          op_compare(c_.op).decisions(a.c, da);
        }
        same = 1;
        for (size_t k = 0; k < kFlipKinds; ++k)
          if ((floors || FlipKind(k) != FlipKind::Floor) && da.of[k] != decisions().of[k]) same = 0;
      } catch (const std::exception&) {  // no decisions listed: no slope can be told from a flip
        same = 0;
      }
    }
    return same == 1;
  }

  const Decisions& decisions() {
    if (!decided_) decisions_ = decisions_of(c_);
    decided_ = true;
    return decisions_;
  }

  Backend& ref_;
  const Case& c_;
  FlipRule rule_;
  DType dtype_;
  Case formed_;
  bool ready_ = false, boxes_ready_ = false, decided_ = false, overflowed_ = false;
  std::vector<Alternative> alts_;
  Decisions decisions_;
};

// ---- step 4: the tie range

// roi_align max: near-tied samples whose order float32 rounding may swap. An element of
// grad_input is explained if it lies within the range the choice of winners allows (the op's
// tie_range, computed on first use). `geometry`: the samples as the reference places them with
// its geometry in that type (core/geometry_rounding.h): a float32 kernel whose sample lands
// 2^-22 below a row gives that row a weight the double samples never give it, whichever wins.
class TieRange {
 public:
  TieRange(const Case& c, double tolerance, DType geometry = DType::Float64)
      : c_(c), tolerance_(tolerance), geometry_(geometry) {}

  bool explains(const std::string& key, size_t i, double e, double bound) {
    if (key != "grads.input" || !std::isfinite(e) || !op_compare(c_.op).tie_range) return false;
    if (!ready_) {
      ready_ = true;
      GeometryIn scope(geometry_);
      has_ties_ = op_compare(c_.op).tie_range(c_, tolerance_, lo_, hi_);
    }
    return has_ties_ && e >= lo_.data[i] - bound && e <= hi_.data[i] + bound;
  }

 private:
  const Case& c_;
  double tolerance_;
  DType geometry_;
  bool ready_ = false, has_ties_ = false;
  Tensor lo_, hi_;
};

// The forward output's SPEC §9 metrics and per-element ratio and ULP distance, for reports.
void start_output_record(FloatOutcome& o, const Tensor& want, const Tensor& got) {
  o.output_metrics = measure(want, got, Dtype::F32, 1e-6);
  o.output_shape = want.shape;
  o.output_ratio.assign(want.data.size(), NAN);
  o.output_ulp.assign(want.data.size(), NAN);
}

}  // namespace

FloatOutcome compare_float_backend(Backend& ref, Backend& backend, const Case& sent, double multiple) {
  return compare_float_backend(ref, backend, sent, multiple, [](Backend& b, const Case& c) { return evaluate(b, c); });
}

FloatOutcome compare_float_backend(Backend& ref, Backend& backend, const Case& sent, double multiple,
                                   const std::function<Result(Backend&, const Case&)>& eval_backend) {
  // The case as the backend is sent it (rounded to its dtype, without grad_output when it has
  // no backward), and the unit roundoff of that dtype in every bound (SPEC §9, §10).
  // A backend that declares no float type is compared as float32 (what this comparison was
  // asked for).
  const Case c = case_for(backend, sent);
  const DType dtype = backend.dtype(c.op) == DType::Float64 ? DType::Float32 : backend.dtype(c.op);
  const DType acc = backend.dtype(c.op) == DType::Float64 ? dtype : backend.accumulation(c.op);
  FloatOutcome o;
  o.rule = flip_rule(backend);
  o.flip_budget = flip_budget(c.op, backend);
  // Sums in the accumulation type, geometry and stored values in the dtype; a kernel whose
  // geometry is not the reference's also rounds its weights and its result to the dtype (a few
  // more roundings of each term).
  const Roundoff u{unit_roundoff(acc), unit_roundoff(dtype), o.rule == FlipRule::KernelRounding ? 0.0 : 4.0,
                   std::max(half_smallest_subnormal(dtype), half_smallest_subnormal(acc))};
  Sides s;
  if (!evaluate_sides(ref, backend, c, s, o, eval_backend)) return o;

  const double n_fwd = op_compare(c.op).forward_terms(c), C = coordinate_scale(c);
  FlipSearch flips(ref, c, o.rule, dtype);
  TieRange ties(c, multiple * (u.acc * n_fwd + u.store * 2 * C));
  // A kernel forming its geometry in its own type also places its samples there.
  TieRange ties_in_t(c, multiple * (u.acc * n_fwd + u.store * 2 * C),
                     o.rule == FlipRule::KernelRounding ? DType::Float64 : dtype);
  bool flipped = false;
  double widest = 0;     // the largest relative error a bound admitted where it was leaned on
  std::string leaning;   // the first element that passed only because its bound is that wide
  std::string overflow;  // the first non-finite element where the geometry overflows the dtype
  for (const auto& [key, w] : all_tensors(s.want).list) {
    const Tensor* g = find(s.got, key);
    if (!g || g->shape != w->shape) {
      o.verdict = Verdict::Disagree;
      o.detail = key + (g ? ": shape " + shape_str(g->shape) + " != " + shape_str(w->shape) : " missing");
      return o;
    }
    const Tensor& a = *find(s.mag, key);
    const TensorBound tb = tensor_bound(c, key, *w, a, n_fwd, C, multiple, u);
    const bool is_output = key == "outputs.output";
    if (is_output) start_output_record(o, *w, *g);
    for (size_t i = 0; i < w->data.size(); ++i) {
      const double r = w->data[i], e = g->data[i];
      const double bound = tb.at(a.data[i]);
      if (is_output && std::isfinite(r) && std::isfinite(e)) {
        o.output_ratio[i] = std::fabs(e - r) / (bound / multiple);
        o.output_ulp[i] = ulp_distance(r, e, Dtype::F32);
      }
      if (within(r, e, bound)) {
        if (std::isfinite(r)) o.worst_ratio = std::max(o.worst_ratio, std::fabs(e - r) / (bound / multiple));
        // Off by more than a thousandth of its terms, passed by a bound as wide as the terms,
        // unless the reference with the kernel's geometry gives it within that thousandth.
        const double thousandth = 1e-3 * (std::fabs(a.data[i]) + 1e-3 * tb.amax);
        if (tb.rel() >= 1 && std::fabs(e - r) > thousandth) {
          const FlipKind* k = nullptr;
          if (flips.reproduces(key, w->shape, i, e, thousandth, &k)) {
            if (k) {
              ++o.flips[size_t(*k)];
              flipped = true;
            } else {
              ++o.slope_passes;
            }
            continue;
          }
          widest = std::max(widest, tb.rel());
          if (leaning.empty()) leaning = element_text(key, i, e, r);
        }
        continue;
      }
      if (flips.slope_explains(key, w->shape, i, r, e, bound)) {
        ++o.slope_passes;
        continue;
      }
      if (const FlipKind* k = flips.explain(key, w->shape, i, e, bound, tb, a.data[i])) {
        ++o.flips[size_t(*k)];
        flipped = true;
        continue;
      }
      if (ties.explains(key, i, e, bound) || (o.rule != FlipRule::KernelRounding && ties_in_t.explains(key, i, e, bound))) {
        ++o.flips[size_t(FlipKind::MaxWinnerTie)];
        flipped = true;
        continue;
      }
      if (!std::isfinite(e) && std::isfinite(r) && flips.geometry_overflows()) {
        if (overflow.empty()) overflow = element_text(key, i, e, r);
        continue;
      }
      std::ostringstream os;
      os.precision(9);
      os << element_text(key, i, e, r) << " (bound " << bound << ")";
      o.verdict = Verdict::Disagree;
      o.detail = os.str();
      return o;
    }
  }
  if (flipped) o.verdict = Verdict::BoundaryFlip;
  // A bound that admits an error as large as the terms themselves (u (n + 2C) x multiple >= 1:
  // tens of millions of terms, or coordinates of millions of pixels) passes anything: a case
  // that passed only through such a bound is no evidence either way, never agreement.
  if (!leaning.empty()) {
    std::ostringstream os;
    os.precision(3);
    os << "precision exhausted: " << leaning << " passed only under a " << dtype_name(dtype) << " bound (accumulating in "
       << dtype_name(acc) << ") that admits a relative error of " << widest << " (" << n_fwd
       << " terms per element, coordinates up to " << C << " px)";
    o.verdict = Verdict::PrecisionExhausted;
    o.detail = os.str();
  }
  if (!overflow.empty()) {
    o.verdict = Verdict::PrecisionExhausted;
    o.detail = "precision exhausted: " + overflow + ": the case's geometry, formed in " + dtype_name(dtype) +
               ", exceeds its largest value";
  }
  return o;
}

// The magnitude case. `alternate` = 0 takes |x| everywhere. For the gradients of coordinates
// (offsets), which are differences of neighbouring pixels, |x| would make those differences
// cancel; alternate = 1 (2) flips the sign of every other row (column) of the feature map, so
// that v(y0+1, .) - v(y0, .) adds the two magnitudes, with one sign per sampling point: the
// reference's d/dy (d/dx) of that case is then the sum of |terms| the element accumulates.
Case magnitude_case(const Case& c, int alternate) {
  Case m = c;
  for (auto& [name, t] : m.inputs)
    if (!is_coordinate_input(c.op, name))
      for (double& v : t.data) v = std::fabs(v);
  if (alternate && op_compare(c.op).alternate_signs) {
    op_compare(c.op).alternate_signs(m, alternate);
  } else if (alternate && m.inputs.count("input")) {
    Tensor& x = m.inputs.at("input");
    const int64_t H = x.dim(x.rank() - 2), W = x.dim(x.rank() - 1);
    for (size_t i = 0; i < x.data.size(); ++i) {
      const int64_t line = alternate == 1 ? (int64_t(i) / W) % H : int64_t(i) % W;
      if (line % 2) x.data[i] = -x.data[i];
    }
  }
  if (m.grad_output)
    for (double& v : m.grad_output->data) v = std::fabs(v);
  return m;
}

std::map<std::string, Tensor> element_bounds(Backend& ref, const Case& c, const Result& want, double u, double multiple,
                                             const std::function<Result(Backend&, const Case&)>& eval) {
  // Every kernel these bounds judge (a double backend, a gradient's finite differences) may
  // evaluate its weights' polynomials in the bound's type.
  const Result mag = magnitude_result(ref, c, eval, true);
  const double n_fwd = op_compare(c.op).forward_terms(c), C = coordinate_scale(c);
  std::map<std::string, Tensor> bounds;
  for (const auto& [key, w] : all_tensors(want).list) {
    const Tensor* a = find(mag, key);
    if (!a || a->shape != w->shape) continue;
    const TensorBound tb = tensor_bound(c, key, *w, *a, n_fwd, C, multiple, Roundoff{u, u, 0});
    Tensor b(w->shape);
    for (size_t i = 0; i < b.data.size(); ++i) b.data[i] = tb.at(a->data[i]);
    bounds.emplace(key, std::move(b));
  }
  return bounds;
}

}  // namespace oplab::compare
