// The ps_roi_align and ps_roi_pool references (SPEC §11) against values worked out by hand,
// their refusals and empty cases, the adjoint identity of their backward passes, and agreement
// with the live torchvision peer (float64) on random and edge cases, forward and backward,
// where every disagreement must be a named divergence the reference reproduces.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cli/builtin_backends.h"
#include "compare/differential.h"
#include "core/backend.h"
#include "core/case.h"
#include "core/case_io.h"
#include "core/params.h"
#include "peer/divergences.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

// [N, C, H, W] with plane k of image n holding 100*(n*C + k) + W*y + x: every plane is a ramp
// (bilinear interpolation inside the image is exact on a ramp, so an in-image sample at (y, x)
// reads 100*plane + W*y + x) and the hundreds say which channel a value came from.
Tensor ramps(int64_t N, int64_t C, int64_t H, int64_t W) {
  Tensor t(Shape{N, C, H, W});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < C; ++k)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x) t.at(n, k, y, x) = 100.0 * double(n * C + k) + double(W * y + x);
  return t;
}

Tensor rois_of(const std::vector<std::vector<double>>& rows) {
  Tensor t(Shape{int64_t(rows.size()), 5});
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t j = 0; j < 5; ++j) t.at(int64_t(r), int64_t(j)) = rows[r][j];
  return t;
}

Case ps_case(const std::string& op, const Tensor& input, const Tensor& rois, int64_t PH, int64_t PW, double scale,
             int64_t sampling_ratio = -1, std::optional<Tensor> gout = std::nullopt) {
  Case c;
  c.op = op;
  c.params = {{"output_size", {PH, PW}}, {"spatial_scale", scale}};
  if (op == "ps_roi_align") c.params["sampling_ratio"] = sampling_ratio;
  c.inputs["input"] = input;
  c.inputs["rois"] = rois;
  c.grad_output = std::move(gout);
  return c;
}

Result run_ref(const Case& c) { return make_ref_backend()->run(c); }

double dot(const Tensor& a, const Tensor& b) {
  double s = 0;
  for (size_t i = 0; i < a.data.size(); ++i) s += a.data[i] * b.data[i];
  return s;
}

// ---------------------------------------------------------------- ps_roi_align by hand

TEST(RefPsRoiAlign, EachBinReadsItsOwnChannel) {
  // Input [1, 4, 3, 3] (plane k = 100k + 3y + x), output 2x2, so Co = 1 and bin (ph, pw) reads
  // channel ph*2 + pw. Roi (0.5, 0.5)-(2.5, 2.5) at scale 1, always aligned: sx = sy = 0,
  // rw = rh = 2, bins 1 pixel, sampling_ratio 2: samples at bin start + 0.25 and + 0.75, all
  // inside the image, so each bin is the ramp at its mean sample (start + 0.5):
  //   (0,0): ch 0, y 0.5, x 0.5 -> 0 + 1.5 + 0.5 = 2
  //   (0,1): ch 1, y 0.5, x 1.5 -> 100 + 1.5 + 1.5 = 103
  //   (1,0): ch 2, y 1.5, x 0.5 -> 200 + 4.5 + 0.5 = 205
  //   (1,1): ch 3, y 1.5, x 1.5 -> 300 + 4.5 + 1.5 = 306
  const Tensor x = ramps(1, 4, 3, 3);
  const Result r = run_ref(ps_case("ps_roi_align", x, rois_of({{0, 0.5, 0.5, 2.5, 2.5}}), 2, 2, 1.0, 2));
  const Tensor& out = r.outputs.at("output");
  ASSERT_EQ(out.shape, (Shape{1, 1, 2, 2}));
  EXPECT_DOUBLE_EQ(out.at(0, 0, 0, 0), 2.0);
  EXPECT_DOUBLE_EQ(out.at(0, 0, 0, 1), 103.0);
  EXPECT_DOUBLE_EQ(out.at(0, 0, 1, 0), 205.0);
  EXPECT_DOUBLE_EQ(out.at(0, 0, 1, 1), 306.0);
}

