// ms_deform_attn in float32 (SPEC §13, Deformable DETR's multi-scale deformable attention):
// the forward, grad_value (a scatter) and the gradients of the sampling locations and the
// attention weights (a gather over the channels). Buffers, dims reversed from the tensors:
//   value (d, m, s, n)   locations (c, p, l, m, q, n), c = 0 x, 1 y   weights (p, l, m, q, n)
//   levels (f, l): f = 0 H, 1 W, 2 first row of the level (the glue builds it, int32)
//   output (d, m, q, n), the [N, Lq, M*Dh] tensor viewed with M*Dh split.
// Each point's pixel coordinate loc * size - 0.5 and its floor are formed in double from the
// float32 location, as the reference forms them (compare/ops/ms_deform_attn.cpp relies on
// it); the corner weights and every sum are float32. The rule is deform_conv2d's (SPEC §2;
// deform_conv2d_sampling.h says how a non-finite coordinate is kept out of the arithmetic).
#include <vector>

#include "Halide.h"
#include "task_scratch.h"

using namespace Halide;
using oplab_scratch::kTaskScratch;

namespace {

// One sampling point on its level, everything a kernel reads of it.
struct MsdaPoint {
  Expr finite;                       // both coordinates finite: otherwise it samples nothing
  Expr in_range;                     // rule B's open box (-1, H) x (-1, W)
  Expr r00, r01, r10, r11;           // value rows of the four corners (clamped: safe to read)
  Expr in00, in01, in10, in11;       // whether each corner lies inside the level
  Expr ly, lx;                       // y - floor(y), x - floor(x), float32
  Expr H, W;                         // the level's size, as float32 (the gradient's factors)
};

// S: value's row count. The rows are clamped into [0, S) as well: the level table is the
// glue's (validated), but Halide cannot bound a row read through it.
MsdaPoint point_of(const Func& loc, const Func& levels, Expr S, Expr p, Expr l, Expr m, Expr q, Expr n) {
  MsdaPoint s;
  Expr H = levels(0, l), W = levels(1, l), start = levels(2, l);
  Expr fx = loc(0, p, l, m, q, n), fy = loc(1, p, l, m, q, n);
  s.finite = is_finite(fx) && is_finite(fy);
  Expr dH = cast<double>(H), dW = cast<double>(W);
  auto f64 = [](double v) { return Internal::make_const(Float(64), v); };
  // A coordinate far outside is clamped to [-2, size + 1], still outside, so floor fits int32.
  Expr x = select(s.finite, clamp(cast<double>(fx) * dW - f64(0.5), f64(-2), dW + f64(1)), f64(-2));
  Expr y = select(s.finite, clamp(cast<double>(fy) * dH - f64(0.5), f64(-2), dH + f64(1)), f64(-2));
  Expr x0d = floor(x), y0d = floor(y);
  Expr x0 = cast<int>(x0d), y0 = cast<int>(y0d);
  s.lx = cast<float>(x - x0d);
  s.ly = cast<float>(y - y0d);
  s.in_range = s.finite && y > f64(-1) && y < dH && x > f64(-1) && x < dW;
  Expr iny0 = y0 >= 0 && y0 < H, iny1 = y0 >= -1 && y0 + 1 < H;
  Expr inx0 = x0 >= 0 && x0 < W, inx1 = x0 >= -1 && x0 + 1 < W;
  s.in00 = s.finite && iny0 && inx0;
  s.in01 = s.finite && iny0 && inx1;
  s.in10 = s.finite && iny1 && inx0;
  s.in11 = s.finite && iny1 && inx1;
  Expr cy0 = clamp(y0, 0, H - 1), cy1 = clamp(y0 + 1, 0, H - 1);
  Expr cx0 = clamp(x0, 0, W - 1), cx1 = clamp(x0 + 1, 0, W - 1);
  auto row = [&](Expr y, Expr x) { return clamp(start + y * W + x, 0, S - 1); };
  s.r00 = row(cy0, cx0);
  s.r01 = row(cy0, cx1);
  s.r10 = row(cy1, cx0);
  s.r11 = row(cy1, cx1);
  s.H = cast<float>(H);
  s.W = cast<float>(W);
  return s;
}

// The point as a Tuple (a Func of (p, l, m, q, n)) so that a schedule can compute it once per
// point: rows, corner weights (0 for a corner outside), and the range and finiteness flags.
Tuple point_tuple(const MsdaPoint& s) {
  Expr w00 = (1.0f - s.ly) * (1.0f - s.lx), w01 = (1.0f - s.ly) * s.lx, w10 = s.ly * (1.0f - s.lx), w11 = s.ly * s.lx;
  Expr bits = select(s.in00, 1, 0) | select(s.in01, 2, 0) | select(s.in10, 4, 0) | select(s.in11, 8, 0) |
              select(s.in_range, 16, 0) | select(s.finite, 32, 0);
  return Tuple(std::vector<Expr>{s.r00, s.r01, s.r10, s.r11, w00, w01, w10, w11, s.ly, s.lx, bits, s.H, s.W});
}

Expr bit(Expr bits, int b) { return (bits & (1 << b)) != 0; }

// Field indices of point_tuple.
enum { kR00, kR01, kR10, kR11, kW00, kW01, kW10, kW11, kLy, kLx, kBits, kH, kW };

// The four corner values of channel d, 0 for a corner outside the level.
struct Corners {
  Expr v00, v01, v10, v11;
};

Corners corners(const Func& value, const FuncRef& pt, Expr d, Expr m, Expr n) {
  Expr bits = pt[kBits];
  auto v = [&](int k, int b) { return select(bit(bits, b), value(d, m, pt[k], n), 0.0f); };
  return {v(kR00, 0), v(kR01, 1), v(kR10, 2), v(kR11, 3)};
}

// B: the blend inside the open range, else 0. Every in-level corner adds weight * value even
// at weight 0 (NaN/Inf spread as in the reference).
Expr blend(const FuncRef& pt, const Corners& c) {
  Expr b = pt[kW00] * c.v00 + pt[kW01] * c.v01 + pt[kW10] * c.v10 + pt[kW11] * c.v11;
  return select(bit(pt[kBits], 4), b, 0.0f);
}

#define OPLAB_MSDA_INPUTS                                                    \
  Input<Buffer<float>> value{"value", 4};                                    \
  Input<Buffer<int32_t>> levels{"levels", 2};                                \
  Input<Buffer<float>> sampling_locations{"sampling_locations", 6};         \
  Input<Buffer<float>> attention_weights{"attention_weights", 5};

template <class... B>
void promise_zero_mins(B&... bufs) {
  auto one = [](auto& b) {
    for (int i = 0; i < b.dimensions(); ++i) b.dim(i).set_min(0);
  };
  (one(bufs), ...);
}

// All of a stage's pure dimensions fused into one, innermost first, then split into GPU blocks
// of `lanes` threads.
template <class S>
void gpu_flat(S stage, std::vector<Var> dims, int lanes) {
  Var f = dims[0];
  for (size_t k = 1; k < dims.size(); ++k) {
    Var g(f.name() + "_" + dims[k].name());
    stage.fuse(f, dims[k], g);
    f = g;
  }
  Var o(f.name() + "_o"), i(f.name() + "_i");
  stage.gpu_tile(f, o, i, lanes, TailStrategy::GuardWithIf);
}

// out(d, m, q, n) = sum over l, p (levels outer, as the reference) of a * B.
//  * CPU: a task per (query, image); each point's geometry once per query; channels vectorised.
//  * GPU: a thread per (channel, query), 32 channels x 4 queries per block; the thread walks
//    the points itself (its own geometry: no shared state, no atomics).
class MsDeformAttnForward : public Generator<MsDeformAttnForward> {
 public:
  OPLAB_MSDA_INPUTS
  Output<Buffer<float>> output{"output", 4};

