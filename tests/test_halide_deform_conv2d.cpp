// The Halide deform_conv2d kernels (halide-cpu; halide-opencl, the GPU schedules, where an
// OpenCL device is; halide-cuda where a GPU is present) against
// the double reference: the fixed-seed edge-aimed corpus by the per-element error bound of
// SPEC §9 (compare/float_compare.h), and hand cases: zero offsets are a plain convolution,
// sizes that cross the kernels' vector widths and chunking, non-finite offsets and feature
// maps, the sampling cut-offs, and zero-element tensors (which never reach a kernel).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <unistd.h>
#include <sstream>

#include "cli/builtin_backends.h"
#include "core/case_io.h"
#include "core/params.h"
#include "compare/float_compare.h"
#include "fuzz/generators.h"
#include "halide/halide_backend.h"
#include "tests/halide_backends.h"

namespace oplab {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Backend& ref() { return *builtin_backends().find("ref"); }
Backend& halide(const char* name) { return *builtin_backends().find(name); }

struct Geometry {
  int64_t N = 1, C = 1, H = 4, W = 4, Co = 1, kh = 3, kw = 3, G = 1, D = 1;
  int64_t sh = 1, sw = 1, ph = 1, pw = 1, dh = 1, dw = 1;
  bool mask = true, bias = true, grad = true;
};

int64_t out_len(int64_t in, int64_t p, int64_t d, int64_t k, int64_t s) { return (in + 2 * p - (d * (k - 1) + 1)) / s + 1; }

// A case with random data: values in [-1, 1], offsets in [-off, off], mask in [0, 1].
Case random_case(const Geometry& g, double off, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1), o(-off, off), m(0, 1);
  const int64_t Ho = out_len(g.H, g.ph, g.dh, g.kh, g.sh), Wo = out_len(g.W, g.pw, g.dw, g.kw, g.sw);
  const int64_t K = g.kh * g.kw;
  auto fill = [&](Shape s, auto& dist) {
    Tensor t(std::move(s));
    for (double& v : t.data) v = dist(rng);
    return t;
  };
  Case c;
  c.op = "deform_conv2d";
  c.params = json{{"stride", {g.sh, g.sw}}, {"padding", {g.ph, g.pw}}, {"dilation", {g.dh, g.dw}}};
  c.inputs["input"] = fill({g.N, g.C, g.H, g.W}, u);
  c.inputs["offset"] = fill({g.N, 2 * g.D * K, Ho, Wo}, o);
  c.inputs["weight"] = fill({g.Co, g.C / g.G, g.kh, g.kw}, u);
  if (g.mask) c.inputs["mask"] = fill({g.N, g.D * K, Ho, Wo}, m);
  if (g.bias) c.inputs["bias"] = fill({g.Co}, u);
  if (g.grad) c.grad_output = fill({g.N, g.Co, Ho, Wo}, u);
  return c;
}

// A backend whose grad_offset is replaced by given values (checked separately).
class OffsetGradReplaced : public Backend {
 public:
  OffsetGradReplaced(Backend& b, Tensor g) : b_(b), g_(std::move(g)) {}
  std::string name() const override { return b_.name(); }
  std::string description() const override { return b_.description(); }
  Result run(const Case& c, const ValidParams& vp) override {
    Result r = b_.run(c);
    if (r.grads.count("offset")) r.grads["offset"] = g_;
    return r;
  }

 private:
  Backend& b_;
  Tensor g_;
};

struct Verdict {
  std::string kind;  // agree, boundary-flip, coordinate-flip, offset-by-|ref|, DISAGREE, ERROR
  std::string detail;
  double worst_ratio = 0;
  bool ok() const { return kind != "DISAGREE" && kind != "ERROR" && kind != "unsupported"; }
};