TEST(RefPsRoiAlign, SecondOutputChannelAndBatchIndex) {
  // Input [2, 2, 2, 2] with output 1x1: Co = 2, output channel c reads input channel c.
  // Roi on image 1 covering (0.5, 0.5)-(1.5, 1.5), aligned: sx = sy = 0, one pixel, grid 1:
  // sample (0.5, 0.5), the mean of the four pixels 0, 1, 2, 3 = 1.5, plus 100*(1*2 + c).
  const Tensor x = ramps(2, 2, 2, 2);
  const Result r = run_ref(ps_case("ps_roi_align", x, rois_of({{1, 0.5, 0.5, 1.5, 1.5}}), 1, 1, 1.0, 1));
  EXPECT_DOUBLE_EQ(r.outputs.at("output").at(0, 0, 0, 0), 201.5);
  EXPECT_DOUBLE_EQ(r.outputs.at("output").at(0, 1, 0, 0), 301.5);
}

TEST(RefPsRoiAlign, SampleOnTheLastRowAndBeyond) {
  // H = W = 3, one channel, output 1x1, grid 1, scale 1.
  // Roi (0.5, 3.0)-(1.5, 4.0): sy = 2.5, rh = 1, the one sample at y = 3.0 = H: still in range
  // (out of range only beyond H), y >= H-1 so it reads row 2 (edge replicated); x = 0.5.
  // Value 3*2 + 0.5 = 6.5. Its gradient goes to (2, 0) and (2, 1) with weight 1/2 each.
  const Tensor x = ramps(1, 1, 3, 3);
  Tensor g(Shape{1, 1, 1, 1}, 1.0);
  const Result r = run_ref(ps_case("ps_roi_align", x, rois_of({{0, 0.5, 3.0, 1.5, 4.0}}), 1, 1, 1.0, 1, g));
  EXPECT_DOUBLE_EQ(r.outputs.at("output").data.at(0), 6.5);
  Tensor want(x.shape);
  want.at(0, 0, 2, 0) = 0.5, want.at(0, 0, 2, 1) = 0.5;
  EXPECT_EQ(r.grads.at("input").data, want.data);
  // Moved down by 0.25: the sample at y = 3.25 > H reads nothing: 0, no gradient.
  const Result beyond = run_ref(ps_case("ps_roi_align", x, rois_of({{0, 0.5, 3.25, 1.5, 4.25}}), 1, 1, 1.0, 1, g));
  EXPECT_EQ(beyond.outputs.at("output").data.at(0), 0.0);
  EXPECT_EQ(beyond.grads.at("input").data, std::vector<double>(9, 0.0));
}

TEST(RefPsRoiAlign, EmptyAdaptiveGridGivesZero) {
  // Adaptive grid: gh = ceil(rh / PH). A zero-size box (x1 = x2) gives gw = 0 and a box
  // reversed by less than a bin gives ceil(-0.5) = 0: no samples, the bin is 0 (SPEC §11;
  // torchvision divides 0 by 0 here). Reversed by more than a bin in both axes: gh, gw < 0,
  // no samples either.
  const Tensor x = ramps(1, 1, 4, 4);
  Tensor g(Shape{3, 1, 1, 1}, 1.0);
  const Result r = run_ref(ps_case("ps_roi_align", x,
                                   rois_of({{0, 2, 1, 2, 3}, {0, 2, 2, 1.5, 3}, {0, 3, 3, 1, 1}}), 1, 1, 1.0, -1, g));
  EXPECT_EQ(r.outputs.at("output").data, std::vector<double>(3, 0.0));
  EXPECT_EQ(r.grads.at("input").data, std::vector<double>(16, 0.0));
}

