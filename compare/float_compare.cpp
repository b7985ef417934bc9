#include "compare/float_compare.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "compare/op_compare.h"
#include "core/op_desc.h"

namespace oplab::compare {

const char* float_outcome_name(FloatOutcome::Kind k) {
  switch (k) {
    case FloatOutcome::Pass: return "pass";
    case FloatOutcome::Flip: return "boundary-flip";
    case FloatOutcome::Fail: return "FAIL";
    case FloatOutcome::Unsupported: return "unsupported";
    case FloatOutcome::Error: return "ERROR";
  }
  return "?";
}

namespace {

constexpr double kU = 1.0 / (1 << 24);  // unit roundoff of float32

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

// The magnitude case. `alternate` = 0 takes |x| everywhere. For the gradients of coordinates
// (offsets), which are differences of neighbouring pixels, |x| would make those differences
// cancel; alternate = 1 (2) flips the sign of every other row (column) of the feature map, so
// that v(y0+1, .) - v(y0, .) adds the two magnitudes, with one sign per sampling point: the
// reference's d/dy (d/dx) of that case is then the sum of |terms| the element accumulates.
Case magnitude_case(const Case& c, int alternate = 0) {
  Case m = c;
  for (auto& [name, t] : m.inputs)
    if (!is_coordinate_input(c.op, name))
      for (double& v : t.data) v = std::fabs(v);
  if (alternate && m.inputs.count("input")) {
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

bool has_coordinate_grads(const Case& c) { return c.grad_output && c.inputs.count("offset"); }

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

FloatOutcome compare_float_backend(Backend& ref, Backend& backend, const Case& c, double multiple) {
  FloatOutcome o;
  Result want, got, mag;
  try {
    want = evaluate(ref, c);
    mag = evaluate(ref, magnitude_case(c));
    if (has_coordinate_grads(c) && mag.grads.count("offset")) {
      // Coordinate gradients: the largest of the three magnitude estimates (each a lower
      // estimate of the sum of |terms|; the alternating ones are exact for a single sample).
      Tensor& a = mag.grads.at("offset");
      for (int alt : {1, 2}) {
        const Result r = evaluate(ref, magnitude_case(c, alt));
        const Tensor& b = r.grads.at("offset");
        for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = std::max(std::fabs(a.data[i]), std::fabs(b.data[i]));
      }
    }
  } catch (const std::exception& e) {
    o.kind = FloatOutcome::Error;
    o.detail = std::string("ref: ") + e.what();
    return o;
  }
  try {
    got = evaluate(backend, c);
  } catch (const Unsupported& e) {
    o.kind = FloatOutcome::Unsupported;
    o.detail = e.what();
    return o;
  } catch (const std::exception& e) {
    o.kind = FloatOutcome::Error;
    o.detail = e.what();
    return o;
  }

  const double n_fwd = op_compare(c.op).forward_terms(c), C = coordinate_scale(c);
  // Candidate references for the flip check: float-rounded inputs, then coordinates nudged
  // by a few ulps either way. Computed only when an element fails.
  std::vector<Result> alternatives;
  bool alternatives_ready = false;
  auto ensure_alternatives = [&] {
    if (alternatives_ready) return;
    alternatives_ready = true;
    const Case fr = float_rounded_case(c);
    alternatives.push_back(evaluate(ref, fr));
    for (double rel : {4 * kU, 32 * kU})
      for (double sa : {1.0, -1.0})
        for (double sb : {1.0, -1.0})
          for (double end_sign : {1.0, -1.0}) {
            try {
              alternatives.push_back(evaluate(ref, nudged_case(fr, sa * rel, sb * rel, end_sign)));
            } catch (const std::exception&) {  // a nudge that makes the case invalid proves nothing
            }
          }
  };

  bool flipped = false;
  bool tie_range_ready = false, has_ties = false;
  Tensor tie_lo, tie_hi;
  for (const auto& [key, w] : all_tensors(want).list) {
    const Tensor* g = find(got, key);
    const Tensor* a = find(mag, key);
    if (!g || g->shape != w->shape) {
      o.kind = FloatOutcome::Fail;
      o.detail = key + (g ? ": shape " + shape_str(g->shape) + " != " + shape_str(w->shape) : " missing");
      return o;
    }
    // Gradients sum over every output that reads an element: scale n by the fan-in.
    double n = n_fwd;
    if (key.rfind("grads.", 0) == 0 && c.grad_output && !w->data.empty())
      n = n_fwd * (double(c.grad_output->numel()) / double(w->numel()) + 1) * 4;
    const double kappa = kU * (n + 2 * C);
    const bool is_output = key == "outputs.output";
    if (is_output) {
      o.output_metrics = measure(*w, *g, Dtype::F32, 1e-6);
      o.output_shape = w->shape;
      o.output_ratio.assign(w->data.size(), NAN);
      o.output_ulp.assign(w->data.size(), NAN);
    }
    double amax = 0;
    for (double v : a->data)
      if (std::isfinite(v)) amax = std::max(amax, std::fabs(v));
    for (size_t i = 0; i < w->data.size(); ++i) {
      const double r = w->data[i], e = g->data[i];
      const double bound = multiple * kappa * (std::fabs(a->data[i]) + 1e-3 * amax) + 1e-30;
      const bool ok = same_class(r, e) && (!std::isfinite(r) || std::fabs(e - r) <= bound);
      if (is_output && std::isfinite(r) && std::isfinite(e)) {
        o.output_ratio[i] = std::fabs(e - r) / (bound / multiple);
        o.output_ulp[i] = ulp_distance(r, e, Dtype::F32);
      }
      if (ok) {
        if (std::isfinite(r)) o.worst_ratio = std::max(o.worst_ratio, std::fabs(e - r) / (bound / multiple));
        continue;
      }
      // A discrete decision taken the other way by float32?
      ensure_alternatives();
      bool explained = false;
      for (const Result& alt : alternatives) {
        const Tensor* t = find(alt, key);
        if (!t) continue;
        const double ra = t->data[i];
        // On the other side of the decision the element's magnitude may be larger than on
        // this one (a cut-off side reads 0): the bound grows by the alternative's own value.
        const double alt_bound = bound + multiple * kappa * std::fabs(ra);
        if (same_class(ra, e) && (!std::isfinite(ra) || std::fabs(e - ra) <= alt_bound)) explained = true;
      }
      // roi_align max: near-tied samples whose order float32 rounding may swap. The element
      // is explained if it lies within the range the choice of winners allows.
      if (!explained && key == "grads.input" && std::isfinite(e) && op_compare(c.op).tie_range) {
        if (!tie_range_ready) {
          tie_range_ready = true;
          has_ties = op_compare(c.op).tie_range(c, multiple * kU * (n_fwd + 2 * C), tie_lo, tie_hi);
        }
        if (has_ties) explained = e >= tie_lo.data[i] - bound && e <= tie_hi.data[i] + bound;
      }
      if (explained) {
        flipped = true;
        continue;
      }
      std::ostringstream os;
      os.precision(9);
      os << key << "[" << i << "]: " << e << " vs ref " << r << " (bound " << bound << ")";
      o.kind = FloatOutcome::Fail;
      o.detail = os.str();
      return o;
    }
  }
  if (flipped) o.kind = FloatOutcome::Flip;
  return o;
}

}  // namespace oplab::compare