// Agreement with the reference by compare::compare_float_backend (SPEC §9), with two steps for
// what that comparison cannot tell apart yet:
//  1. The kernels round the sample coordinate float(base) + float(offset): 1 + (-1e-9) becomes
//     1.0f, a whole corner away from the reference's floor. Failing cases are compared again
//     with the reference evaluated on the case as float32 sees it (compare::float_rounded_case;
//     "coordinate-flip": a floor taken the other way).
//  2. Its bound for grad_offset comes from the reference on |data|, where dB is a difference of
//     |pixels| and can be far below the rounding of the value itself. grad_offset alone is then
//     held to the same kappa times |ref| (+ 1e-3 max|ref|): |ref| <= Σ|terms|, so this is never
//     looser than SPEC §9's bound; every other tensor still goes through the comparison.
Verdict agree(Backend& b, const Case& c) {
  auto name = [](const compare::FloatOutcome& o) { return std::string(compare::verdict_name(o.verdict)); };
  const compare::FloatOutcome o = compare::compare_float_backend(ref(), b, c);
  if (o.verdict != compare::Verdict::Disagree) return {name(o), o.detail, o.worst_ratio};
  const Case fc = compare::float_rounded_case(c);
  const compare::FloatOutcome o2 = compare::compare_float_backend(ref(), b, fc);
  if (o2.verdict == compare::Verdict::Agree || o2.verdict == compare::Verdict::BoundaryFlip)
    return {"coordinate-flip", o.detail, o2.worst_ratio};
  if (o2.verdict != compare::Verdict::Disagree || o2.detail.rfind("grads.offset", 0) != 0)
    return {name(o2), o.detail + " | at float32 coordinates: " + o2.detail, 0};

  const DeformConvParams p = parse_deform_conv2d(fc);
  const Result want = evaluate(ref(), fc), got = evaluate(b, fc);
  const Tensor& r = want.grads.at("offset");
  const Tensor& e = got.grads.at("offset");
  double coord = double(std::max({p.H, p.W, int64_t(1)}));
  for (double v : fc.in("offset").data)
    if (std::isfinite(v)) coord = std::max(coord, std::fabs(v) + double(std::max(p.H, p.W)));
  // Terms of one element: the channels of an offset group, each a Gcol dot product over the
  // output channels of its weight group and a 4-corner difference.
  const double n = double(p.C / p.D) * double(p.Co / p.G + 6) + 4;
  const double kappa = std::ldexp(1.0, -24) * (n + 2 * coord);
  double rmax = 0;
  for (double v : r.data)
    if (std::isfinite(v)) rmax = std::max(rmax, std::fabs(v));
  double worst = 0;
  for (size_t i = 0; i < r.data.size(); ++i) {
    const double bound = kappa * (std::fabs(r.data[i]) + 1e-3 * rmax) + 1e-30;
    const bool same = std::isnan(r.data[i]) ? std::isnan(e.data[i]) : (!std::isfinite(r.data[i]) ? e.data[i] == r.data[i] : std::isfinite(e.data[i]));
    if (!same || (std::isfinite(r.data[i]) && std::fabs(e.data[i] - r.data[i]) > compare::kDefaultBoundMultiple * bound)) {
      std::ostringstream os;
      os.precision(9);
      os << "grads.offset[" << i << "]: " << e.data[i] << " vs ref " << r.data[i] << " (|ref| bound " << bound << ")";
      return {"DISAGREE", os.str(), 0};
    }
    if (std::isfinite(r.data[i])) worst = std::max(worst, std::fabs(e.data[i] - r.data[i]) / bound);
  }
  OffsetGradReplaced rest(b, r);
  const compare::FloatOutcome o3 = compare::compare_float_backend(ref(), rest, fc);
  if (o3.verdict == compare::Verdict::Agree || o3.verdict == compare::Verdict::BoundaryFlip)
    return {"offset-by-|ref|", o.detail, std::max(worst, o3.worst_ratio)};
  return {name(o3), o3.detail, 0};
}

// Expects the backend to agree with the reference (see agree()); returns the verdict.
Verdict expect_agrees(Backend& b, const Case& c, const std::string& what) {
  const Verdict v = agree(b, c);
  EXPECT_TRUE(v.ok()) << what << " on " << b.name() << ": " << v.kind << ": " << v.detail;
  return v;
}

// Every Halide backend that runs here: the CUDA kernels are built everywhere but run only on a
// machine with a GPU; the OpenCL ones wherever an OpenCL device is (pocl's CPU device).
std::vector<Backend*> runnable_backends() { return runnable_halide_backends("dcn"); }