TEST(RefPsRoiAlign, FixedGridOnReversedBoxWalksBackwards) {
  // sampling_ratio 1 on the box (1.5, 1.5)-(0.5, 0.5): sx = 1, rw = -1, one sample at
  // x = 1 + 0.5 * (-1) = 0.5 (likewise y): the box mirrored, value 4*0.5 + 0.5 = 2.5.
  const Tensor x = ramps(1, 1, 4, 4);
  const Result r = run_ref(ps_case("ps_roi_align", x, rois_of({{0, 1.5, 1.5, 0.5, 0.5}}), 1, 1, 1.0, 1));
  EXPECT_DOUBLE_EQ(r.outputs.at("output").data.at(0), 2.5);
}

// ---------------------------------------------------------------- ps_roi_pool by hand

TEST(RefPsRoiPool, BinsMeansAndTheLastRowAndColumn) {
  // Input [1, 4, 3, 3] (plane k = 100k + 3y + x), output 2x2, roi (0, 0)-(3, 3) at scale 1:
  // xs = 0, xe = 3, rw = max(3 - 0, 1) = 3 (no +1), bin 1.5. Bins along an axis:
  // p = 0: [floor(0), ceil(1.5)) = [0, 2); p = 1: [floor(1.5), ceil(3)) = [1, 3), and the end
  // clamped into [0, W-1] = [0, 2] makes it [1, 2): row and column 2 are never read.
  //   (0,0): ch 0, rows {0,1} x cols {0,1}: mean(0, 1, 3, 4) = 2
  //   (0,1): ch 1, rows {0,1} x col 1: 100 + mean(1, 4) = 102.5
  //   (1,0): ch 2, row 1 x cols {0,1}: 200 + mean(3, 4) = 203.5
  //   (1,1): ch 3, row 1 x col 1: 300 + 4 = 304
  // Backward with gout 1: 1/area to each pixel of the same bin.
  const Tensor x = ramps(1, 4, 3, 3);
  Tensor g(Shape{1, 1, 2, 2}, 1.0);
  const Result r = run_ref(ps_case("ps_roi_pool", x, rois_of({{0, 0, 0, 3, 3}}), 2, 2, 1.0, -1, g));
  const Tensor& out = r.outputs.at("output");
  ASSERT_EQ(out.shape, (Shape{1, 1, 2, 2}));
  EXPECT_DOUBLE_EQ(out.at(0, 0, 0, 0), 2.0);
  EXPECT_DOUBLE_EQ(out.at(0, 0, 0, 1), 102.5);
  EXPECT_DOUBLE_EQ(out.at(0, 0, 1, 0), 203.5);
  EXPECT_DOUBLE_EQ(out.at(0, 0, 1, 1), 304.0);
  Tensor want(x.shape);
  for (int64_t y : {0, 1})
    for (int64_t xx : {0, 1}) want.at(0, 0, y, xx) = 0.25;
  want.at(0, 1, 0, 1) = want.at(0, 1, 1, 1) = 0.5;
  want.at(0, 2, 1, 0) = want.at(0, 2, 1, 1) = 0.5;
  want.at(0, 3, 1, 1) = 1.0;
  EXPECT_EQ(r.grads.at("input").data, want.data);
}

TEST(RefPsRoiPool, EmptyBinIsZero) {
  // Roi (2, 2)-(3, 3) on a 3x3 image, output 2x2: xs = 2, xe = 3, rw = 1, bin 0.5;
  // p = 0: [2 + 0, 2 + ceil(0.5)) = [2, 3) -> clamped into [0, 2]: [2, 2), empty;
  // p = 1: [2 + floor(0.5), 2 + ceil(1)) = [2, 3) -> [2, 2), empty. Every bin outputs 0 and
  // passes no gradient.
  const Tensor x = ramps(1, 4, 3, 3);
  Tensor g(Shape{1, 1, 2, 2}, 1.0);
  const Result r = run_ref(ps_case("ps_roi_pool", x, rois_of({{0, 2, 2, 3, 3}}), 2, 2, 1.0, -1, g));
  EXPECT_EQ(r.outputs.at("output").data, std::vector<double>(4, 0.0));
  EXPECT_EQ(r.grads.at("input").data, std::vector<double>(36, 0.0));
}