  Var d{"d"}, m{"m"}, q{"q"}, n{"n"}, p{"p"}, l{"l"};
  Func pt{"pt"}, acc{"acc"};
  RDom r;

  void generate() {
    pt(p, l, m, q, n) = point_tuple(point_of(sampling_locations, levels, value.dim(2).extent(), p, l, m, q, n));
    r = RDom({{0, attention_weights.dim(0).extent()}, {0, attention_weights.dim(1).extent()}}, "r");
    FuncRef s = pt(r.x, r.y, m, q, n);
    Expr a = attention_weights(r.x, r.y, m, q, n);
    acc(d, m, q, n) = 0.0f;
    acc(d, m, q, n) += select(bit(s[kBits], 5), a * blend(s, corners(value, s, d, m, n)), 0.0f);
    output(d, m, q, n) = acc(d, m, q, n);
  }

  void schedule() {
    promise_zero_mins(value, levels, sampling_locations, attention_weights, output);
    if (get_target().has_gpu_feature()) {
      Var dO{"dO"}, di{"di"}, qo{"qo"}, qi{"qi"}, mn{"mn"};
      output.split(d, dO, di, 32, TailStrategy::GuardWithIf)
          .split(q, qo, qi, 4, TailStrategy::GuardWithIf)
          .reorder(di, qi, dO, qo, m, n)
          .fuse(m, n, mn)
          .gpu_blocks(dO, qo, mn)
          .gpu_threads(di, qi);
      acc.compute_at(output, di);
    } else {
      const int vec = natural_vector_size<float>();
      Var qn{"qn"};
      output.reorder(d, m, q, n).fuse(q, n, qn).parallel(qn).vectorize(d, vec, TailStrategy::GuardWithIf);
      acc.compute_at(output, m).vectorize(d, vec, TailStrategy::GuardWithIf);
      acc.update().reorder(d, r.x, r.y).vectorize(d, vec, TailStrategy::GuardWithIf);
      pt.compute_at(output, qn);
    }
  }
};

// grad_value: every point scatters a * (corner weight) * gout(d) to its in-level corners of
// nonzero weight (the reference's transpose), points in the reference's order.
//  * CPU: a task per (head, image) slice of grad_value: only that slice's points write it, so
//    no two tasks touch the same element; channels vectorised; the slice is accumulated in a
//    dense buffer of the task's own and copied out. Each element sums in the reference's order.
//  * GPU: a thread per (channel, query) adds atomically (queries of one head and image share
//    pixels), 32 channels x 8 queries per block.
class MsDeformAttnGradValue : public Generator<MsDeformAttnGradValue> {
 public:
  OPLAB_MSDA_INPUTS
  Input<Buffer<float>> grad_output{"grad_output", 4};  // (d, m, q, n)
  Output<Buffer<float>> grad_value{"grad_value", 4};   // (d, m, s, n)

