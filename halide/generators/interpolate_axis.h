#pragma once
// One spatial axis of interpolate (SPEC §6) as Halide Funcs: the forward taps of every output
// position, the inverse taps of every input position, and the passes that apply them.
//
// Every mode is separable: along one axis, output position d reads source indices idx(d, k)
// with weights w(d, k), k < taps. The forward applies an axis as a gather through these taps;
// the backward applies its exact transpose as a gather too, through the inverse taps: the
// output positions that read source s form one contiguous range [lo(s), hi(s)], because the
// first and last tap of d never decrease as d grows (true of every mode, clamping included).
// A gather needs no atomics on the GPU and no per-plane locking on the CPU.
//
// Tap tables depend on one axis only and are tiny; they are computed once per call and shared
// by every plane. Their coordinates are computed in double (nearest: float32, as PyTorch
// does) with strict_float, in the very operations of reference/interpolate.cpp, so the float32
// kernels take the same discrete decisions (floors, clamps) as the double reference.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "Halide.h"
#include "interpolate_paths.h"

namespace oplab_halide {

enum class InterpKind { Nearest, Linear, Cubic, Area };

// Fixed tap count of a kind; area's is a runtime value (the longest bin).
inline int interp_fixed_taps(InterpKind k) {
  switch (k) {
    case InterpKind::Nearest: return 1;
    case InterpKind::Linear: return 2;
    case InterpKind::Cubic: return 4;
    case InterpKind::Area: return 0;
  }
  return 0;
}

// The 4-D view every kernel works in: (x, y, z, p) = (W, H, D, N*C); 1-D and 2-D inputs have
// unit y/z axes that no pass touches.
struct InterpVars {
  Halide::Var x{"x"}, y{"y"}, z{"z"}, p{"p"};
  std::vector<Halide::Var> all() const { return {x, y, z, p}; }
  Halide::Var axis(int a) const { return all()[size_t(a)]; }
};

// Arguments (x, y, z, p) with the one on axis `a` replaced by `e`.
inline std::vector<Halide::Expr> with_axis(const InterpVars& v, int a, Halide::Expr e) {
  std::vector<Halide::Expr> args{v.x, v.y, v.z, v.p};
  args[size_t(a)] = std::move(e);
  return args;
}

// Every float operation of the tap tables on its own strict_float: Halide's CSE lifts common
// subexpressions out of an enclosing strict_float, so wrapping only the result would leave
// the lifted parts open to FMA contraction and reassociation (and to a floor that differs
// from the reference's by one).
inline Halide::Expr strict(Halide::Expr e) { return Halide::strict_float(std::move(e)); }

// Cubic convolution kernel, A = -0.75 (SPEC §6), in double, in the reference's order of
// operations: ((A+2)t - (A+3)) t t + 1 for t <= 1; ((A t - 5A) t + 8A) t - 4A for t < 2.
inline Halide::Expr cubic_kernel(Halide::Expr d) {
  using namespace Halide;
  const double A = -0.75;
  auto c = [](double v) { return Expr(v); };  // Halide has no double operators: Float(64) constants
  Expr t = abs(d);
  Expr near = strict(strict(strict(strict(strict(c(A + 2.0) * t) - c(A + 3.0)) * t) * t) + c(1.0));
  Expr far = strict(strict(strict(strict(strict(strict(c(A) * t) - c(5.0 * A)) * t) + c(8.0 * A)) * t) - c(4.0 * A));
  return select(t <= c(1.0), near, t < c(2.0), far, c(0.0));
}

// One pass of a separable kernel: g is the pass along `axis`; acc, when defined, is the
// running sum it reads (computed per vector of g, so it lives in registers).
struct InterpPass {
  Halide::Func g, acc;
  int axis = 0;
  // The padded rows a closed form along x reads (InterpAxisTaps::forward_pass), one per pad
  // class: computed per row of g. Each class is written by updates (clamped left end, dense
  // middle, clamped right end); `pad_mids` names the middle ones, the part worth vectorising.
  Halide::Func pad;
  std::vector<std::pair<int, Halide::RVar>> pad_mids;  // (update index, its RVar)
};

// A closed form of one axis' taps, valid when the glue's `x_path` names it: the source index
// of tap k of d, and the last output that reads source s. Closed forms are affine in d (up
// to a division), so a vector of outputs reads a dense or strided run of inputs (loads and
// shuffles) instead of a gather. `mark` wraps the border clamps in likely(), which splits
// the loop into a steady state without clamps and short edges. `reach`: the most outputs
// that read one input, on all but the shortest axes.
struct InterpClosedForm {
  int path;
  std::function<Halide::Expr(Halide::Expr d, Halide::Expr k, bool mark)> source;
  std::function<Halide::Expr(Halide::Expr s, bool mark)> hi;
  int reach;
  // Upsampling along x (cubic): source(d, k) = min(max(raw(d, k), first), in - 1) with raw
  // affine in d, for the `first` of tap k's class. The forward reads tap k from a row padded
  // with those clamped values (pad index j holds input[min(max(j, first), in - 1)]), at
  // raw(d, k): dense loads across the whole row. Through the clamped index instead, the first
  // and last vectors of every row load lane by lane: about half of bicubic's samples at
  // 64-wide rows (perf); padded, the kernel takes 29% fewer samples in cache and 7-12% less
  // time at the bench shape. Empty raw: the form is read through source().
  std::function<Halide::Expr(Halide::Expr d, int k)> raw;
  std::function<int(int k)> pad_class;
  struct Pad {
    int lo, first, hi_past;  // padded row indices [lo, in - 1 + hi_past]; identity from `first`
  };
  std::vector<Pad> pads;
  // The weight of tap k of d when the form fixes it too (kXUpsample2Half), as float32: the
  // tables' own value (the kernel checks every one); empty: weights from the tables.
  std::function<Halide::Expr(Halide::Expr d, Halide::Expr k, bool mark)> weight;
};

// The cubic convolution kernel of cubic_kernel() at a constant, in the same double operations.
inline double cubic_kernel_at(double t) {
  const double A = -0.75;
  if (t <= 1.0) return ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0;
  if (t < 2.0) return ((A * t - 5.0 * A) * t + 8.0 * A) * t - 4.0 * A;
  return 0.0;
}

class InterpAxisTaps {
 public:
  // Forward taps of one axis. `scale`: the kernel scale of SPEC §6 (linear, cubic: double;
  // nearest: the float32 scale, passed widened); `align`: align_corners; `exact`: nearest-exact;
  // `area_taps`: the longest area bin (area only). in/out: the axis' sizes.
  // `path`: when defined, the run-time choice among this axis' closed forms (interpolate_paths.h).
  // `fixed_weights`: offer the forms whose weights are closed too (the forward along x).
  InterpAxisTaps(const std::string& name, InterpKind kind, Halide::Expr in, Halide::Expr out, Halide::Expr scale,
                 Halide::Expr align, Halide::Expr exact, Halide::Expr area_taps, Halide::Expr path = Halide::Expr(),
                 bool fixed_weights = false)
      : name_(name), kind_(kind), in_(in), out_(out), path_(path), fixed_weights_(fixed_weights) {
    using namespace Halide;
    idx = Func(name + "_idx");
    w = Func(name + "_w");
    len = Func(name + "_len");
    taps = kind == InterpKind::Area ? area_taps : Expr(interp_fixed_taps(kind));
    Expr last = in - 1;
    // The coordinate of linear and cubic modes (SPEC §6), the reference's operations in double.
    Expr dd = cast<double>(d_);
    Expr src = select(align, strict(scale * dd), strict(strict(scale * strict(dd + Expr(0.5))) - Expr(0.5)));
    switch (kind) {
      case InterpKind::Nearest: {
        // float32 scale and product, as PyTorch and the reference: floor(float(d) * scale) or
        // floor((d + 0.5f) * scale); d + 0.5 is exact in float below 2^23.
        Expr fs = cast<float>(scale);
        Expr pos = strict(strict(cast<float>(d_) + select(exact, 0.5f, 0.0f)) * fs);
        // Clamp in double: a float near 2^31 would overflow the int cast (positions past `out`
        // are computed for vector tails).
        idx(d_, k_) = cast<int>(min(cast<double>(floor(pos)), cast<double>(last)));
        w(d_, k_) = 1.0f;
        break;
      }
      case InterpKind::Linear: {
        // Negative source clamps to 0; i0 = min(floor(src), in-1), i1 = i0 + (i0 < in-1),
        // lambda = clamp(src - i0, 0, 1). At the last index both taps are in-1.
        Expr s = max(src, Expr(0.0));
        Expr i0 = cast<int>(min(floor(s), cast<double>(last)));
        Expr i1 = i0 + select(i0 < last, 1, 0);
        Expr lambda = clamp(strict(s - cast<double>(i0)), Expr(0.0), Expr(1.0));
        idx(d_, k_) = select(k_ == 0, i0, i1);
        w(d_, k_) = cast<float>(select(k_ == 0, strict(Expr(1.0) - lambda), lambda));
        break;
      }
      case InterpKind::Cubic: {
        // src not clamped; i = floor(src), t = src - i; taps i-1..i+2 clamped into [0, in-1]
        // with weights W(t+1), W(t), W(1-t), W(2-t).
        Expr fi = floor(src);
        Expr t = strict(src - fi);
        // fi is within a few units of [-1, in] for d < out; clamp before the cast for tails.
        Expr i = cast<int>(clamp(fi, Expr(-2.0), cast<double>(in) + Expr(2.0)));
        Expr wk = select(k_ == 0, cubic_kernel(strict(t + Expr(1.0))), k_ == 1, cubic_kernel(t), k_ == 2,
                         cubic_kernel(strict(Expr(1.0) - t)), cubic_kernel(strict(Expr(2.0) - t)));
        idx(d_, k_) = clamp(i - 1 + k_, 0, last);
        w(d_, k_) = cast<float>(wk);
        break;
      }
      case InterpKind::Area: {
        // Adaptive average: bin [floor(d*in/out), ceil((d+1)*in/out)) in exact 64-bit integers
        // (d*in overflows int32 on long axes).
        Expr d64 = cast<int64_t>(d_), in64 = cast<int64_t>(in), out64 = cast<int64_t>(out);
        Expr start = (d64 * in64) / out64;
        Expr end = ((d64 + 1) * in64 + out64 - 1) / out64;
        Expr n = cast<int>(end - start);
        area_first_ = cast<int>(clamp(start, Expr(int64_t(0)), cast<int64_t>(last)));
        area_last_ = cast<int>(clamp(end - 1, Expr(int64_t(0)), cast<int64_t>(last)));
        // The glue passes the longest bin; a shorter bound would silently drop inputs.
        len(d_) = require(d_ >= out || n <= area_taps, n, name + ": area bin of", n, "inputs exceeds area_taps =",
                          area_taps);
        idx(d_, k_) = cast<int>(clamp(start + cast<int64_t>(min(k_, n - 1)), Expr(int64_t(0)), cast<int64_t>(last)));
        w(d_, k_) = cast<float>(strict(Expr(1.0) / cast<double>(n)));
        break;
      }
    }
    if (path_.defined()) define_closed_forms();
    if (!closed_.empty()) {
      // The closed form the glue chose must be the table, index for index. A closed-form
      // version reads no table entry, so a check inside the table would be skipped exactly
      // where it matters (Halide computes no stage whose values go unused): the check is a
      // scalar of its own, a walk over the whole table, which every read through a closed
      // form depends on (fit_term(): its value, 0, is added to the index).
      Expr t = idx(d_, k_), ok = Expr(true);
      for (const auto& cf : closed_) {
        Expr same = t == cf.source(d_, k_, false);
        if (cf.weight) same = same && w(d_, k_) == cf.weight(d_, k_, false);
        ok = select(path_ == cf.path, same, ok);
      }
      Func fits(name + "_fits"), first_bad(name + "_first_bad");
      fits(d_, k_) = ok;
      RDom r(0, out, 0, taps, name + "_fit_r");
      // The first output position whose taps differ, -1 for none. (Tried: a require inside
      // the walk, its value the walk's own; the lowered code had no walk left.)
      first_bad() = -1;
      first_bad() = select(first_bad() < 0 && !fits(r.x, r.y), r.x, first_bad());
      // 0 when all fit, written as first_bad() + 1: a literal 0 would give the call constant
      // bounds, and the simplifier would replace it by 0 and drop the check.
      fit_ = Func(name + "_fit");
      fit_() = require(first_bad() < 0, first_bad() + 1, name + ":", path_name(), "=", path_, "does not fit the taps at",
                       first_bad());
      fit_walk_ = first_bad;
    }
  }