TEST(RefPsRoiPool, CRoundHalfAwayFromZeroAndReversedBox) {
  // Roi (0.5, 0.5)-(2.5, 2.5) on a 4x4 ramp, output 1x1: C round gives xs = 1, xe = 3
  // (Python's round would give 0 and 2), rw = 2, the bin [1, 3) x [1, 3): mean of
  // 5, 6, 9, 10 = 7.5 (Python's rounding: [0, 2) x [0, 2), mean 2.5).
  const Tensor x = ramps(1, 1, 4, 4);
  EXPECT_DOUBLE_EQ(run_ref(ps_case("ps_roi_pool", x, rois_of({{0, 0.5, 0.5, 2.5, 2.5}}), 1, 1, 1.0)).outputs.at("output").data.at(0),
                   7.5);
  // Reversed box (3, 3)-(1, 1): rw = max(1 - 3, 1) = 1, the bin [3, 4) x [3, 4), clamped
  // into [0, 3]: [3, 3), empty: 0. From (1, 1)-(0, 0): [1, 2) x [1, 2): pixel 5.
  EXPECT_EQ(run_ref(ps_case("ps_roi_pool", x, rois_of({{0, 3, 3, 1, 1}}), 1, 1, 1.0)).outputs.at("output").data.at(0), 0.0);
  EXPECT_DOUBLE_EQ(run_ref(ps_case("ps_roi_pool", x, rois_of({{0, 1, 1, 0, 0}}), 1, 1, 1.0)).outputs.at("output").data.at(0),
                   5.0);
}

// ---------------------------------------------------------------- refusals, empty cases

TEST(RefPsRoiOps, ChannelsNotAMultipleOfTheBinsAreRefused) {
  // 3 channels cannot be split among 2x2 bins: one line naming op, argument and values.
  for (const char* op : {"ps_roi_align", "ps_roi_pool"}) {
    const Case c = ps_case(op, ramps(1, 3, 4, 4), rois_of({{0, 0, 0, 2, 2}}), 2, 2, 1.0);
    try {
      run_ref(c);
      ADD_FAILURE() << op << ": accepted C = 3 with 2x2 bins";
    } catch (const InvalidCase& e) {
      const std::string m = e.what();
      EXPECT_EQ(m, std::string(op) + ": input channels C=3 must be a multiple of output_size PH*PW=2*2");
      EXPECT_EQ(m.find('\n'), std::string::npos);
    }
  }
}

TEST(RefPsRoiOps, NoRoisGiveEmptyOutputAndZeroGradient) {
  for (const char* op : {"ps_roi_align", "ps_roi_pool"}) {
    const Tensor x = ramps(2, 8, 3, 3);  // output 2x2: Co = 2
    const Result r = run_ref(ps_case(op, x, Tensor(Shape{0, 5}), 2, 2, 1.0, -1, Tensor(Shape{0, 2, 2, 2})));
    EXPECT_EQ(r.outputs.at("output").shape, (Shape{0, 2, 2, 2})) << op;
    EXPECT_EQ(r.grads.at("input").shape, x.shape) << op;
    EXPECT_EQ(r.grads.at("input").data, std::vector<double>(x.data.size(), 0.0)) << op;
  }
}

// ---------------------------------------------------------------- adjoint identity

