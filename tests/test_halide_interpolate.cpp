// The Halide float32 kernels of interpolate (forward and backward, every mode and rank) against
// the double reference: the fixed-seed edge-aimed corpus and a corpus of larger shapes (the
// fuzz shapes are too small to reach the kernels' vector bodies) judged by the per-element
// error bound of SPEC §9 (compare/float_compare.h); NaN/Inf flowing as in the reference; then
// hand cases whose answer is known exactly. halide-opencl (the GPU schedules) runs the same
// checks wherever an OpenCL device is, halide-cuda on a GPU machine; each says why it is skipped
// elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "cli/builtin_backends.h"
#include "compare/float_compare.h"
#include "fuzz/generators.h"
#include "halide/generators/interpolate_paths.h"
#include "halide/glue/interpolate_plan.h"
#include "halide/halide_backend.h"
#include "halide/halide_glue.h"
#include "interp_area2_fwd_cpu.h"
#include "interp_cubic2_fwd_cpu.h"
#include "interp_linear2_bwd_cpu.h"
#include "interp_linear2_fwd_cpu.h"
#include "interp_nearest1_fwd_cpu.h"
#include "interp_nearest2_fwd_cpu.h"
#include "interp_nearest2x2_bwd_cpu.h"

namespace oplab {
namespace {

constexpr uint64_t kSeed = 20261122;
constexpr int kCorpusCases = 400;
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

Backend& ref() { return *builtin_backends().find("ref"); }

// The Halide backend of that name, or nullptr when it cannot run here (the caller skips and
// the reason is printed).
Backend* halide(const std::string& name) {
  Backend* b = builtin_backends().find(name);
  if (!b) {
    ADD_FAILURE() << name << " is not built in";
    return nullptr;
  }
  if (auto why = b->unavailable_reason()) {
    std::cout << "[interp] " << name << " skipped: " << *why << "\n";
    return nullptr;
  }
  return b;
}

// Outcomes over a set of cases; a flip is a case where float32 and double took a discrete
// decision (a nearest index at a float tie) the opposite way: counted, never a pass.
struct Tally {
  std::map<std::string, int> count;
  double worst = 0;
  std::map<std::string, double> worst_by_mode;  // "bicubic 2-D" -> worst error/bound
  void add(const Case& c, const compare::FloatOutcome& o, const std::string& what) {
    ++count[compare::verdict_name(o.verdict)];
    worst = std::max(worst, o.worst_ratio);
    const std::string mode = c.params.value("mode", "nearest") + " " + std::to_string(c.in("input").rank() - 2) + "-D";
    worst_by_mode[mode] = std::max(worst_by_mode[mode], o.worst_ratio);
    EXPECT_TRUE(o.verdict == compare::Verdict::Agree || o.verdict == compare::Verdict::BoundaryFlip)
        << what << ": " << compare::verdict_name(o.verdict) << ": " << o.detail << "\n  params " << c.params.dump()
        << " input " << shape_str(c.in("input").shape);
  }
  void print(const std::string& what) const {
    std::cout << "[interp] " << what << ":";
    for (const auto& [k, n] : count) std::cout << " " << k << "=" << n;
    std::cout << " worst error/bound=" << worst << "\n[interp]   worst by mode:";
    for (const auto& [m, w] : worst_by_mode) std::cout << " {" << m << "}=" << w;
    std::cout << "\n";
  }
};

Case make_case(json params, Tensor input, std::optional<Tensor> grad_output = std::nullopt) {
  Case c;
  c.op = "interpolate";
  c.params = std::move(params);
  c.inputs["input"] = std::move(input);
  c.grad_output = std::move(grad_output);
  return c;
}

Tensor random_tensor(const Shape& s, std::mt19937_64& rng) {
  Tensor t(s);
  std::uniform_real_distribution<double> u(-2, 2);
  for (double& v : t.data) v = u(rng);
  return t;
}

// Adds a grad_output of the case's output shape.
Case with_grad(Case c, std::mt19937_64& rng) {
  c.grad_output = random_tensor(validate_case(c), rng);
  return c;
}

const std::vector<std::string>& modes_of_rank(int nd) {
  static const std::map<int, std::vector<std::string>> m = {
      {1, {"nearest", "nearest-exact", "area", "linear"}},
      {2, {"nearest", "nearest-exact", "area", "bilinear", "bicubic"}},
      {3, {"nearest", "nearest-exact", "area", "trilinear"}}};
  return m.at(nd);
}

bool interpolating(const std::string& mode) {
  return mode == "linear" || mode == "bilinear" || mode == "bicubic" || mode == "trilinear";
}

class HalideInterpolate : public ::testing::TestWithParam<std::string> {};

// ---------------------------------------------------------------- corpora

TEST_P(HalideInterpolate, FuzzCorpusWithinBound) {
  Backend* b = halide(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " cannot run here";
  Tally t;
  for (const Case& c : fuzz::sample_cases("interpolate", kCorpusCases, kSeed)) {
    ASSERT_TRUE(c.grad_output.has_value());
    t.add(c, compare::compare_float_backend(ref(), *b, c), GetParam());
  }
  t.print(GetParam() + " fuzz corpus (" + std::to_string(kCorpusCases) + " cases, forward+backward)");
  EXPECT_EQ(t.count["agree"] + t.count["boundary-flip"], kCorpusCases);
}

// Every mode and rank on sizes past the vector width (16 floats), up- and downsampling, size
// and scale_factor (recompute on and off), both align_corners: the vector bodies, their
// guarded tails, and reaches and area bins of every length.
TEST_P(HalideInterpolate, LargerShapesWithinBound) {
  Backend* b = halide(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " cannot run here";
  std::mt19937_64 rng(kSeed);
  std::uniform_int_distribution<int> in2(1, 40), in3(1, 12), coin(0, 1), planes(1, 3);
  const std::vector<double> factors{0.3, 0.5, 0.75, 1.0, 1.1, 1.7, 2.0, 2.1, 3.0, 3.7};
  Tally t;
  int cases = 0;
  for (int nd = 1; nd <= 3; ++nd)
    for (const std::string& mode : modes_of_rank(nd))
      for (int rep = 0; rep < 6; ++rep) {
        Shape shape{planes(rng), planes(rng)};
        for (int a = 0; a < nd; ++a) shape.push_back(nd == 3 ? in3(rng) : in2(rng) + (nd == 1 ? 20 : 0));
        json params{{"mode", mode}};
        if (interpolating(mode)) params["align_corners"] = bool(coin(rng));
        if (rep % 2 == 0) {
          json size = json::array();
          for (int a = 0; a < nd; ++a) size.push_back(1 + int(std::uniform_int_distribution<int>(0, 3 * int(shape[size_t(2 + a)]))(rng)));
          params["size"] = size;
        } else {
          json sf = json::array();
          for (int a = 0; a < nd; ++a) {
            double f = factors[size_t(rng() % factors.size())];
            if (std::floor(double(shape[size_t(2 + a)]) * f) < 1) f = 1.0;
            sf.push_back(f);
          }
          params["scale_factor"] = sf;
          params["recompute_scale_factor"] = bool(coin(rng));
        }
        Case c = with_grad(make_case(params, random_tensor(shape, rng)), rng);
        t.add(c, compare::compare_float_backend(ref(), *b, c), GetParam());
        ++cases;
      }
  t.print(GetParam() + " larger shapes (" + std::to_string(cases) + " cases, forward+backward)");
}

// Inf and NaN in the input and in grad_output: NaN/Inf positions must match the reference
// exactly (a zero-weight tap times inf is NaN; a tap outside an area bin is not read). The
// output sizes take every x path of the CPU kernels: tables, exact 2x upsampling (24 from
// 12), 2:1 and 4:1 area (6 and 3 from 12).
TEST_P(HalideInterpolate, NonFiniteValuesFlowAsInTheReference) {
  Backend* b = halide(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " cannot run here";
  std::mt19937_64 rng(3);
  Tally t;
  for (int nd = 1; nd <= 3; ++nd)
    for (const std::string& mode : modes_of_rank(nd))
      for (const json& ac : {json(nullptr), json(true)})
        for (int out : {20, 24, 6, 3}) {
          if (!ac.is_null() && !interpolating(mode)) continue;
          const int in = nd == 3 ? 6 : 12;
          Shape shape{1, 2};
          json size = json::array();
          for (int a = 0; a < nd; ++a) {
            shape.push_back(in);
            size.push_back(nd == 3 ? out / 2 : out);
          }
          json params{{"mode", mode}, {"size", size}};
          if (!ac.is_null()) params["align_corners"] = ac;
          Tensor x = random_tensor(shape, rng);
          x.data[0] = kInf;  // the left border, where linear's clamped source has a zero-weight tap
          x.data[3] = kInf;
          x.data[x.data.size() / 2] = -kInf;
          x.data[x.data.size() - 2] = kNaN;
          Case c = with_grad(make_case(params, x), rng);
          c.grad_output->data[0] = -kInf;
          c.grad_output->data[1] = kInf;
          c.grad_output->data[c.grad_output->data.size() - 1] = -kInf;
          c.grad_output->data[c.grad_output->data.size() / 3] = kNaN;
          t.add(c, compare::compare_float_backend(ref(), *b, c), GetParam());
        }
  t.print(GetParam() + " non-finite values");
  EXPECT_EQ(t.count["boundary-flip"], 0);
}

// The closed-form x paths of the CPU kernels (exact 2x upsampling; 2:1 and 4:1 area) on
// rows long enough for their steady state (dense and strided loads) and with tails, in
// every rank, forward and backward, as scale_factor and as size.
TEST_P(HalideInterpolate, ClosedFormPathsWithinBound) {
  Backend* b = halide(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " cannot run here";
  std::mt19937_64 rng(17);
  Tally t;
  for (int nd = 1; nd <= 3; ++nd)
    for (const std::string& mode : modes_of_rank(nd))
      for (int W : {37, 64, 100})
        for (double f : {2.0, 0.5, 0.25}) {
          if ((mode == "area") != (f < 1)) continue;
          const int Wi = f == 0.25 ? 4 * W : f == 0.5 ? 2 * W : W;  // the area paths need in = r * out
          Shape shape{1, 3};
          for (int a = 0; a + 1 < nd; ++a) shape.push_back(nd == 3 ? 4 : 5);
          shape.push_back(Wi);
          json params{{"mode", mode}};
          if (interpolating(mode)) params["align_corners"] = false;
          if (W % 2) {
            params["scale_factor"] = f;
          } else {
            json size = json::array();
            for (size_t a = 2; a < shape.size(); ++a) size.push_back(int64_t(double(shape[a]) * f));
            params["size"] = size;
          }
          Case c = with_grad(make_case(params, random_tensor(shape, rng)), rng);
          t.add(c, compare::compare_float_backend(ref(), *b, c), GetParam());
        }
  t.print(GetParam() + " closed-form x paths");
}

// The 2x x path of cubic reads each row from a copy padded with its clamped ends
// (generators/interpolate_axis.h, InterpClosedForm::raw), linear's through clamped indices. A
// non-finite value at each position near either end of a row, one plane per position, must
// reach exactly the outputs it reaches in the reference: cubic's border taps repeat the end
// values, and linear's output 0 reads input 1 at weight 0 (inf there makes it NaN).
TEST_P(HalideInterpolate, NonFiniteAtTheRowEndsOf2xUpsampling) {
  Backend* b = halide(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " cannot run here";
  std::mt19937_64 rng(29);
  Tally t;
  for (const std::string mode : {"linear", "bilinear", "bicubic"})
    for (int W : {1, 2, 3, 12, 37})
      for (double bad : {kInf, -kInf, kNaN}) {
        std::set<int> at;
        for (int p : {0, 1, 2, W - 3, W - 2, W - 1})
          if (p >= 0 && p < W) at.insert(p);
        const bool two_d = mode != "linear";
        const int64_t planes = int64_t(at.size()), rows = two_d ? 3 : 1;
        Tensor x = random_tensor(two_d ? Shape{1, planes, rows, W} : Shape{1, planes, W}, rng);
        int64_t plane = 0;
        for (int p : at) x.data[size_t((plane++ * rows + rows / 2) * W + p)] = bad;
        Case c = make_case(json{{"mode", mode}, {"scale_factor", 2.0}, {"align_corners", false}}, x);
        t.add(c, compare::compare_float_backend(ref(), *b, c), GetParam() + " " + mode + " W=" + std::to_string(W));
      }
  t.print(GetParam() + " non-finite values at the row ends of 2x upsampling");
}

// Exact 2x upsampling with align_corners=false has a scale of exactly 1/2, so its linear and
// cubic weights are constants (linear: src = d/2 - 1/4, weights 1/4 and 3/4; output 0 clamps
// to weights 1 and 0): the glue gives the CPU forward the fixed-weight x path and keeps the
// plain x2 path along y and z. Checked: the path each case takes; every output within the
// bound of the reference, on widths whose vectors have tails, one-element rows and several
// planes; and for 1-D linear every output exactly, against the formula written out here in
// float32 (the kernels' order of operations: tap 0's product plus tap 1's):
//   out[0] = 1 a[0] + 0 a[1],  out[2i] = 1/4 a[i-1] + 3/4 a[i],  out[2i+1] = 3/4 a[i] + 1/4 a[i+1]
// with a[W] read as a[W-1] (and a[1] as a[0] when W = 1).
TEST_P(HalideInterpolate, TwoXUpsamplingTakesTheFixedWeightPath) {
  using namespace oplab_interp;
  Backend* b = halide(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " cannot run here";
  std::mt19937_64 rng(41);
  Tally t;
  for (const std::string mode : {"linear", "bilinear", "bicubic", "trilinear"})
    for (int W : {1, 2, 3, 16, 17, 33, 47}) {
      const int nd = mode == "linear" ? 1 : mode == "trilinear" ? 3 : 2;
      Shape shape{2, 3};
      for (int a = 0; a + 1 < nd; ++a) shape.push_back(a == 0 && nd == 3 ? 3 : 5);
      shape.push_back(W);
      Case c = with_grad(make_case(json{{"mode", mode}, {"scale_factor", 2.0}, {"align_corners", false}},
                                   random_tensor(shape, rng)),
                         rng);
      const std::array<int, 3> paths = halide_glue::interpolate_forward_paths(parse_interpolate(c));
      EXPECT_EQ(paths[0], kXUpsample2Half) << mode << " W=" << W;
      for (int a = 1; a < nd; ++a) EXPECT_EQ(paths[size_t(a)], kXUpsample2) << mode << " W=" << W << " axis " << a;
      t.add(c, compare::compare_float_backend(ref(), *b, c), GetParam() + " " + mode + " W=" + std::to_string(W));
      if (mode != "linear") continue;
      const Result r = evaluate(*b, c);
      const std::vector<double>& out = r.outputs.at("output").data;
      const std::vector<double>& in = c.in("input").data;
      for (size_t plane = 0; plane < 6; ++plane) {
        auto a = [&](int i) { return float(in[plane * size_t(W) + size_t(std::min(i, W - 1))]); };
        for (int d = 0; d < 2 * W; ++d) {
          const int i = d / 2;
          const float w0 = d == 0 ? 1.0f : d % 2 == 0 ? 0.25f : 0.75f, w1 = 1.0f - w0;
          const float x0 = d == 0 ? a(0) : d % 2 == 0 ? a(i - 1) : a(i), x1 = d == 0 ? a(1) : d % 2 == 0 ? a(i) : a(i + 1);
          const float want = w0 * x0 + w1 * x1;
          const double got = out[plane * size_t(2 * W) + size_t(d)];
          // Halide's PTX code generator fuses a multiply and an add into an FMA whatever the
          // kernel asks (its LLVM target options: fast FP-op fusion), so on CUDA either
          // product may be the unrounded one; nothing else is forgiven.
          const bool fused = GetParam() == "halide-cuda" &&
                             (got == double(std::fma(w0, x0, w1 * x1)) || got == double(std::fma(w1, x1, w0 * x0)));
          ASSERT_TRUE(got == double(want) || fused)
              << got << " vs " << want << " W=" << W << " plane " << plane << " d=" << d;
        }
      }
    }
  t.print(GetParam() + " x2 upsampling, fixed-weight x path");
  // align_corners=true, a scale factor whose reciprocal is not 1/2, and nearest keep their
  // paths (the weights of the first two are not the constants).
  const json others[] = {{{"mode", "bilinear"}, {"scale_factor", 2.0}, {"align_corners", true}},
                         {{"mode", "bilinear"}, {"scale_factor", 2.0000001}, {"align_corners", false}},
                         {{"mode", "bicubic"}, {"scale_factor", 2.0000001}, {"align_corners", false}},
                         {{"mode", "nearest"}, {"scale_factor", 2.0}}};
  for (const json& params : others) {
    const Case c = make_case(params, random_tensor({1, 2, 16, 40}, rng));
    const InterpParams p = parse_interpolate(c);
    ASSERT_EQ(p.axes.back().out, 80) << params.dump();
    EXPECT_NE(halide_glue::interpolate_forward_paths(p)[0], kXUpsample2Half) << params.dump();
  }
}

// Area's r:1 paths along y (2:1 and 4:1, where the y pass sums a constant r rows): chosen by
// the glue for y and checked against the reference in 2-D and 3-D, with several planes,
// x on the tables or on its own r:1 path.
TEST_P(HalideInterpolate, AreaPathsAlongYWithinBound) {
  using namespace oplab_interp;
  Backend* b = halide(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " cannot run here";
  std::mt19937_64 rng(43);
  Tally t;
  for (int nd : {2, 3})
    for (int r : {2, 4})
      for (int Ho : {1, 3, 9})
        for (int Wi : {37, 4 * 19}) {
          Shape shape{2, 3};
          if (nd == 3) shape.push_back(3);
          shape.push_back(r * Ho);
          shape.push_back(Wi);
          json size = json::array();
          if (nd == 3) size.push_back(2);
          size.push_back(Ho);
          size.push_back(Wi == 37 ? 37 : Wi / r);
          Case c = with_grad(make_case(json{{"mode", "area"}, {"size", size}}, random_tensor(shape, rng)), rng);
          const std::array<int, 3> paths = halide_glue::interpolate_forward_paths(parse_interpolate(c));
          const std::string what = GetParam() + " area " + shape_str(shape) + " -> " + size.dump();
          EXPECT_EQ(paths[1], r == 2 ? kXPool2 : kXPool4) << what;
          EXPECT_EQ(paths[0], Wi == 37 ? kXTables : r == 2 ? kXPool2 : kXPool4) << what;
          t.add(c, compare::compare_float_backend(ref(), *b, c), what);
        }
  t.print(GetParam() + " area r:1 paths along y");
}

// ---------------------------------------------------------------- hand cases

Tensor tensor(Shape s, std::vector<double> data) {
  Tensor t(std::move(s));
  t.data = std::move(data);
  return t;
}

Tensor iota(Shape s) {
  Tensor t(std::move(s));
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = double(i);
  return t;
}

TEST_P(HalideInterpolate, Bilinear2x2To1x1IsTheMean) {
  Backend* b = halide(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " cannot run here";
  // scale 2, src = 0.5 on both axes: the four corners at weight 1/4 each (SPEC §8).
  const Case c = make_case({{"mode", "bilinear"}, {"size", {1, 1}}, {"align_corners", false}},
                           tensor({1, 1, 2, 2}, {1, 2, 3, 4}), tensor({1, 1, 1, 1}, {8}));
  const Result r = evaluate(*b, c);
  EXPECT_EQ(r.outputs.at("output").data, std::vector<double>{2.5});
  EXPECT_EQ(r.grads.at("input").data, (std::vector<double>{2, 2, 2, 2}));
}

// align_corners with out == in: scale (in-1)/(out-1) = 1, every source lands on its own
// index with weight 1 and its neighbours with weight exactly 0: the identity, bit for bit,
// forward and backward.
TEST_P(HalideInterpolate, AlignCornersSameSizeIsTheIdentity) {
  Backend* b = halide(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " cannot run here";
  std::mt19937_64 rng(5);
  const std::vector<std::pair<std::string, Shape>> cases{{"linear", {2, 3, 37}},
                                                         {"bilinear", {2, 2, 19, 33}},
                                                         {"bicubic", {1, 3, 17, 21}},
                                                         {"trilinear", {1, 2, 5, 6, 18}}};
  for (const auto& [mode, shape] : cases) {
    SCOPED_TRACE(mode);
    json size = json::array();
    for (size_t a = 2; a < shape.size(); ++a) size.push_back(shape[a]);
    // Values exact in float32, so that the identity is exact in both precisions.
    Tensor in = random_tensor(shape, rng), go = random_tensor(shape, rng);
    for (double& v : in.data) v = double(float(v));
    for (double& v : go.data) v = double(float(v));
    const Result r = evaluate(*b, make_case({{"mode", mode}, {"size", size}, {"align_corners", true}}, in, go));
    EXPECT_EQ(r.outputs.at("output").data, in.data);
    EXPECT_EQ(r.grads.at("input").data, go.data);
  }
}

// Nearest reads the index of a float32 scale and product (SPEC §6; docs/semantics.md): cases
// where double would read another index.
TEST_P(HalideInterpolate, NearestIndexIsComputedInFloat32) {
  Backend* b = halide(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " cannot run here";
  auto read = [&](json params, int64_t in, int64_t dst) {
    const Result r = evaluate(*b, make_case(std::move(params), iota({1, 1, in})));
    return r.outputs.at("output").data.at(size_t(dst));
  };
  EXPECT_EQ(read({{"mode", "nearest"}, {"size", 46}}, 14, 23), 6.0);           // double: 7
  EXPECT_EQ(read({{"mode", "nearest"}, {"scale_factor", 3.7}}, 11, 37), 10.0);  // double: 9
  EXPECT_EQ(read({{"mode", "nearest"}, {"size", 34}}, 6, 17), 3.0);
  EXPECT_EQ(read({{"mode", "nearest-exact"}, {"size", 1}}, 2, 0), 1.0);
  // in = 5, sf = 2.1: floor(dst / 2.1), not PyTorch's 2-D dst >> 1 shortcut.
  const Result r = evaluate(*b, make_case({{"mode", "nearest"}, {"scale_factor", {1.0, 2.1}}}, iota({1, 1, 1, 5})));
  EXPECT_EQ(r.outputs.at("output").data, (std::vector<double>{0, 0, 0, 1, 1, 2, 2, 3, 3, 4}));
}

// area 5 -> 3 averages the overlapping integer bins [0,2), [1,4), [3,5) (SPEC §8); the
// backward spreads each output's gradient evenly over its bin.
TEST_P(HalideInterpolate, AreaBinsOverlap) {
  Backend* b = halide(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " cannot run here";
  const Result r = evaluate(*b, make_case({{"mode", "area"}, {"size", 3}}, tensor({1, 1, 5}, {1, 2, 3, 4, 5}),
                                          tensor({1, 1, 3}, {2, 3, 4})));
  EXPECT_EQ(r.outputs.at("output").data, (std::vector<double>{1.5, 3, 4.5}));
  EXPECT_EQ(r.grads.at("input").data, (std::vector<double>{1, 2, 1, 3, 2}));
}

// N = 0 and C = 0 are valid: empty output and gradient of the right shapes.
TEST_P(HalideInterpolate, EmptyBatch) {
  Backend* b = halide(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " cannot run here";
  for (const Shape& s : {Shape{0, 3, 4, 5}, Shape{2, 0, 4, 5}}) {
    const Case c = make_case({{"mode", "bilinear"}, {"scale_factor", 2.0}}, Tensor(s), Tensor(Shape{s[0], s[1], 8, 10}));
    const Result r = evaluate(*b, c);
    EXPECT_EQ(r.outputs.at("output").shape, (Shape{s[0], s[1], 8, 10}));
    EXPECT_EQ(r.grads.at("input").shape, s);
  }
}

// Forward and backward are transposes: <J x, y> == <x, J^T y> to float accuracy, on a case
// large enough for every vector path, for every kernel.
TEST_P(HalideInterpolate, BackwardIsTheTransposeOfTheForward) {
  Backend* b = halide(GetParam());
  if (!b) GTEST_SKIP() << GetParam() << " cannot run here";
  std::mt19937_64 rng(9);
  for (int nd = 1; nd <= 3; ++nd)
    for (const std::string& mode : modes_of_rank(nd)) {
      SCOPED_TRACE(mode + " " + std::to_string(nd) + "-D");
      Shape shape{2, 2};
      json size = json::array();
      for (int a = 0; a < nd; ++a) {
        shape.push_back(nd == 3 ? 9 : 23);
        size.push_back(nd == 3 ? 14 : 50 - 30 * a);
      }
      Case c = with_grad(make_case({{"mode", mode}, {"size", size}}, random_tensor(shape, rng)), rng);
      const Result r = evaluate(*b, c);
      double lhs = 0, rhs = 0, mag = 0;
      const auto& y = r.outputs.at("output").data;
      for (size_t i = 0; i < y.size(); ++i) lhs += y[i] * c.grad_output->data[i], mag += std::fabs(y[i] * c.grad_output->data[i]);
      const auto& g = r.grads.at("input").data;
      for (size_t i = 0; i < g.size(); ++i) rhs += c.in("input").data[i] * g[i];
      EXPECT_NEAR(lhs, rhs, 1e-5 * mag);
    }
}

// ---------------------------------------------------------------- the kernels' own checks

// The CPU kernels take the glue's closed-form path per axis (x, and y for linear and cubic)
// on trust for speed, so each must reject a path that does not fit rather than compute a
// wrong result. These call the kernels themselves, as the glue does, with wrong paths of two
// sorts: sizes the path cannot serve (2x upsampling, path 1, on 16 -> 24; 4:1 area, path 3,
// on 24 -> 8), and the right sizes with taps that differ (16 -> 32 with a scale of 0.4
// instead of 0.5; area 2:1 and 4:1 told a longer bin than r). Expected: a non-zero status
// and an error naming the path; the right path on the matching sizes runs (the control).
using KernelFn = int (*)(const void*, halide_buffer_t*, double, double, double, bool, bool, int, int, int, int, int,
                         int, int, int, int, halide_buffer_t*);

struct KernelCall {
  const char* what;
  KernelFn fn;
  int in_x, out_x, in_y, out_y;
  int x_path, y_path;
  double scale_x, scale_y;  // the kernel scale of SPEC §6 (linear/cubic: in/out; nearest: its float32 scale)
  int bound_x, bound_y;     // forward: the longest area bin; backward: the reach
};

// Runs one call on a 2-plane input of 1.5 everywhere; returns the status and fills `error`
// and `out`.
int call_kernel(const KernelCall& k, std::string& error, std::vector<float>& out) {
  TensorF install({1});  // halide_glue::view installs the error handler that fills CallContext
  (void)halide_glue::view(install);
  std::vector<float> in(size_t(k.in_x * k.in_y * 2), 1.5f);
  out.assign(size_t(k.out_x * k.out_y * 2), 0.0f);
  Halide::Runtime::Buffer<float> in_b(in.data(), {k.in_x, k.in_y, 1, 2}), out_b(out.data(), {k.out_x, k.out_y, 1, 2});
  halide_glue::CallContext ctx;
  const int status = k.fn(&ctx, in_b, k.scale_x, k.scale_y, 1.0, false, false, k.bound_x, k.bound_y, 1, k.x_path,
                          k.y_path, oplab_interp::kXTables, k.out_x, k.out_y, 1, out_b);
  error = ctx.error;
  return status;
}

TEST(HalideInterpolateKernel, RejectsAClosedFormPathThatDoesNotFit) {
  using namespace oplab_interp;
  const double up = 16.0 / 24.0;  // in / out of a 16 -> 24 axis
  const double off = 0.4;         // a 16 -> 32 axis whose taps are not the 2x ones
  const KernelCall wrong[] = {
      // sizes the path does not fit
      {"nearest 2-D x2 path on 16 -> 24", interp_nearest2_fwd_cpu, 16, 24, 8, 8, kXUpsample2, kXTables, double(float(up)), 1, 1, 1},
      {"bilinear x2 path on 16 -> 24", interp_linear2_fwd_cpu, 16, 24, 8, 8, kXUpsample2, kXTables, up, 1, 1, 1},
      {"bilinear y x2 path on 16 -> 24", interp_linear2_fwd_cpu, 8, 8, 16, 24, kXTables, kXUpsample2, 1, up, 1, 1},
      {"area 4:1 path on 24 -> 8", interp_area2_fwd_cpu, 24, 8, 8, 8, kXPool4, kXTables, 3, 1, 3, 1},
      // the sizes fit, the taps do not
      {"nearest 1-D x2 path, scale 0.4", interp_nearest1_fwd_cpu, 16, 32, 1, 1, kXUpsample2, kXTables, double(float(off)), 1, 1, 1},
      {"nearest 2-D x2 path, scale 0.4", interp_nearest2_fwd_cpu, 16, 32, 8, 8, kXUpsample2, kXTables, double(float(off)), 1, 1, 1},
      {"bilinear x2 path, scale 0.4", interp_linear2_fwd_cpu, 16, 32, 8, 8, kXUpsample2, kXTables, off, 1, 1, 1},
      {"bilinear x2 paths on both axes, x scale 0.4", interp_linear2_fwd_cpu, 16, 32, 16, 32, kXUpsample2, kXUpsample2, off, 0.5, 1, 1},
      {"bilinear y x2 path, scale 0.4", interp_linear2_fwd_cpu, 8, 8, 16, 32, kXTables, kXUpsample2, 1, off, 1, 1},
      {"bicubic x2 path, scale 0.4", interp_cubic2_fwd_cpu, 16, 32, 8, 8, kXUpsample2, kXTables, off, 1, 1, 1},
      {"bicubic x2 paths on both axes, y scale 0.4", interp_cubic2_fwd_cpu, 16, 32, 16, 32, kXUpsample2, kXUpsample2, 0.5, off, 1, 1},
      {"area 2:1 path told bins of 3", interp_area2_fwd_cpu, 32, 16, 8, 8, kXPool2, kXTables, 2, 1, 3, 1},
      {"area 4:1 path told bins of 5", interp_area2_fwd_cpu, 32, 8, 8, 8, kXPool4, kXTables, 4, 1, 5, 1},
      // the fixed-weight x2 path: sizes, taps, and the taps right with weights that are not the
      // constants (a scale of 0.500001 floors like 1/2 at every position of a 32-wide axis)
      {"bilinear fixed-weight x2 path on 16 -> 24", interp_linear2_fwd_cpu, 16, 24, 8, 8, kXUpsample2Half, kXTables, up, 1, 1, 1},
      {"bilinear fixed-weight x2 path, scale 0.4", interp_linear2_fwd_cpu, 16, 32, 8, 8, kXUpsample2Half, kXTables, off, 1, 1, 1},
      {"bilinear fixed-weight x2 path, scale 0.500001", interp_linear2_fwd_cpu, 16, 32, 8, 8, kXUpsample2Half, kXTables, 0.500001, 1, 1, 1},
      {"bicubic fixed-weight x2 path, scale 0.500001", interp_cubic2_fwd_cpu, 16, 32, 8, 8, kXUpsample2Half, kXTables, 0.500001, 1, 1, 1},
      {"bicubic fixed-weight x2 path on 16 -> 24", interp_cubic2_fwd_cpu, 16, 24, 8, 8, kXUpsample2Half, kXTables, up, 1, 1, 1},
      // area along y (the forward's y pass takes the bin length r from the path)
      {"area y 4:1 path on 24 -> 8", interp_area2_fwd_cpu, 8, 8, 24, 8, kXTables, kXPool4, 1, 3, 1, 3},
      {"area y 2:1 path told bins of 3", interp_area2_fwd_cpu, 8, 8, 32, 16, kXTables, kXPool2, 1, 2, 1, 3},
      // backward: grad_output (32 wide) -> grad_input (16 wide), a reach of 5, the x2 path's
      {"bilinear backward x2 path, scale 0.4", interp_linear2_bwd_cpu, 32, 16, 8, 8, kXUpsample2, kXTables, off, 1, 5, 2},
      // the one-pass nearest backward (2x on both axes; grad_output -> grad_input): a path
      // other than 2x on either axis, sizes it does not fit, taps that differ on either axis
      {"nearest one-pass backward, x on the tables", interp_nearest2x2_bwd_cpu, 32, 16, 32, 16, kXTables, kXUpsample2, 0.5, 0.5, 2, 2},
      {"nearest one-pass backward, y on the tables", interp_nearest2x2_bwd_cpu, 32, 16, 32, 16, kXUpsample2, kXTables, 0.5, 0.5, 2, 2},
      {"nearest one-pass backward on 24 -> 16", interp_nearest2x2_bwd_cpu, 24, 16, 32, 16, kXUpsample2, kXUpsample2, double(float(up)), 0.5, 2, 2},
      {"nearest one-pass backward, x scale 0.4", interp_nearest2x2_bwd_cpu, 32, 16, 32, 16, kXUpsample2, kXUpsample2, double(float(off)), 0.5, 2, 2},
      {"nearest one-pass backward, y scale 0.4", interp_nearest2x2_bwd_cpu, 32, 16, 32, 16, kXUpsample2, kXUpsample2, 0.5, double(float(off)), 2, 2},
  };
  for (const KernelCall& k : wrong) {
    std::string error;
    std::vector<float> out;
    EXPECT_NE(call_kernel(k, error, out), 0) << k.what << ": ran with a path that does not fit";
    std::cout << "[interp] " << k.what << ": " << error << "\n";
    EXPECT_TRUE(error.find("x_path") != std::string::npos || error.find("y_path") != std::string::npos)
        << k.what << ": " << error;
  }
  const KernelCall right[] = {
      {"nearest 1-D x2 path on 16 -> 32", interp_nearest1_fwd_cpu, 16, 32, 1, 1, kXUpsample2, kXTables, 0.5, 1, 1, 1},
      {"bilinear x2 paths on 16 -> 32", interp_linear2_fwd_cpu, 16, 32, 16, 32, kXUpsample2, kXUpsample2, 0.5, 0.5, 1, 1},
      {"bicubic x2 paths on 16 -> 32", interp_cubic2_fwd_cpu, 16, 32, 16, 32, kXUpsample2, kXUpsample2, 0.5, 0.5, 1, 1},
      {"bilinear fixed-weight x2 path on 16 -> 32", interp_linear2_fwd_cpu, 16, 32, 16, 32, kXUpsample2Half, kXUpsample2, 0.5, 0.5, 1, 1},
      {"bicubic fixed-weight x2 path on 16 -> 32", interp_cubic2_fwd_cpu, 16, 32, 16, 32, kXUpsample2Half, kXUpsample2, 0.5, 0.5, 1, 1},
      {"area 2:1 path on 32 -> 16", interp_area2_fwd_cpu, 32, 16, 8, 8, kXPool2, kXTables, 2, 1, 2, 1},
      {"bilinear backward x2 path on 16 -> 32", interp_linear2_bwd_cpu, 32, 16, 8, 8, kXUpsample2, kXTables, 0.5, 1, 5, 2},
      {"nearest one-pass backward on 16 -> 32 both ways", interp_nearest2x2_bwd_cpu, 32, 16, 32, 16, kXUpsample2, kXUpsample2, 0.5, 0.5, 2, 2},
      {"area 4:1 path on 32 -> 8", interp_area2_fwd_cpu, 32, 8, 8, 8, kXPool4, kXTables, 4, 1, 4, 1},
      {"area 4:1 and 2:1 paths on 32 -> 8, 16 -> 8", interp_area2_fwd_cpu, 32, 8, 16, 8, kXPool4, kXPool2, 4, 2, 4, 2},
  };
  for (const KernelCall& k : right) {
    std::string error;
    std::vector<float> out;
    EXPECT_EQ(call_kernel(k, error, out), 0) << k.what << ": " << error;
    // Every forward mode maps a constant to itself (its weights sum to one), up to the
    // rounding of those weights in float32.
    if (k.fn == interp_linear2_bwd_cpu) continue;
    // The nearest 2x backward sums each input's four readers: 4 x 1.5, exactly.
    if (k.fn == interp_nearest2x2_bwd_cpu) {
      for (float v : out) ASSERT_EQ(v, 6.0f) << k.what;
      continue;
    }
    for (float v : out) ASSERT_NEAR(v, 1.5f, 1e-6f) << k.what;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, HalideInterpolate, ::testing::Values("halide-cpu", "halide-cuda", "halide-opencl"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& ch : s)
                             if (ch == '-') ch = '_';
                           return s;
                         });

}  // namespace
}  // namespace oplab