  // 0, once the closed form chosen has been checked against the tables (constructor); the
  // promise keeps bounds inference exact.
  Halide::Expr fit_term() const { return Halide::unsafe_promise_clamped(fit_(), 0, 0); }

  // The parameter that chooses this axis' path: x_path, y_path or z_path (by the axis name).
  std::string path_name() const { return std::string(1, name_.back()) + "_path"; }

  // A condition on the sizes alone that the chosen closed form needs for its reads to stay
  // inside the input (the per-index check of the tables cannot run before the pipeline's
  // own bounds checks, whose message would not name the path): out = 2 in for 2x
  // upsampling, in = r out for r:1 area. True for the tables.
  Halide::Expr sizes_fit() const {
    using namespace Halide;
    using namespace oplab_interp;
    if (!path_.defined()) return Expr(true);
    Expr ok = Expr(true);
    for (const auto& cf : closed_) {
      Expr fits = cf.path == kXUpsample2 || cf.path == kXUpsample2Half ? out_ == 2 * in_
                  : cf.path == kXPool2                                  ? in_ == 2 * out_
                                                                        : in_ == 4 * out_;
      ok = select(path_ == cf.path, fits, ok);
    }
    return ok;
  }

  // The closed forms of this axis' kind (interpolate_paths.h); each is checked by the tables.
  void define_closed_forms() {
    using namespace Halide;
    using namespace oplab_interp;
    Expr last = in_ - 1, out_last = out_ - 1;
    auto L = [](Expr e, bool mark) { return mark ? likely(e) : e; };
    switch (kind_) {
      case InterpKind::Nearest:
        // floor(d * 0.5f) = d / 2; the readers of s are 2s and 2s + 1.
        closed_.push_back({kXUpsample2, [=](Expr d, Expr, bool m) { return min(L(d / 2, m), last); },
                           [=](Expr s, bool m) { return min(L(2 * s + 1, m), out_last); }, kClosedReachNearest, {}, {}, {}, {}});
        break;
      case InterpKind::Linear:
        // src = d/2 - 1/4: i0 = floor((d-1)/2) (0 at d = 0, where src clamps to 0), i1 = i0 + 1
        // (in - 1 at the end); the last reader of s is 2s + 2. align_corners' src =
        // d (in-1)/(2in-1) floors the same way wherever the glue finds it does (all sizes tried).
        // (Read through clamped indices, not padded rows: padding needs two copies of each row
        // here, as output 0 reads input 1 at weight 0, and measured no faster.)
        closed_.push_back({kXUpsample2,
                           [=](Expr d, Expr k, bool m) {
                             Expr i0 = max(L((d - 1) / 2, m), 0);
                             return select(k == 0, i0, min(L(i0 + 1, m), last));
                           },
                           [=](Expr s, bool m) { return min(L(2 * s + 2, m), out_last); }, kClosedReachLinear, {}, {}, {}, {}});
        // align_corners=false, scale 1/2: src = d/2 - 1/4, so lambda is 3/4 at even d and 1/4
        // at odd d, exactly; at d = 0 src clamps to 0: weights 1 and 0 (input 1 is still
        // read, a zero-weight tap: inf there is NaN, as in the reference). In quarters, as
        // integers: the simplifier folds integer selects on the lanes' parity and the loop
        // partitioning moves d = 0 out of the steady state; float selects stay whole under
        // strict_float.
        if (fixed_weights_) {
          InterpClosedForm fixed = closed_.back();
          fixed.path = kXUpsample2Half;
          fixed.weight = [=](Expr d, Expr k, bool m) {
            Expr even = d % 2 == 0;
            Expr q = select(k == 0, max(L(select(even, 1, 3), m), 4 - 4 * d), min(L(select(even, 3, 1), m), 4 * d));
            return cast<float>(q) * 0.25f;
          };
          closed_.push_back(fixed);
        }
        break;
      case InterpKind::Cubic:
        // i = floor((d-1)/2), taps i-1..i+2 clamped; the last reader of s is 2s + 4. (The
        // reach of linear and cubic counts the zero-weight taps of the clamped borders.)
        closed_.push_back({kXUpsample2, [=](Expr d, Expr k, bool m) { return clamp(L((d - 1) / 2 - 1 + k, m), 0, last); },
                           [=](Expr s, bool m) { return min(L(2 * s + 4, m), out_last); }, kClosedReachCubic,
                           [=](Expr d, int k) { return (d - 1) / 2 - 1 + k; }, [](int) { return 0; },
                           {{-2, 0, 2}}, {}});
        // align_corners=false, scale 1/2: t = 3/4 at even d (including d = 0, src = -1/4),
        // 1/4 at odd d; the clamps of the border taps leave the weights as they are.
        if (fixed_weights_) {
          InterpClosedForm fixed = closed_.back();
          fixed.path = kXUpsample2Half;
          fixed.weight = [](Expr d, Expr k, bool) {
            auto taps = [&](double t) {
              const double wt[4] = {cubic_kernel_at(t + 1.0), cubic_kernel_at(t), cubic_kernel_at(1.0 - t),
                                    cubic_kernel_at(2.0 - t)};
              return select(k == 0, float(wt[0]), k == 1, float(wt[1]), k == 2, float(wt[2]), float(wt[3]));
            };
            return select(d % 2 == 0, taps(0.75), taps(0.25));
          };
          closed_.push_back(fixed);
        }
        break;
      case InterpKind::Area:
        // Bins [r d, r d + r): strided loads; s is read by s / r alone. Clamped like every
        // other form, so that on sizes it does not fit the reads stay inside the row and the
        // kernel's requirement (sizes_fit) names the path, not an out-of-bounds access.
        for (auto [path, r] : {std::pair<int, int>{kXPool2, 2}, {kXPool4, 4}})
          closed_.push_back({path, [=](Expr d, Expr k, bool m) { return min(L(d * r + k, m), last); },
                             [=](Expr s, bool) { return s / r; }, kClosedReachArea, {}, {}, {}, {}});
        break;
    }
  }