// Both ops are linear in the input, so the backward is right exactly when
// <forward(x), y> = <x, backward(y)> for every x and y (up to rounding).
TEST(RefPsRoiOps, BackwardIsTheAdjointOfTheForward) {
  std::mt19937_64 rng(41);
  std::normal_distribution<double> v(0.0, 1.0);
  std::uniform_real_distribution<double> coord(-2.0, 9.0);
  for (const char* op : {"ps_roi_align", "ps_roi_pool"})
    for (int trial = 0; trial < 20; ++trial) {
      const int64_t PH = 1 + trial % 3, PW = 1 + (trial / 3) % 2, Co = 1 + trial % 2;
      Tensor x(Shape{2, Co * PH * PW, 5, 7});
      for (double& e : x.data) e = v(rng);
      Tensor rois(Shape{4, 5});
      for (int64_t k = 0; k < 4; ++k) {
        rois.at(k, 0) = double(k % 2);
        for (int64_t j = 1; j <= 4; ++j) rois.at(k, j) = coord(rng);
      }
      Tensor y(Shape{4, Co, PH, PW});
      for (double& e : y.data) e = v(rng);
      const Result r = run_ref(ps_case(op, x, rois, PH, PW, 0.75, trial % 4 - 1, y));
      const double lhs = dot(r.outputs.at("output"), y), rhs = dot(x, r.grads.at("input"));
      double mag = 0;
      for (size_t i = 0; i < y.data.size(); ++i) mag += std::fabs(r.outputs.at("output").data[i] * y.data[i]);
      EXPECT_LE(std::fabs(lhs - rhs), 1e-12 * (mag + 1.0)) << op << " trial " << trial << ": " << lhs << " vs " << rhs;
    }
}

// ---------------------------------------------------------------- the live torchvision peer

Backend& peer() { return *builtin_backends().find("torchvision"); }
Backend& ref() { return *builtin_backends().find("ref"); }

// The peer is the live oracle on every machine here (SPEC): its absence fails the test, as in
// test_peer_torchvision.cpp.
#define REQUIRE_PEER()                                             \
  do {                                                             \
    auto why = peer().unavailable_reason();                        \
    ASSERT_FALSE(why.has_value()) << "torchvision peer: " << *why; \
  } while (0)

compare::Outcome versus_peer(const Case& c) {
  return compare::compare_on_case(ref(), peer(), c, compare::Tolerance{}, torchvision_divergences());
}

TEST(PeerPsRoiOps, HandDerivedCasesAgree) {
  REQUIRE_PEER();
  // The hand-derived cases above, on the peer: its values are the same numbers.
  const Tensor x = ramps(1, 4, 3, 3);
  Tensor g(Shape{1, 1, 2, 2}, 1.0);
  const Result a = peer().run(ps_case("ps_roi_align", x, rois_of({{0, 0.5, 0.5, 2.5, 2.5}}), 2, 2, 1.0, 2, g));
  EXPECT_EQ(a.outputs.at("output").data, (std::vector<double>{2, 103, 205, 306}));
  const Result p = peer().run(ps_case("ps_roi_pool", x, rois_of({{0, 0, 0, 3, 3}}), 2, 2, 1.0, -1, g));
  EXPECT_EQ(p.outputs.at("output").data, (std::vector<double>{2, 102.5, 203.5, 304}));
  const Tensor x4 = ramps(1, 1, 4, 4);
  EXPECT_EQ(peer().run(ps_case("ps_roi_pool", x4, rois_of({{0, 0.5, 0.5, 2.5, 2.5}}), 1, 1, 1.0)).outputs.at("output").data,
            (std::vector<double>{7.5}));
}

// Random cases: sizes, scales, grids and boxes drawn around the image (inside, across its
// border, zero-size, reversed, corners on half pixels), values and gout normal.
Case random_case(const std::string& op, std::mt19937_64& rng) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  std::normal_distribution<double> v(0.0, 1.0);
  const int64_t N = pick(1, 2), PH = pick(1, 3), PW = pick(1, 3), Co = pick(1, 2), H = pick(1, 7), W = pick(1, 7),
                K = pick(0, 4);
  const double scales[] = {1.0, 0.5, 0.25, 2.0, 0.3};
  const double s = scales[pick(0, 4)];
  Tensor x(Shape{N, Co * PH * PW, H, W});
  for (double& e : x.data) e = v(rng);
  Tensor rois(Shape{K, 5});
  for (int64_t k = 0; k < K; ++k) {
    rois.at(k, 0) = double(pick(0, N - 1));
    for (int64_t j = 1; j <= 4; ++j) {
      const double size = double(j % 2 ? W : H) / s;
      double c = std::uniform_real_distribution<double>(-0.3 * size, 1.3 * size)(rng);
      if (pick(0, 3) == 0) c = std::round(c * s * 2.0) / 2.0 / s;  // scaled corner on a half pixel
      rois.at(k, j) = c;
    }
    const int64_t kind = pick(0, 5);
    if (kind == 0) rois.at(k, 3) = rois.at(k, 1);  // zero width
    if (kind == 1) std::swap(rois.at(k, 1), rois.at(k, 3)), std::swap(rois.at(k, 2), rois.at(k, 4));
  }
  Tensor g(Shape{K, Co, PH, PW});
  for (double& e : g.data) e = v(rng);
  return ps_case(op, x, rois, PH, PW, s, pick(-1, 3), g);
}