TEST(HalideDeformConv2d, FuzzCorpusWithinBound) {
  const auto cases = fuzz::sample_cases("deform_conv2d", 400, 11);
  for (Backend* b : runnable_backends()) {
    std::map<std::string, int> count;
    double worst = 0;
    for (const Case& full : cases) {
      Case forward = full;
      forward.grad_output.reset();
      for (const Case* c : std::initializer_list<const Case*>{&forward, &full}) {
        const Verdict v = agree(*b, *c);
        ++count[std::string(c->grad_output ? "backward " : "forward ") + v.kind];
        worst = std::max(worst, v.worst_ratio);
        EXPECT_TRUE(v.ok()) << b->name() << ": " << v.kind << ": " << v.detail;
        if (v.kind == "coordinate-flip" || v.kind == "offset-by-|ref|") std::cout << "[dcn]   " << v.kind << ": " << v.detail << "\n";
      }
    }
    std::cout << "[dcn] " << b->name() << " on " << cases.size() << " corpus cases:";
    for (const auto& [k, n] : count) std::cout << " " << k << "=" << n;
    std::cout << "; worst error/bound = " << worst << "\n";
  }
}

// Sizes beyond the corpus's: several vectors along ox with a tail, several output channels
// per group, both kinds of groups, stride, dilation, and grad_weight's row chunks.
TEST(HalideDeformConv2d, LargerShapesWithinBound) {
  std::vector<Geometry> shapes;
  Geometry a;
  a.N = 2, a.C = 8, a.H = 13, a.W = 37, a.Co = 6, a.G = 2, a.D = 2, a.sh = 2, a.dw = 2;
  shapes.push_back(a);
  Geometry b;
  b.N = 3, b.C = 6, b.H = 9, b.W = 40, b.Co = 33, b.G = 3, b.D = 3, b.kh = 2, b.kw = 4, b.ph = 0, b.pw = 2, b.mask = false;
  shapes.push_back(b);
  Geometry c;
  c.N = 1, c.C = 16, c.H = 20, c.W = 17, c.Co = 20, c.kh = 1, c.kw = 1, c.ph = 0, c.pw = 0, c.bias = false;
  shapes.push_back(c);
  Geometry d;  // the benchmark's kernel: 3x3, padding 1, one group, Wo = 56
  d.N = 2, d.C = 8, d.H = 5, d.W = 56, d.Co = 16;
  shapes.push_back(d);
  for (Backend* be : runnable_backends())
    for (size_t i = 0; i < shapes.size(); ++i) {
      const Verdict v = expect_agrees(*be, random_case(shapes[i], 2.5, 100 + i), "shape " + std::to_string(i));
      std::cout << "[dcn] " << be->name() << " shape " << i << ": " << v.kind << ", worst error/bound = " << v.worst_ratio
                << (v.kind == "agree" ? "" : " (" + v.detail + ")") << "\n";
    }
}

// Zero offsets and no mask: the plain (grouped, strided, dilated) convolution, computed here
// independently of the reference.
TEST(HalideDeformConv2d, ZeroOffsetIsPlainConvolution) {
  Geometry g;
  g.N = 2, g.C = 6, g.H = 7, g.W = 19, g.Co = 4, g.G = 2, g.D = 3, g.sw = 2, g.dh = 2, g.ph = 2, g.mask = false, g.grad = false;
  Case c = random_case(g, 0.0, 5);
  for (double& v : c.inputs["offset"].data) v = 0.0;
  const Tensor& x = c.in("input");
  const Tensor& w = c.in("weight");
  const Tensor& bias = c.in("bias");
  const int64_t Ho = out_len(g.H, g.ph, g.dh, g.kh, g.sh), Wo = out_len(g.W, g.pw, g.dw, g.kw, g.sw);
  const int64_t Cg = g.C / g.G, Cog = g.Co / g.G;
  for (Backend* b : runnable_backends()) {
    const Result r = evaluate(*b, c);
    const Tensor& out = r.outputs.at("output");
    ASSERT_EQ(out.shape, (Shape{g.N, g.Co, Ho, Wo}));
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t o = 0; o < g.Co; ++o)
        for (int64_t oy = 0; oy < Ho; ++oy)
          for (int64_t ox = 0; ox < Wo; ++ox) {
            double want = bias.data[size_t(o)], mag = std::fabs(want);
            for (int64_t cg = 0; cg < Cg; ++cg)
              for (int64_t i = 0; i < g.kh; ++i)
                for (int64_t j = 0; j < g.kw; ++j) {
                  const int64_t y = oy * g.sh - g.ph + i * g.dh, xx = ox * g.sw - g.pw + j * g.dw;
                  if (y < 0 || y >= g.H || xx < 0 || xx >= g.W) continue;
                  const double t = w.at(o, cg, i, j) * x.at(n, (o / Cog) * Cg + cg, y, xx);
                  want += t;
                  mag += std::fabs(t);
                }
            EXPECT_NEAR(out.at(n, o, oy, ox), want, 1e-6 * mag + 1e-7) << b->name() << " at " << n << "," << o << "," << oy << "," << ox;
          }
  }
}

