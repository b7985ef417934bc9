// The Halide float32 kernels of roi_pool, roi_align and deform_roi_pool (forward and backward)
// against the double reference: the fixed-seed edge-aimed corpus by the per-element error bound
// of SPEC §9 (compare/float_compare.h), then hand cases whose answer is known exactly (rounding,
// NaN and ties in max modes, the right-sided derivative at kinks, overlapping scatters, vector
// tails). Every Halide backend runs them: halide-opencl (the GPU schedules) wherever an OpenCL
// device is, halide-cuda on a GPU machine; each says why it is skipped elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <random>

#include "cli/builtin_backends.h"
#include "compare/float_compare.h"
#include "fuzz/generators.h"
#include "halide/halide_backend.h"
#include "tests/halide_backends.h"
#include "tests/halide_corpus.h"

namespace oplab {
namespace {

constexpr uint64_t kSeed = 11;
constexpr int kCases = 200;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The Halide backend of that name, or nullptr (test skipped, with the reason) when it cannot
// run on this machine.
Backend* halide_backend(const std::string& name) { return runnable_backend(name, "roi"); }

Backend& ref() { return *builtin_backends().find("ref"); }

// ---------------------------------------------------------------- the corpus

struct CorpusParam {
  std::string op, backend;
};
void PrintTo(const CorpusParam& p, std::ostream* os) { *os << p.op << " on " << p.backend; }

class HalideRoiCorpus : public ::testing::TestWithParam<CorpusParam> {};

// Every case of these ops is supported, forward and backward, and none may fail. A case whose
// float32 bound is vacuous (an adaptive grid of a million samples per bin: the kernels' float32
// sums drift by several percent there) is no evidence, and said so.
TEST_P(HalideRoiCorpus, WithinBoundForwardAndBackward) {
  const auto [op, name] = GetParam();
  Backend* b = halide_backend(name);
  if (!b) GTEST_SKIP() << name << " cannot run here";
  CorpusOptions o;
  o.flips_vanish_rounded = false;
  o.allow_skipped = true;
  const CorpusCounts r = check_corpus(*b, op, kCases, kSeed, "roi", o);
  EXPECT_LE(r.count.count("skipped") ? r.count.at("skipped") : 0, kCases / 50) << "more than 2% of the corpus is no evidence";
}

std::vector<CorpusParam> corpus_params() {
  std::vector<CorpusParam> v;
  for (HalideDevice d : kHalideDevices)
    for (const char* op : {"roi_pool", "roi_align", "deform_roi_pool"}) v.push_back({op, halide_backend_name(d)});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Ops, HalideRoiCorpus, ::testing::ValuesIn(corpus_params()),
                         [](const auto& info) { return test_name_of(info.param.op + "_" + info.param.backend); });

// ---------------------------------------------------------------- hand cases

// Ramp plane X[y][x] = W*y + x on every channel (channel c adds 1000*c).
Tensor ramp(int64_t N, int64_t C, int64_t H, int64_t W) {
  Tensor t(Shape{N, C, H, W});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x) t.at(n, c, y, x) = double(W * y + x) + 1000.0 * double(c) + 100.0 * double(n);
  return t;
}

Tensor rois_of(const std::vector<std::vector<double>>& rows) {
  Tensor t(Shape{int64_t(rows.size()), 5});
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t j = 0; j < 5; ++j) t.at(int64_t(r), int64_t(j)) = rows[r][j];
  return t;
}

Case make_case(const std::string& op, json params, Tensor input, Tensor rois, const Tensor* gout = nullptr) {
  Case c;
  c.op = op;
  c.params = std::move(params);
  c.inputs["input"] = std::move(input);
  c.inputs["rois"] = std::move(rois);
  if (gout) c.grad_output = *gout;
  return c;
}

// Runs a case on every Halide backend that can run here.
template <class Check>
void on_halide(const Case& c, Check check) {
  for (Backend* b : runnable_halide_backends()) {
    SCOPED_TRACE(b->name());
    check(evaluate(*b, c));
  }
}

// Every element equal to the reference's within the float bound (no flips expected).
void expect_agrees(const Case& c) {
  for (Backend* b : runnable_halide_backends()) {
    const compare::FloatOutcome o = compare::compare_float_backend(ref(), *b, c);
    EXPECT_EQ(o.verdict, compare::Verdict::Agree) << b->name() << ": " << compare::verdict_name(o.verdict) << ": " << o.detail;
  }
}