  // Per closed form, when a kernel takes its version: the path named and, for a backward
  // (`reach` defined), the usual reach, so that its loop over the readers of an input has a
  // constant extent and the border clamps of its reads fall away in the steady state (with
  // the reach a run-time bound they cannot, and the reads stay gathers). Empty: tables only.
  std::vector<Halide::Expr> closed_conditions(Halide::Expr reach = Halide::Expr()) const {
    std::vector<Halide::Expr> c;
    for (const auto& cf : closed_) c.push_back(reach.defined() ? (path_ == cf.path && reach == cf.reach) : path_ == cf.path);
    return c;
  }
  const Halide::Expr& path() const { return path_; }

  InterpKind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  const Halide::Expr& in() const { return in_; }
  const Halide::Expr& out() const { return out_; }

  // Source index of tap k of d, promised inside [0, in-1] (every table entry is clamped), so
  // bounds inference reads only the axis and no run-time clamp is spent per element.
  Halide::Expr source(Halide::Expr d, Halide::Expr k) const {
    Halide::Expr t = Halide::unsafe_promise_clamped(idx(d, k), 0, in_ - 1);
    for (const auto& cf : closed_) t = Halide::select(path_ == cf.path, cf.source(d, k, true) + fit_term(), t);
    return t;
  }