  Var d{"d"}, m{"m"}, s{"s"}, n{"n"}, p{"p"}, l{"l"}, q{"q"};
  Func pt{"pt"}, slice{"slice"};
  RDom r;

  void generate() {
    pt(p, l, m, q, n) = point_tuple(point_of(sampling_locations, levels, value.dim(2).extent(), p, l, m, q, n));
    // r = (corner, p, l, q): the corner innermost, queries outermost.
    r = RDom({{0, 4}, {0, attention_weights.dim(0).extent()}, {0, attention_weights.dim(1).extent()},
              {0, attention_weights.dim(3).extent()}},
             "r");
    RVar rc = r[0], rp = r[1], rl = r[2], rq = r[3];
    FuncRef t = pt(rp, rl, m, rq, n);
    Expr row = select(rc == 0, t[kR00], rc == 1, t[kR01], rc == 2, t[kR10], t[kR11]);
    Expr w = select(rc == 0, t[kW00], rc == 1, t[kW01], rc == 2, t[kW10], t[kW11]);
    Expr on = bit(t[kBits], 5) && bit(t[kBits], 4) && ((t[kBits] >> rc) & 1) != 0 && w != 0.0f;
    Expr g = attention_weights(rp, rl, m, rq, n) * grad_output(d, m, rq, n);
    Expr add = select(on, w * g, 0.0f);
    if (get_target().has_gpu_feature()) {
      grad_value(d, m, s, n) = 0.0f;
      grad_value(d, m, row, n) += add;
    } else {
      // The CPU accumulates a (head, image) slice in a dense buffer of its own (S rows of Dh
      // channels, 2.6 MB for the encoder shape, against grad_value's rows M * Dh apart): the
      // random read-modify-writes stay in cache and touch fewer pages, and the slice is
      // copied out once.
      slice(d, s, m, n) = 0.0f;
      slice(d, row, m, n) += add;
      grad_value(d, m, s, n) = slice(d, s, m, n);
    }
  }

