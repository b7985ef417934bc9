// The Halide float32 kernels of ps_roi_align and ps_roi_pool (SPEC §11; forward and backward)
// against the double reference: the fixed-seed edge-aimed corpus by the per-element error bound
// of SPEC §9 (compare/float_compare.h), then hand cases: boxes on the image border, reversed,
// zero-size and off the image; K = 0; several images; fixed and adaptive grids; ps_roi_pool's
// C rounding at x*s = n + 0.5 and its bins that never reach the last row or column; the
// channel each bin reads; overlapping scatters and vector tails. Every Halide backend that
// can run here runs them (halide-opencl runs the GPU schedules on any OpenCL device;
// halide-cuda needs a GPU), and each says why it is skipped elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
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

constexpr uint64_t kSeed = 17;
constexpr int kCases = 200;

Backend& ref() { return *builtin_backends().find("ref"); }

// ---------------------------------------------------------------- the corpus

struct CorpusParam {
  std::string op, backend;
};
void PrintTo(const CorpusParam& p, std::ostream* os) { *os << p.op << " on " << p.backend; }

class HalidePsRoiCorpus : public ::testing::TestWithParam<CorpusParam> {};

// Every valid case is supported, forward and backward, and none may fail. The kernels form
// boxes, bins, grids and samples in double with the reference's operations: on the inputs as
// they see them (rounded to float32) every discrete decision is the reference's.
TEST_P(HalidePsRoiCorpus, WithinBoundForwardAndBackward) {
  const auto [op, name] = GetParam();
  Backend* b = runnable_backend(name, "ps_roi");
  if (!b) GTEST_SKIP() << name << " cannot run here";
  (void)check_corpus(*b, op, kCases, kSeed, "ps_roi");
}

std::vector<CorpusParam> corpus_params() {
  std::vector<CorpusParam> v;
  for (HalideDevice d : kHalideDevices)
    for (const char* op : {"ps_roi_align", "ps_roi_pool"}) v.push_back({op, halide_backend_name(d)});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Ops, HalidePsRoiCorpus, ::testing::ValuesIn(corpus_params()),
                         [](const auto& info) { return test_name_of(info.param.op + "_" + info.param.backend); });

// ---------------------------------------------------------------- hand cases

Tensor rois_of(const std::vector<std::vector<double>>& rows) {
  Tensor t(Shape{int64_t(rows.size()), 5});
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t j = 0; j < 5; ++j) t.at(int64_t(r), int64_t(j)) = rows[r][j];
  return t;
}

json params_of(const std::string& op, int64_t PH, int64_t PW, double scale, int sampling_ratio) {
  json p = {{"output_size", {PH, PW}}, {"spatial_scale", scale}};
  if (op == "ps_roi_align") p["sampling_ratio"] = sampling_ratio;
  return p;
}

// A case with a random feature map and grad_output in [-1, 1], every value representable in
// float32 (so the kernels see exactly what the reference sees: what remains is their own
// rounding).
Case make_case(const std::string& op, json params, Shape input_shape, Tensor rois, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Case c;
  c.op = op;
  c.params = std::move(params);
  Tensor in(input_shape);
  for (double& v : in.data) v = double(float(u(rng)));
  const auto os = c.params.at("output_size");
  const int64_t PH = os[0].get<int64_t>(), PW = os[1].get<int64_t>();
  Tensor gout(Shape{rois.dim(0), input_shape[1] / (PH * PW), PH, PW});
  for (double& v : gout.data) v = double(float(u(rng)));
  for (double& v : rois.data) v = double(float(v));
  c.inputs["input"] = std::move(in);
  c.inputs["rois"] = std::move(rois);
  c.grad_output = std::move(gout);
  return c;
}

// Every element of every output and gradient within the float bound on every Halide backend
// that can run here (no boundary flips expected: the kernels form the geometry in double with
// the reference's operations).
void expect_agrees(const Case& c, const std::string& what) {
  for (Backend* b : runnable_halide_backends()) {
    const compare::FloatOutcome o = compare::compare_float_backend(ref(), *b, c);
    EXPECT_EQ(o.verdict, compare::Verdict::Agree)
        << what << " on " << b->name() << ": " << compare::verdict_name(o.verdict) << ": " << o.detail;
  }
}