  // Inverse taps for the backward. `reach`: the most output positions that read one source
  // (the glue computes it; the kernel checks it). Defines, for source s and j < reach:
  //   inv_d(s, j)    : the output position hi(s) - j (clamped into [0, out-1]);
  //   inv_p(s, j, k) : whether that position reads s at all (>= lo(s)) and its tap k does;
  //   inv_w(s, j, k) : the weight of that tap.
  // Area taps cover their bin exactly once, so area needs only k = 0 with weight 1/len.
  void define_inverse(Halide::Expr reach) {
    using namespace Halide;
    Func first(name_ + "_first"), lastf(name_ + "_last");
    Func hist_first(name_ + "_hist_first"), hist_last(name_ + "_hist_last");
    Func cum_first(name_ + "_cum_first"), cum_last(name_ + "_cum_last");
    Var v("v");
    if (kind_ == InterpKind::Area) {
      first(d_) = area_first_;
      lastf(d_) = area_last_;
    } else {
      first(d_) = idx(d_, 0);
      lastf(d_) = idx(d_, taps - 1);
    }
    // Counting sort of the first and last taps, then prefix sums:
    //   lo(s) = #{d : last(d) < s},  hi(s) = #{d : first(d) <= s} - 1.
    RDom rd(0, out_, name_ + "_rd");
    hist_first(v) = 0;
    hist_first(clamp(first(rd), 0, in_ - 1)) += 1;
    hist_last(v) = 0;
    hist_last(clamp(lastf(rd), 0, in_ - 1)) += 1;
    RDom rs(1, max(in_ - 1, 0), name_ + "_rs");
    cum_first(v) = hist_first(v);
    cum_first(rs) = cum_first(rs - 1) + hist_first(rs);
    cum_last(v) = hist_last(v);
    cum_last(rs) = cum_last(rs - 1) + hist_last(rs);
    lo = Func(name_ + "_lo");
    hi = Func(name_ + "_hi");
    lo(v) = select(v == 0, 0, cum_last(max(v - 1, 0)));
    // Positions past the axis (vector tails) read nothing.
    Expr h = select(v < in_, cum_first(min(v, in_ - 1)) - 1, -1);
    if (!closed_.empty()) {
      Expr ok = Expr(true);
      for (const auto& cf : closed_) ok = select(path_ == cf.path, h == cf.hi(v, false), ok);
      h = require(v >= in_ || ok, h, name_ + ":", path_name(), "=", path_, "does not fit the readers of", v);
    }
    hi(v) = require(h - lo(v) + 1 <= reach, h, name_ + ": an input is read by", h - lo(v) + 1,
                    "outputs, more than reach =", reach);

    // Entry j is the output hi(s) - j: walking down from the last reader keeps the closed
    // form of the 2x path exact (its first readers are irregular at the left border, where
    // a clamped source gives zero-weight taps; its last ones are not).
    inv_d = Func(name_ + "_inv_d");
    inv_p = Func(name_ + "_inv_p");
    inv_w = Func(name_ + "_inv_w");
    Var j("j");
    Expr d = hi(v) - j;
    Expr dc = clamp(d, 0, out_ - 1);
    inv_d(v, j) = dc;
    if (kind_ == InterpKind::Area) {
      inv_p(v, j, k_) = d >= lo(v);
      inv_w(v, j, k_) = w(dc, 0);
    } else {
      inv_p(v, j, k_) = d >= lo(v) && idx(dc, k_) == v;
      inv_w(v, j, k_) = w(dc, k_);
    }
    tables_ = {first, lastf, hist_first, hist_last, cum_first, cum_last, lo, hi};
  }