  void schedule() {
    promise_zero_mins(value, levels, sampling_locations, attention_weights, grad_output, grad_value);
    RVar rc = r[0], rp = r[1], rl = r[2], rq = r[3];
    if (get_target().has_gpu_feature()) {
      Var dO{"dO"}, di{"di"}, so{"so"}, si{"si"}, mn{"mn"};
      grad_value.split(d, dO, di, 32, TailStrategy::GuardWithIf)
          .split(s, so, si, 8, TailStrategy::GuardWithIf)
          .reorder(di, si, dO, so, m, n)
          .fuse(m, n, mn)
          .gpu_blocks(dO, so, mn)
          .gpu_threads(di, si);
      RVar rqo{"rqo"}, rqi{"rqi"};
      Var ud{"ud"}, udi{"udi"}, umn{"umn"};
      grad_value.update()
          .atomic()
          .split(d, ud, udi, 32, TailStrategy::GuardWithIf)
          .split(rq, rqo, rqi, 8, TailStrategy::GuardWithIf)
          .reorder(rc, rp, rl, udi, rqi, ud, rqo, m, n)
          .fuse(m, n, umn)
          .gpu_blocks(ud, rqo, umn)
          .gpu_threads(udi, rqi)
          .unroll(rc);
      // The point is computed in the thread, once per (point, corner) loop: the row an atomic
      // add writes and the row its implicit load reads are then one expression, which Halide
      // needs to emit a native float atomic add rather than a compare-and-swap loop.
      pt.compute_at(grad_value, rl);
    } else {
      const int vec = natural_vector_size<float>();
      Var mn{"mn"};
      grad_value.reorder(d, s, m, n).fuse(m, n, mn).parallel(mn).vectorize(d, vec, TailStrategy::GuardWithIf);
      slice.compute_at(grad_value, mn).store_in(kTaskScratch).vectorize(d, vec, TailStrategy::GuardWithIf);
      slice.update().reorder(d, rc, rp, rl, rq).vectorize(d, vec, TailStrategy::GuardWithIf).unroll(rc);
      pt.compute_at(slice, rq).store_in(kTaskScratch);
    }
  }
};

// The point gradients: grad_attention_weights = sum_d gout * B, grad_sampling_locations =
// a * (W * sum_d gout * dB/dx, H * sum_d gout * dB/dy), with dB the derivative of the blend
// with no outer cut-off (right-sided at integers; 0 once every corner is outside). A
// non-finite location takes no gradient. Gathers over the channels, no scatter:
//  * CPU: a task per query (images in turn); each point's geometry once, then its channel terms as
//    dense vectors of the corner rows (the gathers of all a head's points back to back), summed
//    across the channels (vector partial sums, then lanes); both outputs in the one loop nest.
//  * GPU: a thread per point, its channels in turn.
class MsDeformAttnGradPoints : public Generator<MsDeformAttnGradPoints> {
 public:
  OPLAB_MSDA_INPUTS
  Input<Buffer<float>> grad_output{"grad_output", 4};                       // (d, m, q, n)
  Output<Buffer<float>> grad_sampling_locations{"grad_sampling_locations", 6};  // (c, p, l, m, q, n)
  Output<Buffer<float>> grad_attention_weights{"grad_attention_weights", 5};    // (p, l, m, q, n)