template <class Check>
void on_halide(const Case& c, Check check) {
  for (Backend* b : runnable_halide_backends()) {
    SCOPED_TRACE(b->name());
    check(evaluate(*b, c));
  }
}

// Boxes in feature-map pixels on an H x W = 9 x 11 image at scale 0.5 (so image coordinates
// are twice these): on the border, covering the whole image, reversed, zero-size, off the
// image on each side, straddling an edge, in both images.
std::vector<std::vector<double>> edge_boxes() {
  std::vector<std::vector<double>> b = {
      {0, 0, 0, 11, 9},       // the whole image
      {1, -0.5, -0.5, 10.5, 8.5},  // aligned: the half-pixel border of the whole image
      {0, 0, 0, 0, 0},        // zero-size at the corner
      {1, 5, 4, 5, 4},        // zero-size inside
      {0, 8, 7, 2, 1},        // reversed
      {1, 3, 2, 9, 2},        // zero height
      {0, -6, -5, -1, -1},    // above and left of the image
      {1, 12, 10, 20, 15},    // below and right
      {0, -3, 2, 4, 6},       // straddling the left edge
      {1, 9, 7, 14, 12},      // straddling the bottom-right corner
      {0, 10, 8, 11, 9},      // the last pixel
      {1, 0.25, 0.75, 6.5, 3.25},
  };
  for (auto& r : b)
    for (size_t j = 1; j < 5; ++j) r[j] *= 2.0;
  return b;
}

TEST(HalidePsRoiOps, EdgeBoxesFixedAndAdaptiveGrids) {
  for (const char* op : {"ps_roi_align", "ps_roi_pool"})
    for (int sr : {0, 1, 2, 3})
      for (auto [PH, PW] : {std::pair<int64_t, int64_t>{1, 1}, {2, 3}, {3, 3}}) {
        if (std::string(op) == "ps_roi_pool" && sr != 0) continue;
        const std::string what = std::string(op) + " sr=" + std::to_string(sr) + " " + std::to_string(PH) + "x" +
                                 std::to_string(PW);
        const Case c = make_case(op, params_of(op, PH, PW, 0.5, sr), Shape{2, 2 * PH * PW, 9, 11}, rois_of(edge_boxes()),
                                 uint64_t(sr * 10 + PH));
        expect_agrees(c, what);
      }
}

TEST(HalidePsRoiOps, NoRoisGiveEmptyOutputAndZeroGradient) {
  for (const char* op : {"ps_roi_align", "ps_roi_pool"}) {
    const Case c = make_case(op, params_of(op, 2, 2, 1.0, 2), Shape{2, 8, 5, 6}, Tensor(Shape{0, 5}), 1);
    on_halide(c, [&](const Result& r) {
      EXPECT_EQ(r.outputs.at("output").shape, (Shape{0, 2, 2, 2})) << op;
      const Tensor& g = r.grads.at("input");
      EXPECT_EQ(g.shape, (Shape{2, 8, 5, 6})) << op;
      for (double v : g.data) ASSERT_EQ(v, 0.0) << op;
    });
  }
}