  // The value f reads through tap `t` (a pure Var) at index `index`, as an inlined Func of
  // its own: kept out of the strict_float of the arithmetic, so the index expression (and
  // the x_path condition in it) stays the very Expr the schedule specialises on.
  static Halide::Func tap_read(const std::string& name, Halide::Func f, const InterpVars& v, int a, Halide::Var t,
                               Halide::Expr index) {
    Halide::Func r(name);
    r(v.x, v.y, v.z, v.p, t) = f(with_axis(v, a, index));
    return r;
  }

  // Forward along axis a: g(.., d, ..) = sum_k w(d, k) f(.., idx(d, k), ..). Nearest is not a
  // pass (its kernel gathers all axes at once). Area sums its bin, whose length is a run-time
  // value, in an accumulator (the pass' `acc`), and divides by the length; taps past the bin
  // are skipped by select, never multiplied (no 0 * inf).
  InterpPass forward_pass(const std::string& name, Halide::Func f, const InterpVars& v, int a) const {
    using namespace Halide;
    InterpPass pass{Func(name), Func(), a, Func(), {}};
    Var d = v.axis(a), t("t");
    Func read = tap_read(name + "_read", f, v, a, t, source(d, t));
    if (kind_ == InterpKind::Area) {
      // On an r:1 path every bin has r inputs (in = r out; the tables agree, checked): the
      // tap count and the length are the constant r in that path's version, so the taps
      // loop has a constant extent, its row offsets leave the vector loop, and the division
      // is by a constant. Integer selects, which fold (float ones stay whole under
      // strict_float). (Measured before: the table version's y pass spent ~9 scalar
      // instructions per tap and vector on the table load, clamp and row offset.)
      Expr n_taps = taps, n_len = len(d);
      for (const auto& cf : closed_) {
        const int bin = cf.path == oplab_interp::kXPool2 ? 2 : 4;
        n_taps = select(path_ == cf.path, bin, n_taps);
        n_len = select(path_ == cf.path, bin, n_len);
      }
      pass.acc = Func(name + "_acc");
      RDom r(0, n_taps, name + "_r");
      pass.acc(v.x, v.y, v.z, v.p) = 0.0f;
      Expr acc = pass.acc(v.x, v.y, v.z, v.p);
      pass.acc(v.x, v.y, v.z, v.p) = strict(acc + select(r < n_len, read(v.x, v.y, v.z, v.p, r), 0.0f));
      pass.g(v.x, v.y, v.z, v.p) = strict(acc / cast<float>(n_len));
      return pass;
    }
    // Along x, a closed form with padded rows reads them (InterpClosedForm::raw), and so do
    // the tables, from class 0 (the input row itself on [0, in-1]): one Func serves both, so
    // that the choice between them is of integers (a float select under strict_float would
    // stay unsimplified and load both). Along y and z a tap is one row for the whole vector,
    // and its clamp costs nothing per lane.
    // (Every form with padded rows has the same ones: those of a path and of its fixed-weight
    // twin.)
    const InterpClosedForm* padded = nullptr;
    Expr on_padded = Internal::const_false();
    for (const auto& cf : closed_)
      if (a == 0 && cf.raw) {
        padded = &cf;
        on_padded = on_padded || path_ == cf.path;
      }
    if (padded) add_pads(name, f, v, *padded, pass);
    // The weights, through a Func of their own for the reason of tap_read: on a path that
    // fixes them, the select falls to constants in that path's version.
    Func weight(name + "_wt");
    Expr wt = w(d, t);
    for (const auto& cf : closed_)
      if (cf.weight) wt = select(path_ == cf.path, cf.weight(d, t, true), wt);
    weight(v.x, v.y, v.z, v.p, t) = wt;
    Expr sum;
    for (int k = 0; k < interp_fixed_taps(kind_); ++k) {
      Expr value = read(v.x, v.y, v.z, v.p, k);
      if (padded) {
        Expr j = select(on_padded, padded->raw(d, k) + fit_term(), source(d, k));
        value = pass.pad(j, v.y, v.z, v.p, select(on_padded, padded->pad_class(k), 0));
      }
      Expr term = weight(v.x, v.y, v.z, v.p, k) * value;
      sum = k == 0 ? term : sum + term;
    }
    pass.g(v.x, v.y, v.z, v.p) = strict(sum);
    return pass;
  }