void expect_agrees_or_named(const Case& c, std::map<std::string, int>& tally) {
  const compare::Outcome o = versus_peer(c);
  ++tally[o.verdict == compare::Verdict::NamedDivergence ? o.divergence : compare::verdict_name(o.verdict)];
  EXPECT_TRUE(o.verdict == compare::Verdict::Agree || o.verdict == compare::Verdict::NamedDivergence)
      << c.op << ": " << compare::verdict_name(o.verdict) << ": " << o.detail << "\n" << case_to_json(c).dump();
}

TEST(PeerPsRoiOps, RandomCasesAgreeForwardAndBackward) {
  REQUIRE_PEER();
  std::mt19937_64 rng(20261124);
  for (const char* op : {"ps_roi_align", "ps_roi_pool"}) {
    std::map<std::string, int> tally;
    for (int i = 0; i < 150; ++i) expect_agrees_or_named(random_case(op, rng), tally);
    std::printf("[ peer     ] %s:", op);
    for (const auto& [k, n] : tally) std::printf(" %s=%d", k.c_str(), n);
    std::printf("\n");
    EXPECT_GE(tally["agree"], 50) << op;  // the rest named; ps_roi_pool bins often reach the border
  }
}

TEST(PeerPsRoiOps, EdgeCasesAgree) {
  REQUIRE_PEER();
  std::map<std::string, int> tally;
  const Tensor x = ramps(1, 4, 4, 5);
  Tensor g(Shape{1, 1, 2, 2});
  for (size_t i = 0; i < 4; ++i) g.data[i] = 1.0 + double(i);
  const std::vector<std::vector<double>> boxes = {
      {0, 0, 0, 5, 4},          // the whole image
      {0, -1, -1, 6, 5},        // beyond it on every side
      {0, -1, -1, 1, 1},        // ps_roi_align at scale 1, adaptive: samples at -1 and 0 exactly
      {0, 4, 3, 6, 5},          // ps_roi_align at scale 1, adaptive: samples at W-1, W and H-1, H
      {0, 0.5, 0.5, 4.5, 3.5},  // corners on half pixels
      {0, 2.5, 1.5, 2.5, 3.5},  // zero width
      {0, 4, 3, 1, 1},          // reversed
      {0, 3.9, 2.9, 4.9, 3.9},  // the last row and column
  };
  for (const auto& b : boxes)
    for (int64_t sr : {-1, 1, 2}) {
      expect_agrees_or_named(ps_case("ps_roi_align", x, rois_of({b}), 2, 2, 1.0, sr, g), tally);
      expect_agrees_or_named(ps_case("ps_roi_align", x, rois_of({b}), 2, 2, 0.5, sr, g), tally);
    }
  for (const auto& b : boxes) {
    expect_agrees_or_named(ps_case("ps_roi_pool", x, rois_of({b}), 2, 2, 1.0, -1, g), tally);
    expect_agrees_or_named(ps_case("ps_roi_pool", x, rois_of({b}), 2, 2, 0.5, -1, g), tally);
  }
  // No rois; an empty image (ps_roi_pool only: torchvision's ps_roi_align crashes there, and
  // the backend declines it).
  expect_agrees_or_named(ps_case("ps_roi_align", x, Tensor(Shape{0, 5}), 2, 2, 1.0, -1, Tensor(Shape{0, 1, 2, 2})), tally);
  expect_agrees_or_named(ps_case("ps_roi_pool", x, Tensor(Shape{0, 5}), 2, 2, 1.0, -1, Tensor(Shape{0, 1, 2, 2})), tally);
  expect_agrees_or_named(ps_case("ps_roi_pool", Tensor(Shape{1, 4, 0, 3}), rois_of({{0, 0, 0, 2, 2}}), 2, 2, 1.0, -1, g), tally);
  EXPECT_TRUE(peer().unsupported_reason(ps_case("ps_roi_align", Tensor(Shape{1, 4, 0, 3}), rois_of({{0, 0, 0, 2, 2}}), 2, 2, 1.0)));
  for (const auto& [k, n] : tally) std::printf("[ peer     ] edge cases: %s=%d\n", k.c_str(), n);
}