TEST(HalideRoiPool, RoundsHalfAwayFromZero) {
  // Row 0 of the ramp is 0..5, with 1e9 planted at column 2. scale 0.5:
  // x1 = 5 -> 2.5 -> 3 and x2 = 9 -> 4.5 -> 5 (C round): columns 3..5, max 5. Half to even
  // (Halide's round) would give 2 and 4: columns 2..4, max 1e9.
  Tensor in = ramp(1, 1, 2, 6);
  in.at(0, 0, 0, 2) = 1e9;
  const json params = {{"output_size", {1, 1}}, {"spatial_scale", 0.5}};
  on_halide(make_case("roi_pool", params, in, rois_of({{0, 5.0, 0.0, 9.0, 0.0}})),
            [](const Result& r) { EXPECT_EQ(r.outputs.at("output").data.at(0), 5.0); });
  // Negative ties: x1 = -5 -> -2.5 -> -3 and x2 = 1 -> 0.5 -> 1: width 5, the bin [-3, 2)
  // clamped to columns 0..1, max 1. Half to even (-2 and 0) would give column 0 only: 0.
  on_halide(make_case("roi_pool", params, ramp(1, 1, 2, 6), rois_of({{0, -5.0, 0.0, 1.0, 0.0}})),
            [](const Result& r) { EXPECT_EQ(r.outputs.at("output").data.at(0), 1.0); });
}

TEST(HalideRoiPool, NanEmptyAndTies) {
  // 1x4 image [NaN, 7, 7, NaN]; scale 1.
  Tensor in(Shape{1, 1, 1, 4});
  in.data = {kNaN, 7.0, 7.0, kNaN};
  Tensor gout(Shape{3, 1, 1, 1});
  gout.data = {1.0, 2.0, 4.0};
  const Case c = make_case("roi_pool", {{"output_size", {1, 1}}, {"spatial_scale", 1.0}}, in,
                           rois_of({{0, 0, 0, 3, 0},     // NaN never wins; the first 7 does
                                    {0, 0, 0, 0, 0},     // only NaN: output NaN, no gradient
                                    {0, 9, 0, 12, 0}}),  // off the image: empty bin, 0
                           &gout);
  on_halide(c, [](const Result& r) {
    const auto& out = r.outputs.at("output").data;
    EXPECT_EQ(out.at(0), 7.0);
    EXPECT_TRUE(std::isnan(out.at(1)));
    EXPECT_EQ(out.at(2), 0.0);
    const auto& g = r.grads.at("input").data;
    EXPECT_EQ(g, (std::vector<double>{0.0, 1.0, 0.0, 0.0}));
  });
}

// The CPU kernel keeps one running max for the even rows of a bin and one for the odd rows,
// and combines them: equal maxima in both must still give the first pixel in row-major order,
// and the odd row past a bin with an odd number of rows must take no part. One 1x1 bin over
// a 3-wide image (scale 1, the end inclusive); the argmax is read from the gradient (gout 1).
TEST(HalideRoiPool, TiesAcrossRowsKeepTheFirstPixel) {
  struct Plane {
    std::vector<double> values;  // H rows of 3
    double y2;                   // the box's last row
    double max;
    int argmax;  // flat index y * 3 + x
  };
  const std::vector<Plane> planes = {
      // 9 first at (1, 0) (an odd row), again at (2, 1) and (3, 0): index 3.
      {{1, 1, 1, 9, 2, 9, 3, 9, 3, 9, 0, 0}, 3, 9, 3},
      // 9 first at (0, 2) (an even row), again at (1, 0): index 2.
      {{1, 1, 9, 9, 2, 2, 3, 9, 3}, 2, 9, 2},
      // Only NaN in the even rows: the odd row's first 4 wins.
      {{kNaN, kNaN, kNaN, 4, 4, 1, kNaN, kNaN, kNaN}, 2, 4, 3},
      // Rows 0..2 only (3 rows): row 3's 1e9 lies past the bin.
      {{1, 2, 3, 4, 5, 6, 7, 8, 0, 1e9, 1e9, 1e9}, 2, 8, 7},
  };
  for (const Plane& p : planes) {
    const int64_t H = int64_t(p.values.size()) / 3;
    Tensor in(Shape{1, 1, H, 3});
    in.data = p.values;
    Tensor gout(Shape{1, 1, 1, 1}, 1.0);
    const Case c = make_case("roi_pool", {{"output_size", {1, 1}}, {"spatial_scale", 1.0}}, in,
                             rois_of({{0, 0, 0, 2, p.y2}}), &gout);
    SCOPED_TRACE("argmax " + std::to_string(p.argmax));
    on_halide(c, [&](const Result& r) {
      EXPECT_EQ(r.outputs.at("output").data.at(0), p.max);
      std::vector<double> want(p.values.size(), 0.0);
      want[size_t(p.argmax)] = 1.0;
      EXPECT_EQ(r.grads.at("input").data, want);
    });
  }
  // -0 in row 0 and +0 in row 1 are equal: the first, -0, is the output.
  Tensor in(Shape{1, 1, 2, 1});
  in.data = {-0.0, 0.0};
  on_halide(make_case("roi_pool", {{"output_size", {1, 1}}, {"spatial_scale", 1.0}}, in, rois_of({{0, 0, 0, 0, 1}})),
            [](const Result& r) { EXPECT_TRUE(std::signbit(r.outputs.at("output").data.at(0))); });
}