  // The padded rows of closed form `cf` along x, into pass.pad (last argument: the class):
  // row index j of class c holds f[min(max(j, first), in - 1)], written as the clamped left
  // end, the dense middle and the clamped right end.
  void add_pads(const std::string& name, Halide::Func f, const InterpVars& v, const InterpClosedForm& cf,
                InterpPass& pass) const {
    using namespace Halide;
    Var c("c");
    pass.pad = Func(name + "_pad");
    pass.pad(v.x, v.y, v.z, v.p, c) = undef<float>();
    int update = 0;
    Expr last = in_ - 1;
    for (size_t cls = 0; cls < cf.pads.size(); ++cls) {
      const InterpClosedForm::Pad pr = cf.pads[cls];
      const std::string pn = name + "_pad" + std::to_string(cls);
      const int ci = int(cls);
      auto fix = [=](Expr j) { return min(max(j, pr.first), last); };
      RDom left(pr.lo, pr.first - pr.lo, pn + "_left");
      pass.pad(left, v.y, v.z, v.p, ci) = f(fix(left), v.y, v.z, v.p);
      RDom mid(pr.first, max(in_ - pr.first, 0), pn + "_mid");
      pass.pad(mid, v.y, v.z, v.p, ci) = f(mid, v.y, v.z, v.p);
      pass.pad_mids.push_back({update + 1, mid.x});
      update += 2;
      if (pr.hi_past > 0) {
        RDom right(in_, pr.hi_past, pn + "_right");
        pass.pad(right, v.y, v.z, v.p, ci) = f(fix(right), v.y, v.z, v.p);
        ++update;
      }
    }
  }