  Var c{"c"}, p{"p"}, l{"l"}, m{"m"}, q{"q"}, n{"n"}, d{"d"};
  Func pt{"pt"}, terms{"terms"}, sums{"sums"};
  RDom rd;

  void generate() {
    pt(p, l, m, q, n) = point_tuple(point_of(sampling_locations, levels, value.dim(2).extent(), p, l, m, q, n));
    FuncRef t = pt(p, l, m, q, n);
    Corners v = corners(value, t, d, m, n);
    Expr go = grad_output(d, m, q, n);
    Expr ly = t[kLy], lx = t[kLx];
    Expr dy = (1.0f - lx) * (v.v10 - v.v00) + lx * (v.v11 - v.v01);
    Expr dx = (1.0f - ly) * (v.v01 - v.v00) + ly * (v.v11 - v.v10);
    // Channel d's terms of the three sums.
    terms(d, p, l, m, q, n) = Tuple(go * blend(t, v), go * dx, go * dy);
    rd = RDom(0, value.dim(0).extent(), "rd");
    sums(p, l, m, q, n) = Tuple(0.0f, 0.0f, 0.0f);
    sums(p, l, m, q, n) = Tuple(sums(p, l, m, q, n)[0] + terms(rd, p, l, m, q, n)[0],
                                sums(p, l, m, q, n)[1] + terms(rd, p, l, m, q, n)[1],
                                sums(p, l, m, q, n)[2] + terms(rd, p, l, m, q, n)[2]);
    Expr finite = bit(t[kBits], 5);
    Expr a = attention_weights(p, l, m, q, n);
    grad_attention_weights(p, l, m, q, n) = select(finite, sums(p, l, m, q, n)[0], 0.0f);
    grad_sampling_locations(c, p, l, m, q, n) =
        select(finite, select(c == 0, a * t[kW] * sums(p, l, m, q, n)[1], a * t[kH] * sums(p, l, m, q, n)[2]), 0.0f);
  }

  void schedule() {
    promise_zero_mins(value, levels, sampling_locations, attention_weights, grad_output, grad_sampling_locations,
                      grad_attention_weights);
    if (get_target().has_gpu_feature()) {
      // Both outputs read the sums of every point, computed once for the whole case.
      pt.compute_inline();
      terms.compute_inline();
      sums.compute_root();
      gpu_flat(Func(sums), {p, l, m, q, n}, 64);
      gpu_flat(sums.update(), {p, l, m, q, n}, 64);
      gpu_flat(Func(grad_attention_weights), {p, l, m, q, n}, 64);
      gpu_flat(Func(grad_sampling_locations), {c, p, l, m, q, n}, 64);
    } else {
      const int vec = natural_vector_size<float>();
      // The queries not fused with the images: bounds through a fused (q, n) under compute_with
      // widen to every query before q, which made the work quadratic.
      grad_sampling_locations.parallel(q);
      grad_attention_weights.parallel(q).compute_with(grad_sampling_locations, q);
      pt.compute_at(grad_sampling_locations, q).store_in(kTaskScratch);
      sums.compute_at(grad_sampling_locations, q).store_in(kTaskScratch);
      // atomic(): lets Halide vectorise the channel sum itself (no two threads share a point).
      sums.update().reorder(rd, p, l, m).atomic().vectorize(rd, vec, TailStrategy::GuardWithIf);
      terms.compute_at(sums, m).store_in(kTaskScratch).vectorize(d, vec, TailStrategy::GuardWithIf);
    }
  }
};

}  // namespace

HALIDE_REGISTER_GENERATOR(MsDeformAttnForward, ms_deform_attn_forward)
HALIDE_REGISTER_GENERATOR(MsDeformAttnGradValue, ms_deform_attn_grad_value)
HALIDE_REGISTER_GENERATOR(MsDeformAttnGradPoints, ms_deform_attn_grad_points)