TEST(HalidePsRoiOps, EachBinReadsItsOwnChannel) {
  // Channel ci is the constant ci + 1 in image 0 and 100 * (ci + 1) in image 1: the mean of a
  // bin is then exactly the constant of the channel it reads, (c * PH + ph) * PW + pw.
  const int64_t Co = 3, PH = 2, PW = 3, C = Co * PH * PW, H = 7, W = 8;
  Tensor in(Shape{2, C, H, W});
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t ci = 0; ci < C; ++ci)
      for (int64_t i = 0; i < H * W; ++i) in.data[size_t((n * C + ci) * H * W + i)] = double(ci + 1) * (n ? 100.0 : 1.0);
  const Tensor rois = rois_of({{0, 0, 0, 6, 5}, {1, 1, 1, 7, 6}});
  for (const char* op : {"ps_roi_align", "ps_roi_pool"}) {
    Case c;
    c.op = op;
    c.params = params_of(op, PH, PW, 1.0, 2);
    c.inputs["input"] = in;
    c.inputs["rois"] = rois;
    on_halide(c, [&](const Result& r) {
      const Tensor& out = r.outputs.at("output");
      for (int64_t k = 0; k < 2; ++k)
        for (int64_t co = 0; co < Co; ++co)
          for (int64_t ph = 0; ph < PH; ++ph)
            for (int64_t pw = 0; pw < PW; ++pw) {
              const double want = double((co * PH + ph) * PW + pw + 1) * (k ? 100.0 : 1.0);
              // ps_roi_pool sums integers and divides by the count: exact. ps_roi_align's
              // bilinear weights sum to 1 within a few float32 roundings.
              EXPECT_NEAR(out.at(k, co, ph, pw), want, std::string(op) == "ps_roi_pool" ? 0.0 : want * 1e-6)
                  << op << " k=" << k << " c=" << co << " bin=(" << ph << "," << pw << ")";
            }
    });
  }
}

TEST(HalidePsRoiPool, RoundsHalfAwayFromZero) {
  // Row 0 of a 2 x 8 plane is 0..7 with 1e9 planted at column 2; scale 0.5, one bin.
  // x1 = 5 -> 2.5 -> 3 and x2 = 9 -> 4.5 -> 5 (C round): columns 3..4, mean 3.5. Half to even
  // (2 and 4) would give columns 2..3, which hold the 1e9. The rows: y 0 -> 0, y2 = 1 -> 0.5
  // -> 1: row 0 only.
  Tensor in(Shape{1, 1, 2, 8});
  for (int64_t x = 0; x < 8; ++x) in.at(0, 0, 0, x) = double(x), in.at(0, 0, 1, x) = 1e9;
  in.at(0, 0, 0, 2) = 1e9;
  Case c;
  c.op = "ps_roi_pool";
  c.params = params_of("ps_roi_pool", 1, 1, 0.5, 0);
  c.inputs["input"] = in;
  c.inputs["rois"] = rois_of({{0, 5.0, 0.0, 9.0, 1.0},
                              // Negative ties: x1 = -5 -> -2.5 -> -3, x2 = 1 -> 0.5 -> 1: the bin
                              // [-3, 1) clamped to column 0 (mean 0). Half to even (-2 and 0)
                              // would give [-2, 0), clamped empty: 0 as well, so the gradient
                              // tells them apart (below).
                              {0, -5.0, 0.0, 1.0, 1.0}});
  Tensor gout(Shape{2, 1, 1, 1});
  gout.data = {2.0, 8.0};
  c.grad_output = gout;
  on_halide(c, [](const Result& r) {
    EXPECT_EQ(r.outputs.at("output").data, (std::vector<double>{3.5, 0.0}));
    // Box 0 hands 2 / 2 to columns 3 and 4 of row 0; box 1 hands 8 / 1 to column 0.
    Tensor want(Shape{1, 1, 2, 8});
    want.at(0, 0, 0, 3) = 1.0, want.at(0, 0, 0, 4) = 1.0, want.at(0, 0, 0, 0) = 8.0;
    EXPECT_EQ(r.grads.at("input").data, want.data);
  });
  // And the corpus's way: ties at every x*s = n + 0.5 of a range of boxes against the reference.
  std::vector<std::vector<double>> ties;
  for (int i = -4; i < 12; ++i) ties.push_back({double((i + 4) % 2), 2.0 * i + 1.0, 2.0 * (i / 2) - 1.0, 2.0 * i + 7.0, 2.0 * i + 5.0});
  expect_agrees(make_case("ps_roi_pool", params_of("ps_roi_pool", 2, 2, 0.5, 0), Shape{2, 8, 9, 11}, rois_of(ties), 5),
                "ps_roi_pool ties");
}