// Each divergence on its smallest case: the plain comparison fails, the named divergence
// (and only it) explains it, and the peer's values are the ones derived beside the case.

TEST(PeerPsRoiOps, DivergenceEmptyGridNaN) {
  REQUIRE_PEER();
  // ps_roi_align, 1 channel 1x1 on a 2x2 image, adaptive grid, the zero-size box (1,1)-(1,1):
  // gh = gw = ceil(0) = 0; the spec gives 0, torchvision 0 / (0*0) = NaN.
  const Case c = ps_case("ps_roi_align", ramps(1, 1, 2, 2), rois_of({{0, 1, 1, 1, 1}}), 1, 1, 1.0, -1,
                         Tensor(Shape{1, 1, 1, 1}, 1.0));
  EXPECT_TRUE(std::isnan(peer().run(c).outputs.at("output").data.at(0)));
  EXPECT_EQ(run_ref(c).outputs.at("output").data.at(0), 0.0);
  const compare::Outcome o = versus_peer(c);
  EXPECT_EQ(o.verdict, compare::Verdict::NamedDivergence) << o.detail;
  EXPECT_EQ(o.divergence, "ps_roi_align-empty-grid-nan (forward only)");
  // Reversed by more than a bin in one axis only: gh = ceil(-2) = -2, gw = 1, torchvision
  // gives 0 / -2 = -0, which equals the spec's 0.
  const Case neg = ps_case("ps_roi_align", ramps(1, 1, 4, 4), rois_of({{0, 0, 3, 1, 1}}), 1, 1, 1.0, -1,
                           Tensor(Shape{1, 1, 1, 1}, 1.0));
  const double v = peer().run(neg).outputs.at("output").data.at(0);
  EXPECT_TRUE(v == 0.0 && std::signbit(v));
  EXPECT_EQ(versus_peer(neg).verdict, compare::Verdict::Agree);
}

TEST(PeerPsRoiOps, DivergenceBackwardClampsToSize) {
  REQUIRE_PEER();
  // ps_roi_pool, 1 channel 1x1, roi (0,0)-(2,2) on a 2x2 image: xs = 0, xe = 2, rw = 2, the bin
  // [0, 2) clamped into [0, W-1] = [0, 1]: [0, 1) x [0, 1), the forward is X[0][0] = 0.
  // torchvision's backward clamps into [0, W] = [0, 2]: [0, 2) x [0, 2), area 4, so gout 1 puts
  // 1/4 on every pixel where the transpose of the forward puts 1 on pixel (0, 0).
  const Case c = ps_case("ps_roi_pool", ramps(1, 1, 2, 2), rois_of({{0, 0, 0, 2, 2}}), 1, 1, 1.0, -1,
                         Tensor(Shape{1, 1, 1, 1}, 1.0));
  const Result t = peer().run(c);
  EXPECT_EQ(t.outputs.at("output").data, (std::vector<double>{0.0}));
  EXPECT_EQ(t.grads.at("input").data, (std::vector<double>{0.25, 0.25, 0.25, 0.25}));
  EXPECT_EQ(run_ref(c).grads.at("input").data, (std::vector<double>{1, 0, 0, 0}));
  const compare::Outcome o = versus_peer(c);
  EXPECT_EQ(o.verdict, compare::Verdict::NamedDivergence) << o.detail;
  EXPECT_EQ(o.divergence, "ps_roi_pool-backward-clamps-to-size (backward only)");
}