// NaN/Inf offsets make their sample out of range: value 0 whatever the image and the mask
// hold, and no gradient to input, offset or mask (docs/semantics.md).
TEST(HalideDeformConv2d, NonFiniteOffsetsAreOutOfRange) {
  Geometry g;
  g.N = 1, g.C = 2, g.H = 5, g.W = 6, g.Co = 3;
  Case c = random_case(g, 1.5, 9);
  Tensor& off = c.inputs["offset"];
  const std::vector<double> bad{kNaN, kInf, -kInf};
  std::vector<size_t> hit;
  for (size_t i = 0; i < off.data.size(); i += 7) {
    off.data[i] = bad[(i / 7) % bad.size()];
    hit.push_back(i);
  }
  for (Backend* b : runnable_backends()) {
    expect_agrees(*b, c, "non-finite offsets");
    const Result r = evaluate(*b, c);
    for (size_t i : hit) EXPECT_EQ(r.grads.at("offset").data[i], 0.0) << b->name() << " grad_offset[" << i << "]";
    for (double v : r.outputs.at("output").data) EXPECT_TRUE(std::isfinite(v)) << b->name();
  }
}

// NaN and Inf in the feature map flow through IEEE arithmetic exactly where the reference
// puts them (a corner read at weight 0 still gives 0 * Inf = NaN in the forward).
TEST(HalideDeformConv2d, NonFiniteFeatureMapMatchesReference) {
  Geometry g;
  g.N = 1, g.C = 2, g.H = 6, g.W = 7, g.Co = 2;
  Case c = random_case(g, 2.0, 13);
  c.inputs["input"].at(0, 0, 2, 3) = kInf;
  c.inputs["input"].at(0, 1, 0, 0) = kNaN;
  c.inputs["input"].at(0, 1, 5, 6) = -kInf;
  for (Backend* b : runnable_backends()) expect_agrees(*b, c, "non-finite feature map");
}

// Samples exactly on the cut-offs: y = -1 (value 0, grad_offset the right-sided derivative,
// the interpolation of row 0), y = -0.5 (half of row 0), y = H - 1, y = H, and the same on x.
TEST(HalideDeformConv2d, SamplesOnTheCutOffs) {
  Geometry g;
  g.N = 1, g.C = 2, g.H = 4, g.W = 5, g.Co = 2, g.kh = 1, g.kw = 1, g.ph = 0, g.pw = 0;
  Case c = random_case(g, 0.0, 17);
  Tensor& off = c.inputs["offset"];
  const double ys[] = {-1.0, -0.5, 3.0, 4.0, 0.0, 2.25};
  const double xs[] = {0.5, 4.0, -1.0, 1.75, 5.0, -0.5};
  for (int64_t oy = 0; oy < 4; ++oy)
    for (int64_t ox = 0; ox < 5; ++ox) {
      const int k = int((oy * 5 + ox) % 6);
      off.at(0, 0, oy, ox) = ys[k] - double(oy);
      off.at(0, 1, oy, ox) = xs[(k + oy) % 6] - double(ox);
    }
  for (Backend* b : runnable_backends()) {
    const Verdict v = expect_agrees(*b, c, "cut-offs");
    // Every coordinate here is exact in float32: no flip can explain a difference.
    EXPECT_EQ(v.kind, "agree") << b->name() << ": " << v.detail;
  }
}