TEST(HalidePsRoiPool, BinsNeverReachTheLastRowOrColumn) {
  // A box over the whole 4 x 5 image: the bin is clamped to [0, W-1) x [0, H-1), as
  // torchvision's kernels do, so the planted 1e9 in the last row and column is never read
  // and gets no gradient.
  Tensor in(Shape{1, 1, 4, 5});
  for (int64_t y = 0; y < 4; ++y)
    for (int64_t x = 0; x < 5; ++x) in.at(0, 0, y, x) = (y == 3 || x == 4) ? 1e9 : double(5 * y + x);
  Case c;
  c.op = "ps_roi_pool";
  c.params = params_of("ps_roi_pool", 1, 1, 1.0, 0);
  c.inputs["input"] = in;
  c.inputs["rois"] = rois_of({{0, 0, 0, 5, 4}});
  c.grad_output = Tensor(Shape{1, 1, 1, 1}, 12.0);
  on_halide(c, [](const Result& r) {
    // Rows 0..2, columns 0..3: mean of 5y + x = 5 + 1.5.
    EXPECT_EQ(r.outputs.at("output").data.at(0), 6.5);
    const Tensor& g = r.grads.at("input");
    for (int64_t y = 0; y < 4; ++y)
      for (int64_t x = 0; x < 5; ++x) EXPECT_EQ(g.at(0, 0, y, x), (y == 3 || x == 4) ? 0.0 : 1.0) << y << "," << x;
  });
}

TEST(HalidePsRoiAlign, EmptyGridGivesZeroAndNoGradient) {
  // A reversed box has a negative adaptive grid (no samples): output 0, no gradient (torchvision
  // divides by the empty grid's size: a divergence of the peer, not of these kernels). With a
  // fixed grid the same box samples backwards, a mirrored box.
  Case c = make_case("ps_roi_align", params_of("ps_roi_align", 2, 2, 1.0, 0), Shape{1, 8, 6, 6},
                     rois_of({{0, 4, 4, 1, 1}, {0, 2, 2, 2, 2}}), 9);
  on_halide(c, [](const Result& r) {
    for (double v : r.outputs.at("output").data) EXPECT_EQ(v, 0.0);
    for (double v : r.grads.at("input").data) EXPECT_EQ(v, 0.0);
  });
  expect_agrees(c, "adaptive, reversed and zero-size");
  c.params["sampling_ratio"] = 2;
  expect_agrees(c, "fixed grid, reversed and zero-size");
}

// Many overlapping rois over both images, output channel counts below, at and past the
// vector width, bins that are not square: the parallel and vectorised CPU schedules, the
// race-free CPU scatter and the GPU's atomic adds of overlapping bins, against the reference.
Case random_case(const std::string& op, int64_t Co, int64_t PH, int64_t PW, int64_t K, int sr, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int64_t N = 2, H = 23, W = 31;
  Tensor rois(Shape{K, 5});
  std::uniform_real_distribution<double> pos(-8.0, 130.0), len(0.0, 60.0);
  for (int64_t k = 0; k < K; ++k) {
    rois.at(k, 0) = double(k % N);
    rois.at(k, 1) = pos(rng), rois.at(k, 2) = pos(rng) * 0.75;
    rois.at(k, 3) = rois.at(k, 1) + len(rng), rois.at(k, 4) = rois.at(k, 2) + len(rng);
  }
  return make_case(op, params_of(op, PH, PW, 0.25, sr), Shape{N, Co * PH * PW, H, W}, rois, seed + 100);
}

TEST(HalidePsRoiOps, OverlappingRoisAndVectorTails) {
  for (const char* op : {"ps_roi_align", "ps_roi_pool"})
    for (int64_t Co : {1, 5, 8, 21})
      for (auto [PH, PW] : {std::pair<int64_t, int64_t>{3, 4}, {7, 7}})
        for (int sr : {0, 2}) {
          if (std::string(op) == "ps_roi_pool" && sr != 0) continue;
          const std::string what = std::string(op) + " Co=" + std::to_string(Co) + " " + std::to_string(PH) + "x" +
                                   std::to_string(PW) + " sr=" + std::to_string(sr);
          expect_agrees(random_case(op, Co, PH, PW, 60, sr, uint64_t(Co * 7 + PH + sr)), what);
        }
}

}  // namespace
}  // namespace oplab
