// Tests of the two DCN study variants (SPEC §2 "Study variants", §8's DCN rows):
// `dcn-4uiiurz1` (the pure-PyTorch module of the first seed article) and `dcn-onnx` (the ONNX
// decomposition of the second). The expected values are derived by hand from the algorithms
// and from an independent plain convolution written here; `ref` stands for torchvision (the
// project holds the two equal to 1e-10, tests/test_differential_peer.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/backend.h"
#include "fuzz/generators.h"
#include "reference/ref_backend.h"

namespace oplab {
namespace {

std::unique_ptr<Backend> registered(const std::string& name) {
  for (BackendFactory f : registered_backend_factories()) {
    auto b = f();
    if (b->name() == name) return b;
  }
  return nullptr;
}

struct Backends {
  std::unique_ptr<Backend> ref = make_ref_backend();
  std::unique_ptr<Backend> u4 = registered("dcn-4uiiurz1");
  std::unique_ptr<Backend> onnx = registered("dcn-onnx");
};

void fill(Tensor& t, std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  for (double& v : t.data) v = u(rng);
}

double max_abs(const Tensor& t) {
  double m = 0;
  for (double v : t.data) m = std::max(m, std::fabs(v));
  return m;
}

// Agreement to rounding: |e - r| <= tol * (|r| + max|r|), the project's double-vs-double rule.
::testing::AssertionResult close(const Tensor& want, const Tensor& got, double tol = 1e-12) {
  if (want.shape != got.shape)
    return ::testing::AssertionFailure() << "shape " << shape_str(got.shape) << " != " << shape_str(want.shape);
  const double scale = max_abs(want);
  for (size_t i = 0; i < want.data.size(); ++i)
    if (!(std::fabs(got.data[i] - want.data[i]) <= tol * (std::fabs(want.data[i]) + scale)))
      return ::testing::AssertionFailure() << "element " << i << ": got " << got.data[i] << ", want " << want.data[i];
  return ::testing::AssertionSuccess();
}

struct Geom {
  int64_t N = 1, C = 1, H = 4, W = 5, Co = 1, kh = 3, kw = 3, sh = 1, sw = 1, ph = 0, pw = 0;
  int64_t Ho() const { return (H + 2 * ph - kh) / sh + 1; }
  int64_t Wo() const { return (W + 2 * pw - kw) / sw + 1; }
};

// A deform_conv2d case with zero offsets and zero weights, to be filled in by the test.
Case make_case(const Geom& g, bool mask = false, bool bias = false) {
  Case c;
  c.op = "deform_conv2d";
  c.params = json{{"stride", {g.sh, g.sw}}, {"padding", {g.ph, g.pw}}, {"dilation", {1, 1}}};
  c.inputs["input"] = Tensor({g.N, g.C, g.H, g.W});
  c.inputs["weight"] = Tensor({g.Co, g.C, g.kh, g.kw});
  c.inputs["offset"] = Tensor({g.N, 2 * g.kh * g.kw, g.Ho(), g.Wo()});
  if (mask) c.inputs["mask"] = Tensor({g.N, g.kh * g.kw, g.Ho(), g.Wo()});
  if (bias) c.inputs["bias"] = Tensor({g.Co});
  return c;
}

// A plain convolution written independently, its taps moved by `shift` pixels on both axes:
// out = bias + Σ W[o,c,i,j] X[oy*sh - ph + i + shift, ox*sw - pw + j + shift], 0 outside the image.
Tensor shifted_conv(const Geom& g, const Case& c, int64_t shift) {
  const Tensor &X = c.in("input"), &Wt = c.in("weight");
  const Tensor* bias = c.opt("bias");
  Tensor out({g.N, g.Co, g.Ho(), g.Wo()});
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t o = 0; o < g.Co; ++o)
      for (int64_t oy = 0; oy < g.Ho(); ++oy)
        for (int64_t ox = 0; ox < g.Wo(); ++ox) {
          double acc = bias ? bias->data[size_t(o)] : 0.0;
          for (int64_t ch = 0; ch < g.C; ++ch)
            for (int64_t i = 0; i < g.kh; ++i)
              for (int64_t j = 0; j < g.kw; ++j) {
                const int64_t y = oy * g.sh - g.ph + i + shift, x = ox * g.sw - g.pw + j + shift;
                if (y >= 0 && y < g.H && x >= 0 && x < g.W) acc += Wt.at(o, ch, i, j) * X.at(n, ch, y, x);
              }
          out.at(n, o, oy, ox) = acc;
        }
  return out;
}

TEST(VariantsDcn, BothAreRegistered) {
  Backends b;
  ASSERT_NE(b.u4, nullptr);
  ASSERT_NE(b.onnx, nullptr);
  EXPECT_FALSE(b.u4->is_float32());
  EXPECT_FALSE(b.onnx->is_float32());
}

// SPEC §8, row "DCN sample at y = -0.5": torchvision 0.5*X[0,x]; 4uiiurz1 with padding 0
// 2*X[0,x] (both corners clamp onto row 0 with weight 1 each); ONNX decomposition as torchvision.
TEST(VariantsDcn, SampleAtMinusHalf) {
  Backends b;
  Geom g;  // 1x1x4x5 input, 3x3 kernel, padding 0: Ho = 2, Wo = 3
  Case c = make_case(g);
  std::mt19937_64 rng(7);
  fill(c.inputs["input"], rng, 0.5, 2.0);
  c.inputs["weight"].at(0, 0, 0, 0) = 1.0;  // only tap (0, 0): output (oy, ox) samples (oy + Δy, ox + Δx)
  Tensor& off = c.inputs["offset"];
  for (int64_t ox = 0; ox < g.Wo(); ++ox) off.at(0, 0, 0, ox) = -0.5;  // tap 0, Δy, output row 0

  const Tensor& X = c.in("input");
  const Tensor ref = evaluate(*b.ref, c).outputs.at("output");
  const Tensor u4 = evaluate(*b.u4, c).outputs.at("output");
  const Tensor onnx = evaluate(*b.onnx, c).outputs.at("output");
  for (int64_t ox = 0; ox < g.Wo(); ++ox) {
    EXPECT_DOUBLE_EQ(ref.at(0, 0, 0, ox), 0.5 * X.at(0, 0, 0, ox)) << ox;
    EXPECT_DOUBLE_EQ(u4.at(0, 0, 0, ox), 2.0 * X.at(0, 0, 0, ox)) << ox;
    EXPECT_DOUBLE_EQ(onnx.at(0, 0, 0, ox), 0.5 * X.at(0, 0, 0, ox)) << ox;
    // Row 1 samples y = 1 exactly: every backend reads X[1, ox].
    EXPECT_DOUBLE_EQ(u4.at(0, 0, 1, ox), X.at(0, 0, 1, ox)) << ox;
  }

  // With padding 1 the clamped border is a zero row and the module agrees with torchvision.
  Geom g1 = g;
  g1.ph = g1.pw = 1;  // Ho = 4, Wo = 5; output (oy, ox) tap (0, 0) samples (oy - 1 + Δy, ox - 1 + Δx)
  Case c1 = make_case(g1);
  c1.inputs["input"] = c.in("input");
  c1.inputs["weight"].at(0, 0, 0, 0) = 1.0;
  for (int64_t ox = 0; ox < g1.Wo(); ++ox) c1.inputs["offset"].at(0, 0, 1, ox) = -0.5;  // row 1 -> y = -0.5
  const Tensor u4p = evaluate(*b.u4, c1).outputs.at("output");
  for (int64_t ox = 1; ox < g1.Wo(); ++ox) EXPECT_DOUBLE_EQ(u4p.at(0, 0, 1, ox), 0.5 * X.at(0, 0, 0, ox - 1)) << ox;
  EXPECT_TRUE(close(evaluate(*b.ref, c1).outputs.at("output"), u4p));
}

// With padding 0 the module doubles the last row even for a zero offset: the bottom tap of
// the last output row lands exactly on row H-1, where q_rb clamps back onto q_lt.
TEST(VariantsDcn, PaddingZeroDoublesLastRowAtZeroOffset) {
  Backends b;
  Geom g;  // H = 4, 3x3, padding 0: output row 1's taps read rows 1..3
  Case c = make_case(g);
  std::mt19937_64 rng(11);
  fill(c.inputs["input"], rng, 0.5, 2.0);
  c.inputs["weight"].at(0, 0, 2, 1) = 1.0;  // tap (2, 1): output (oy, ox) reads (oy + 2, ox + 1)
  const Tensor& X = c.in("input");
  const Tensor u4 = evaluate(*b.u4, c).outputs.at("output");
  const Tensor ref = evaluate(*b.ref, c).outputs.at("output");
  for (int64_t ox = 0; ox < g.Wo(); ++ox) {
    EXPECT_DOUBLE_EQ(ref.at(0, 0, 1, ox), X.at(0, 0, 3, ox + 1));
    EXPECT_DOUBLE_EQ(u4.at(0, 0, 0, ox), X.at(0, 0, 2, ox + 1));
    EXPECT_DOUBLE_EQ(u4.at(0, 0, 1, ox), 2.0 * X.at(0, 0, 3, ox + 1));
  }
}

// SPEC §8, row "DCN zero offset, ks = 5, padding 2": torchvision is the plain convolution; the
// module is shifted by (-1, -1). Also k = 4 (shift -1) and k = 1 (shift +1), where p_0 + p_n
// again misses the kernel's first tap by one.
struct ShiftCase {
  int64_t k, pad, shift;
};
class VariantsDcnShift : public ::testing::TestWithParam<ShiftCase> {};

TEST_P(VariantsDcnShift, ZeroOffsetIsShiftedPlainConv) {
  const ShiftCase sc = GetParam();
  Backends b;
  Geom g;
  g.N = 2, g.C = 2, g.H = 7, g.W = 6, g.Co = 3, g.kh = g.kw = sc.k, g.ph = g.pw = sc.pad;
  Case c = make_case(g, /*mask=*/false, /*bias=*/true);
  std::mt19937_64 rng(uint64_t(100 + sc.k));
  fill(c.inputs["input"], rng, -1, 1);
  fill(c.inputs["weight"], rng, -1, 1);
  fill(c.inputs["bias"], rng, -1, 1);
  EXPECT_TRUE(close(shifted_conv(g, c, 0), evaluate(*b.ref, c).outputs.at("output")));
  EXPECT_TRUE(close(shifted_conv(g, c, 0), evaluate(*b.onnx, c).outputs.at("output")));
  EXPECT_TRUE(close(shifted_conv(g, c, sc.shift), evaluate(*b.u4, c).outputs.at("output")));
  // And the shift is real: the module is not the plain convolution.
  EXPECT_FALSE(close(shifted_conv(g, c, 0), evaluate(*b.u4, c).outputs.at("output"), 1e-6));
}

INSTANTIATE_TEST_SUITE_P(Kernels, VariantsDcnShift,
                         ::testing::Values(ShiftCase{5, 2, -1}, ShiftCase{4, 2, -1}, ShiftCase{1, 1, +1}),
                         [](const auto& info) { return "k" + std::to_string(info.param.k); });

// Random cases with k in {2, 3} and padding >= 1, offsets reaching well outside the image:
// the module equals torchvision (ref), forward and every gradient.
TEST(VariantsDcn, FourUiiurz1EqualsRefForK2K3WithPadding) {
  Backends b;
  std::mt19937_64 rng(2024);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int compared = 0;
  for (int t = 0; t < 60; ++t) {
    Geom g;
    g.N = pick(1, 2), g.C = pick(1, 3), g.Co = pick(1, 3), g.H = pick(1, 6), g.W = pick(1, 6);
    g.kh = pick(2, 3), g.kw = pick(2, 3), g.sh = pick(1, 2), g.sw = pick(1, 2), g.ph = pick(1, 2), g.pw = pick(1, 2);
    Case c = make_case(g, pick(0, 1) == 1, pick(0, 1) == 1);
    for (auto& [name, tensor] : c.inputs) fill(tensor, rng, -1, 1);
    fill(c.inputs["offset"], rng, -4, 4);
    c.grad_output = Tensor({g.N, g.Co, g.Ho(), g.Wo()});
    fill(*c.grad_output, rng, -1, 1);

    const Result want = evaluate(*b.ref, c), got = evaluate(*b.u4, c);
    EXPECT_TRUE(close(want.outputs.at("output"), got.outputs.at("output"))) << "case " << t;
    ASSERT_EQ(want.grads.size(), got.grads.size());
    for (const auto& [name, g_want] : want.grads) EXPECT_TRUE(close(g_want, got.grads.at(name))) << "case " << t << " grad " << name;
    ++compared;
  }
  EXPECT_EQ(compared, 60);
}

// The module's gradient at a clamped sample: with padding 0, at y = -0.5 both row corners clamp
// onto row 0, so the value is 2 * X[0, x], flat in y, and its x-slope is doubled; torchvision's
// value 0.5 * X[0, x] rises towards row 0 with slope X[0, x].
TEST(VariantsDcn, FourUiiurz1GradientAtAClampedSample) {
  Backends b;
  Geom g;  // 1x1x4x5, 3x3, padding 0: Ho = 2, Wo = 3; the centre tap of output (0, 0) samples (1 + Δy, 1 + Δx)
  Case c = make_case(g);
  std::mt19937_64 rng(5);
  fill(c.inputs["input"], rng, 0.5, 2.0);
  c.inputs["weight"].at(0, 0, 1, 1) = 1.0;
  c.inputs["offset"].at(0, 8, 0, 0) = -1.5;  // tap 4 (the centre), Δy: y = -0.5, x = 1
  c.inputs["offset"].at(0, 9, 0, 0) = 0.25;  // Δx: x = 1.25
  c.grad_output = Tensor({1, 1, g.Ho(), g.Wo()});
  c.grad_output->at(0, 0, 0, 0) = 1.0;
  const Tensor& X = c.in("input");
  const double v1 = X.at(0, 0, 0, 1), v2 = X.at(0, 0, 0, 2), row0 = 0.75 * v1 + 0.25 * v2;

  const Result u4 = evaluate(*b.u4, c), ref = evaluate(*b.ref, c);
  EXPECT_DOUBLE_EQ(u4.outputs.at("output").at(0, 0, 0, 0), 2.0 * row0);
  EXPECT_DOUBLE_EQ(ref.outputs.at("output").at(0, 0, 0, 0), 0.5 * row0);
  EXPECT_EQ(u4.grads.at("offset").at(0, 8, 0, 0), 0.0);
  EXPECT_DOUBLE_EQ(ref.grads.at("offset").at(0, 8, 0, 0), row0);
  EXPECT_DOUBLE_EQ(u4.grads.at("offset").at(0, 9, 0, 0), 2.0 * (v2 - v1));
  EXPECT_DOUBLE_EQ(ref.grads.at("offset").at(0, 9, 0, 0), 0.5 * (v2 - v1));
  // grad_input: the module sends weight 2 * 0.75 and 2 * 0.25 to X[0, 1] and X[0, 2].
  EXPECT_DOUBLE_EQ(u4.grads.at("input").at(0, 0, 0, 1), 1.5);
  EXPECT_DOUBLE_EQ(u4.grads.at("input").at(0, 0, 0, 2), 0.5);
}

// The decomposition matches the reference to rounding on the project's edge-aimed cases
// (samples exactly on -1, 0, H-1, H, far outside, groups, dilation, masks), forward only.
TEST(VariantsDcn, OnnxEqualsRefOnSampledCases) {
  Backends b;
  int compared = 0;
  for (Case c : fuzz::sample_cases("deform_conv2d", 200, 31)) {
    c.grad_output.reset();
    if (b.onnx->unsupported_reason(c)) continue;
    const Tensor want = evaluate(*b.ref, c).outputs.at("output");
    const Tensor got = evaluate(*b.onnx, c).outputs.at("output");
    EXPECT_TRUE(close(want, got)) << "case " << compared << " params " << c.params.dump();
    ++compared;
  }
  EXPECT_EQ(compared, 200);  // the generator draws finite offsets only, so every case runs
}

TEST(VariantsDcn, UnsupportedOptionsAreRefusedWithAReason) {
  Backends b;
  Geom g;
  Case c = make_case(g);
  c.params["dilation"] = {2, 1};  // the dilated kernel is 5 rows: H = 6 gives Ho = 2
  c.inputs["input"] = Tensor({1, 1, 6, 5});
  c.inputs["offset"] = Tensor({1, 18, 2, 3});
  try {
    evaluate(*b.u4, c);
    FAIL() << "dilation accepted";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("dilation"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(evaluate(*b.onnx, c));  // the decomposition has dilation

  Case grouped = make_case(g);
  grouped.inputs["input"] = Tensor({1, 2, 4, 5});
  grouped.inputs["weight"] = Tensor({2, 1, 3, 3});  // G = 2
  try {
    evaluate(*b.u4, grouped);
    FAIL() << "weight groups accepted";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("groups"), std::string::npos) << e.what();
  }

  Case nan_offset = make_case(g);
  nan_offset.inputs["offset"].data[3] = std::nan("");
  EXPECT_THROW(evaluate(*b.u4, nan_offset), Unsupported);
  EXPECT_THROW(evaluate(*b.onnx, nan_offset), Unsupported);

  Case with_grad = make_case(g);
  with_grad.grad_output = Tensor({1, 1, g.Ho(), g.Wo()});
  EXPECT_THROW(evaluate(*b.onnx, with_grad), Unsupported);
  EXPECT_NO_THROW(evaluate(*b.u4, with_grad));
}

}  // namespace
}  // namespace oplab