TEST(PeerPsRoiOps, DivergenceBackwardRoundf) {
  REQUIRE_PEER();
  // ps_roi_pool, 1 channel 1x1 on a 2x4 ramp (row 0: 0..3, row 1: 4..7), roi x from
  // 0.4999999999 to 3, y from 0 to 2. The forward rounds the double: xs = 0, rw = 3, columns
  // [0, 3); ys = 0, rh = 2, rows [0, 2) clamped into [0, H-1]: [0, 1). Mean of 0, 1, 2 = 1.
  // torchvision's backward rounds 0.4999999999 as the float32 0.5: xs = 1, rw = 2, columns
  // [1, 3), and rows [0, 2) (its clamp into [0, H]): 4 pixels, 1/4 each. The transpose of the
  // forward puts 1/3 on (0, 0), (0, 1), (0, 2). Both backward divergences are needed here.
  const Case c = ps_case("ps_roi_pool", ramps(1, 1, 2, 4), rois_of({{0, 0.4999999999, 0, 3, 2}}), 1, 1, 1.0, -1,
                         Tensor(Shape{1, 1, 1, 1}, 1.0));
  const Result t = peer().run(c);
  EXPECT_DOUBLE_EQ(t.outputs.at("output").data.at(0), 1.0);
  EXPECT_EQ(t.grads.at("input").data, (std::vector<double>{0, 0.25, 0.25, 0, 0, 0.25, 0.25, 0}));
  const compare::Outcome o = versus_peer(c);
  EXPECT_EQ(o.verdict, compare::Verdict::NamedDivergence) << o.detail;
  EXPECT_EQ(o.divergence, "ps_roi_pool-backward-roundf+ps_roi_pool-backward-clamps-to-size (backward only)");
  // With the roi inside the image (no clamp difference), the rounding alone: roi x from
  // 0.4999999999 to 2, y from 0 to 1, on a 3x4 ramp: forward bin [0, 2) x [0, 1), backward
  // [1, 2) x [0, 1): 1 on pixel (0, 1) where the transpose puts 1/2 on (0, 0) and (0, 1).
  const Case only = ps_case("ps_roi_pool", ramps(1, 1, 3, 4), rois_of({{0, 0.4999999999, 0, 2, 1}}), 1, 1, 1.0, -1,
                            Tensor(Shape{1, 1, 1, 1}, 1.0));
  const Result t2 = peer().run(only);
  std::vector<double> want(12, 0.0);
  want[1] = 1.0;
  EXPECT_EQ(t2.grads.at("input").data, want);
  const compare::Outcome o2 = versus_peer(only);
  EXPECT_EQ(o2.verdict, compare::Verdict::NamedDivergence) << o2.detail;
  EXPECT_EQ(o2.divergence, "ps_roi_pool-backward-roundf (backward only)");
}

TEST(PeerPsRoiOps, DivergencesLeaveUnaffectedCasesAlone) {
  // A divergence claims only the cases it affects: a box with samples, inside the image.
  const Case a = ps_case("ps_roi_align", ramps(1, 4, 4, 4), rois_of({{0, 0.5, 0.5, 2.5, 2.5}}), 2, 2, 1.0, -1,
                         Tensor(Shape{1, 1, 2, 2}, 1.0));
  const Case p = ps_case("ps_roi_pool", ramps(1, 4, 4, 4), rois_of({{0, 0, 0, 2, 2}}), 2, 2, 1.0, -1,
                         Tensor(Shape{1, 1, 2, 2}, 1.0));
  for (const Divergence& d : torchvision_divergences()) {
    if (!d.peer_equivalent) continue;
    EXPECT_FALSE(d.peer_equivalent(a).has_value()) << d.name;
    EXPECT_FALSE(d.peer_equivalent(p).has_value()) << d.name;
  }
}

}  // namespace
}  // namespace oplab