// Found by `oplab fuzz --op deform_conv2d --backend halide-cpu --seed 5` (case 376): the last
// tap's Δx = -1e-9 puts the double sample a hair inside x < W, its float32 point exactly on
// x = W (out of range). grad_input[5] receives nothing else, so the whole element (8.1e-12)
// flips to 0. Nudging every offset at once could not explain it (it moves the other samples
// by far more than the element's bound); the float32 sampling point emulated per sample does.
TEST(HalideDeformConv2d, SoleTermOnTheCutOffIsAFlip) {
  const Case c = case_from_json(json::parse(R"({"op":"deform_conv2d","params":{"dilation":[1,2],"padding":[1,1],"stride":[2,1]},
    "inputs":{"input":{"shape":[1,2,4,1],"data":[0.0,0.25,0.25,0.25,0.25,0.25,0.25,0.25]},
              "mask":{"shape":[1,2,3,1],"data":[0.6280288696289063,0.25,0.0,0.25,0.0,0.25]},
              "offset":{"shape":[1,4,3,1],"data":[1.0000104904174805,-1.0,-3.9997787475585938,0.0,0.0,1.4127883911132813,
                                                   0.0,0.0,-1.517343521118164,0.0,-1.0,-9.999999717180685e-10]},
              "weight":{"shape":[2,1,1,2],"data":[0.25,0.25,0.25,0.25]}},
    "grad_output":{"shape":[1,2,3,1],"data":[0.0,0.25,0.25,0.25,0.0,0.25]}})"));
  for (Backend* b : runnable_backends()) {
    const Verdict v = expect_agrees(*b, c, "sole term on the cut-off");
    EXPECT_EQ(v.kind, "boundary-flip") << b->name() << ": " << v.detail;
  }
}

// Cases whose tensors are empty, or whose image is empty, never reach a kernel; the results
// still have every shape and value the reference gives.
TEST(HalideDeformConv2d, ZeroElementCases) {
  std::vector<Case> cases;
  Geometry n0;
  n0.N = 0;
  cases.push_back(random_case(n0, 1.0, 1));
  Geometry co0;
  co0.Co = 0, co0.bias = false;
  cases.push_back(random_case(co0, 1.0, 2));
  Geometry h0;  // H = 0: every sample is out of range; the output is the bias
  h0.H = 0, h0.kh = 1, h0.ph = 1;
  cases.push_back(random_case(h0, 1.0, 3));
  for (Backend* b : runnable_backends())
    for (size_t i = 0; i < cases.size(); ++i) {
      expect_agrees(*b, cases[i], "zero-element case " + std::to_string(i));
      const Result r = evaluate(*b, cases[i]);
      EXPECT_EQ(r.grads.size(), cases[i].inputs.size()) << "a gradient per differentiable input";
    }
}

// Without grad_output only the forward runs; with it, one gradient per supplied input.
TEST(HalideDeformConv2d, GradientsForEverySuppliedInput) {
  for (bool mask : {false, true})
    for (bool bias : {false, true}) {
      Geometry g;
      g.mask = mask, g.bias = bias;
      Case c = random_case(g, 1.0, 21);
      const Result r = evaluate(halide("halide-cpu"), c);
      EXPECT_EQ(r.grads.count("input") + r.grads.count("offset") + r.grads.count("weight"), 3u);
      EXPECT_EQ(r.grads.count("mask"), mask ? 1u : 0u);
      EXPECT_EQ(r.grads.count("bias"), bias ? 1u : 0u);
      c.grad_output.reset();
      EXPECT_TRUE(evaluate(halide("halide-cpu"), c).grads.empty());
    }
}

// The GPU scatter of grad_input must compile to native float atomic adds, not compare-and-swap
// loops (which Halide falls back to when it cannot match the value's load to the store): the
// generator emits the CUDA pipeline's statement file, PTX included, and it is searched.
TEST(HalideDeformConv2d, CudaScatterUsesNativeFloatAtomics) {
  namespace fs = std::filesystem;
  const fs::path gen = fs::path(OPLAB_CLI).parent_path().parent_path() / "halide" / "deform_conv2d.generator";
  if (!fs::exists(gen)) GTEST_SKIP() << "no generator at " << gen;
  const fs::path dir = fs::temp_directory_path() / ("oplab-dcn-ptx-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // The architecture of OPLAB_HALIDE_CUDA_TARGET (halide/CMakeLists.txt); the host part is irrelevant here.
  const std::string cmd = gen.string() + " -g deform_conv2d_grad_input -f dcn_grad_input -e stmt -o " + dir.string() +
                          " target=x86-64-linux-cuda-cuda_capability_70 > " + (dir / "log.txt").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(dir / "dcn_grad_input.stmt");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_GT(count("atom.global.add.f32"), 0u);
  EXPECT_EQ(count("atom.global.cas"), 0u);
  std::cout << "[dcn] PTX of grad_input: " << count("atom.global.add.f32") << " atom.global.add.f32, "
            << count("atom.global.cas") << " atom.global.cas\n";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace oplab