  // Backward along axis a, the transpose of the forward pass: for source s,
  // g(.., s, ..) = sum over j < reach, and taps k of d = hi(s)-j that read s, of w(d, k) f(.., d, ..).
  // Every tap is its own product (a zero-weight tap times inf is NaN, as in the reference's
  // scatter); absent taps are excluded by select, never multiplied.
  InterpPass backward_pass(const std::string& name, Halide::Func f, const InterpVars& v, int a,
                           Halide::Expr reach) const {
    using namespace Halide;
    InterpPass pass{Func(name), Func(name + "_acc"), a, Func(), {}};
    Var s = v.axis(a), t("t");
    Expr d = unsafe_promise_clamped(inv_d(s, t), 0, out_ - 1);
    // On a closed-form path the readers hi(s) - j are affine in s: strided loads, no gather.
    for (const auto& cf : closed_) d = select(path_ == cf.path, max(likely(cf.hi(s, true) - t), 0), d);
    Func read = tap_read(name + "_read", f, v, a, t, d);
    const int ntap = kind_ == InterpKind::Area ? 1 : interp_fixed_taps(kind_);
    pass.acc(v.x, v.y, v.z, v.p) = 0.0f;
    Expr acc = pass.acc(v.x, v.y, v.z, v.p);
    if (a == 0) {
      // Along x, s varies across vector lanes: every (reader, tap) is visited and the absent
      // ones are selected away.
      RDom j(0, reach, name + "_j");
      Expr sum;
      for (int k = 0; k < ntap; ++k) {
        Expr fd = read(v.x, v.y, v.z, v.p, j);
        Expr term = kind_ == InterpKind::Nearest ? fd : inv_w(s, j, k) * fd;
        term = select(inv_p(s, j, k), term, 0.0f);
        sum = k == 0 ? term : sum + term;
      }
      pass.acc(v.x, v.y, v.z, v.p) = strict(acc + sum);
    } else {
      // Along y or z, s is one row for the whole vector: absent (reader, tap) pairs are
      // skipped by a branch, so only the taps that exist cost anything. (A gather into the
      // row it owns, not a scatter: the RDom::where race-check bug of Halide 14 does not apply.)
      RDom jk(0, reach, 0, ntap, name + "_jk");
      jk.where(inv_p(s, jk.x, jk.y));
      Expr fd = read(v.x, v.y, v.z, v.p, jk.x);
      Expr term = kind_ == InterpKind::Nearest ? fd : inv_w(s, jk.x, jk.y) * fd;
      pass.acc(v.x, v.y, v.z, v.p) = strict(acc + term);
    }
    pass.g(v.x, v.y, v.z, v.p) = acc;
    return pass;
  }