// The CPU kernels visit the rois in cache order (by image, band of rows, column) and write
// each roi's output at its own index: rois given in reverse of that order, each reading a
// different constant plane, must come back in the order given.
TEST(HalideRoiOps, OutputsStayInRoiOrder) {
  // Image n is the constant 10 * (n + 1) plus the row (so each box's value tells its rows).
  Tensor in(Shape{2, 1, 80, 8});
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t y = 0; y < 80; ++y)
      for (int64_t x = 0; x < 8; ++x) in.at(n, 0, y, x) = 10.0 * double(n + 1) + double(y);
  // One-row boxes at rows 70, 40, 0 of image 1, then of image 0: cache order is the reverse.
  const Tensor rois = rois_of({{1, 0, 70, 7, 70}, {1, 0, 40, 7, 40}, {1, 0, 0, 7, 0},
                               {0, 0, 70, 7, 70}, {0, 0, 40, 7, 40}, {0, 0, 0, 7, 0}});
  const std::vector<double> want = {90, 60, 20, 80, 50, 10};
  on_halide(make_case("roi_pool", {{"output_size", {1, 1}}, {"spatial_scale", 1.0}}, in, rois),
            [&](const Result& r) { EXPECT_EQ(r.outputs.at("output").data, want); });
  // roi_align (not aligned: the box is raised to one row) on the same boxes, one sample at
  // row y + 0.5, column 3.5: half of rows y and y + 1, exact.
  on_halide(make_case("roi_align", {{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", 1}, {"aligned", false}},
                      in, rois),
            [&](const Result& r) { EXPECT_EQ(r.outputs.at("output").data, (std::vector<double>{90.5, 60.5, 20.5, 80.5, 50.5, 10.5})); });
  // deform_roi_pool (aligned, zero offsets): one sample at row y - 0.5, half of rows y - 1
  // and y; at row -0.5 the edge row itself.
  Case d = make_case("deform_roi_pool", {{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", 1}, {"gamma", 0.1}},
                     in, rois);
  d.inputs["offset"] = Tensor(Shape{6, 2, 1, 1});
  on_halide(d, [&](const Result& r) { EXPECT_EQ(r.outputs.at("output").data, (std::vector<double>{89.5, 59.5, 20, 79.5, 49.5, 10})); });
}

// A sample that lands just past the map's end by the box's double arithmetic. Column image of
// 6 rows, ramp 0..5 (ramp: X[y][0] = y); roi rows 7.5..28.5 at scale 0.3333333333333333, not
// aligned, sampling_ratio 1, 3 x 1 bins. In double, 7.5 * s and 28.5 * s round to 2.5 and 9.5,
// so the box is 7 rows and a bin 7 / 3 = 2.3333333333333335; bin 1's sample is
// 2.5 + 2.3333333333333335 (= 4.833333333333334) + 0.5 * 2.3333333333333335 = 6.000000000000001,
// past H = 6: skipped, so bin 1 averages nothing (0) and passes no gradient on. Bin 0's sample,
// 2.5 + 1.1666666666666667 = 3.6666666666666665, reads 3 + 0.667 (rows 3 and 4). torchvision
// 0.14 gives the same (output [3.6667, 0, 0], grad_input 0). A fused multiply-subtract in the
// box (28.5 * s - 7.5 * s = 6.999999999999999) had put the sample on row 5 instead.
TEST(HalideRoiAlign, SampleJustPastTheMapEndIsSkipped) {
  const Tensor gout = [] {
    Tensor t(Shape{1, 1, 3, 1});
    t.data = {0.0, 0.25, 0.0};
    return t;
  }();
  const json params = {{"output_size", {3, 1}}, {"spatial_scale", 0.3333333333333333}, {"sampling_ratio", 1}, {"aligned", false}};
  on_halide(make_case("roi_align", params, ramp(1, 1, 6, 1), rois_of({{0, 0.0, 7.5, 0.0, 28.5}}), &gout), [](const Result& r) {
    const std::vector<double>& out = r.outputs.at("output").data;
    EXPECT_NEAR(out.at(0), 3.0 + 2.0 / 3.0, 1e-6);
    EXPECT_EQ(out.at(1), 0.0);
    EXPECT_EQ(out.at(2), 0.0);
    for (double g : r.grads.at("input").data) EXPECT_EQ(g, 0.0);
  });
}

TEST(HalideRoiAlign, MaxTieGoesToFirstSampleAndOutOfRangeWinnerPassesNothing) {
  // Plane of ones: every in-range sample ties at 1; the first (iy = 0, ix = 0) wins and gets
  // all of gout, split over its corners. Samples of a 2x2 grid over box (0,0)-(2,2), legacy:
  // y, x in {0.5, 1.5}; the first at (0.5, 0.5) spreads 0.25 to each of (0..1, 0..1).
  Tensor in(Shape{1, 1, 4, 4}, 1.0);
  Tensor gout(Shape{2, 1, 1, 1});
  gout.data = {4.0, 8.0};
  const json params = {{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", 2},
                       {"aligned", false}, {"pool_mode", "max"}};
  // Second roi: off the image, every sample out of range: 0 wins and passes nothing on.
  const Case c = make_case("roi_align", params, in, rois_of({{0, 0, 0, 2, 2}, {0, 10, 10, 12, 12}}), &gout);
  on_halide(c, [](const Result& r) {
    EXPECT_EQ(r.outputs.at("output").data, (std::vector<double>{1.0, 0.0}));
    Tensor want(Shape{1, 1, 4, 4});
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 2; ++x) want.at(0, 0, y, x) = 1.0;
    EXPECT_EQ(r.grads.at("input").data, want.data);
  });
  // Plane of -1, box (3,3)-(7,7): samples at 4 and 6 on each axis. (4, 4) is in range (-1),
  // (4, 6) is past the image (0) and wins: output 0, no gradient at all.
  Tensor g1(Shape{1, 1, 1, 1}, 5.0);
  const Case d = make_case("roi_align", params, Tensor(Shape{1, 1, 4, 4}, -1.0), rois_of({{0, 3, 3, 7, 7}}), &g1);
  on_halide(d, [](const Result& r) {
    EXPECT_EQ(r.outputs.at("output").data.at(0), 0.0);
    for (double v : r.grads.at("input").data) EXPECT_EQ(v, 0.0);
  });
}

// A bin whose samples are all NaN outputs NaN and passes no gradient (docs/semantics.md, "Max
// modes"). One pixel, NaN, box (0,0)-(0,0) legacy: the box is widened to 1 x 1, one sample at
// (0.5, 0.5), clamped onto the pixel. The CPU backward once passed gout to it: outside
// strict_float its is_nan() test was folded away (a fuzz case with a NaN pixel).
TEST(HalideRoiAlign, MaxOfOnlyNanSamplesPassesNoGradient) {
  Tensor gout(Shape{1, 1, 1, 1}, 0.25);
  const json params = {{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", -1},
                       {"aligned", false}, {"pool_mode", "max"}};
  const Case c = make_case("roi_align", params, Tensor(Shape{1, 1, 1, 1}, kNaN), rois_of({{0, 0, 0, 0, 0}}), &gout);
  on_halide(c, [](const Result& r) {
    EXPECT_TRUE(std::isnan(r.outputs.at("output").data.at(0)));
    EXPECT_EQ(r.grads.at("input").data.at(0), 0.0);
  });
}

// deform_roi_pool, one 1x1 bin with one sample (fixed grid 1) at the box centre. The box is
// chosen so that the sample's y lands exactly on a kink of the bilinear rule; the offset is 0.
Result deform_one_sample(Backend& b, const Tensor& in, double yc, double xc) {
  // Aligned: start = x1 - 0.5, extent = x2 - x1; the centre sample is at start + extent/2.
  // Box extent 2 each way: centre = x1 + 0.5.
  Case c = make_case("deform_roi_pool", {{"output_size", {1, 1}}, {"spatial_scale", 1.0}, {"sampling_ratio", 1}, {"gamma", 1.0}},
                     in, rois_of({{0, xc - 0.5, yc - 0.5, xc + 1.5, yc + 1.5}}));
  c.inputs["offset"] = Tensor(Shape{1, 2, 1, 1});
  c.grad_output = Tensor(Shape{1, 1, 1, 1}, 1.0);
  return evaluate(b, c);
}

TEST(HalideDeformRoiPool, RightSidedDerivativeAtKinks) {
  // Plane with X[y][x] = y*y*10 + x on H = W = 4, so the y slope differs from row to row.
  Tensor in(Shape{1, 1, 4, 4});
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) in.at(0, 0, y, x) = 10.0 * y * y + x;
  for (Backend* b : runnable_halide_backends("drp kinks")) {
    SCOPED_TRACE(b->name());
    // d/d offset_y = gamma * rh * dv/dy with rh = 2, gamma = 1.
    struct Want {
      double y, dvdy;
    };
    for (Want w : {Want{0.0, 10.0},    // y = 0: the slope of [0, 1] (right-sided)
                   Want{-0.5, 0.0},    // [-1, 0): edge replicated, flat
                   Want{-1.0, 0.0},    // y = -1 exactly: in range, flat
                   Want{1.0, 30.0},    // interior integer: slope of [1, 2]
                   Want{3.0, 0.0},     // y = H - 1: flat to the right
                   Want{4.0, 0.0}}) {  // y = H: flat
      const Result r = deform_one_sample(*b, in, w.y, 1.25);
      EXPECT_EQ(r.grads.at("offset").data.at(1), 2.0 * w.dvdy) << "y = " << w.y;
      // x = 1.25 interior: dv/dx = 1 whatever y is (in range).
      EXPECT_EQ(r.grads.at("offset").data.at(0), 2.0) << "y = " << w.y;
    }
    // Out of range (y > H): no gradient at all.
    const Result out = deform_one_sample(*b, in, 4.25, 1.25);
    EXPECT_EQ(out.grads.at("offset").data, (std::vector<double>{0.0, 0.0}));
    EXPECT_EQ(out.outputs.at("output").data.at(0), 0.0);
  }
}

// Larger random cases: many overlapping rois, channel counts that are not a multiple of the
// vector width, both batches: the parallel/vectorised schedules and the scatters' accumulation
// of overlapping bins (race-free on the CPU, atomic on the GPU) against the reference.
Case random_case(const std::string& op, int64_t C, int64_t K, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int64_t N = 2, H = 23, W = 31;
  Tensor in(Shape{N, C, H, W});
  for (double& v : in.data) v = u(rng);
  Tensor rois(Shape{K, 5});
  std::uniform_real_distribution<double> pos(-8.0, 130.0), len(0.0, 60.0);
  for (int64_t k = 0; k < K; ++k) {
    rois.at(k, 0) = double(k % N);
    rois.at(k, 1) = pos(rng), rois.at(k, 2) = pos(rng) * 0.75;
    rois.at(k, 3) = rois.at(k, 1) + len(rng), rois.at(k, 4) = rois.at(k, 2) + len(rng);
  }
  json params = {{"output_size", {3, 4}}, {"spatial_scale", 0.25}};
  Case c = make_case(op, params, in, rois);
  if (op != "roi_pool") c.params["sampling_ratio"] = seed % 2 ? 2 : 0;
  if (op == "roi_align") c.params["aligned"] = seed % 3 != 0;
  if (op == "deform_roi_pool") {
    Tensor off(Shape{K, 2, 3, 4});
    for (double& v : off.data) v = 0.3 * u(rng);
    c.inputs["offset"] = off;
    c.params["gamma"] = 0.1;
  }
  Tensor gout(Shape{K, C, 3, 4});
  for (double& v : gout.data) v = u(rng);
  c.grad_output = gout;
  // Every value representable in float32, so that the kernels see exactly the case the
  // reference sees: what remains is the kernels' own rounding.
  for (auto& [name, t] : c.inputs)
    for (double& v : t.data) v = double(float(v));
  for (double& v : c.grad_output->data) v = double(float(v));
  return c;
}

TEST(HalideRoiOps, OverlappingRoisAndVectorTails) {
  for (const char* op : {"roi_pool", "roi_align", "deform_roi_pool"})
    for (int64_t C : {1, 17, 40})
      for (uint64_t seed : {1, 2, 3}) {
        SCOPED_TRACE(std::string(op) + " C=" + std::to_string(C) + " seed=" + std::to_string(seed));
        Case c = random_case(op, C, 60, seed);
        expect_agrees(c);
        if (std::string(op) == "roi_align") {
          c.params["pool_mode"] = "max";
          expect_agrees(c);
        }
        if (std::string(op) == "deform_roi_pool") {
          c.inputs.erase("offset");
          expect_agrees(c);
        }
      }
}

}  // namespace
}  // namespace oplab