  // Every table, for compute_root.
  std::vector<Halide::Func> forward_tables() const {
    std::vector<Halide::Func> t{idx, w};
    if (kind_ == InterpKind::Area) t.push_back(len);
    if (!closed_.empty()) t.insert(t.end(), {fit_walk_, fit_});
    return t;
  }
  std::vector<Halide::Func> inverse_tables() const {
    std::vector<Halide::Func> t = tables_;
    t.insert(t.end(), {inv_d, inv_p, inv_w});
    return t;
  }

  Halide::Func idx, w, len;           // forward taps (d, k); area bin length (d)
  Halide::Func lo, hi;                // inverse range (s)
  Halide::Func inv_d, inv_p, inv_w;   // inverse taps (s, j[, k])
  Halide::Expr taps;                  // tap count (area: run time)

 private:
  std::string name_;
  InterpKind kind_;
  Halide::Expr in_, out_;
  Halide::Var d_{"d"}, k_{"k"};
  Halide::Expr area_first_, area_last_;  // area: first and last index of the bin of d_
  Halide::Expr path_;                    // run-time x_path (undefined: tables only)
  bool fixed_weights_ = false;           // offer kXUpsample2Half (constructor)
  std::vector<InterpClosedForm> closed_;  // the closed forms offered
  Halide::Func fit_, fit_walk_;          // the closed-form check (a scalar, 0) and its walk
  std::vector<Halide::Func> tables_;
};

}  // namespace oplab_halide
