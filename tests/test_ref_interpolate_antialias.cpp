// The interpolate reference with antialias (SPEC §16) against values derived by hand, and the
// parse rules of the parameter. torch (float64) and Pillow agree with these cases too
// (tests/test_peer_pillow.cpp, the campaigns); the derivations here are independent of both.
#include <gtest/gtest.h>

#include <cmath>

#include "core/params.h"
#include "reference/reference.h"

namespace oplab {
namespace {

using ref::interpolate_backward;
using ref::interpolate_forward;

InterpParams aa(InterpMode mode, std::vector<InterpAxis> axes, bool antialias = true) {
  InterpParams p;
  p.mode = mode;
  p.N = p.C = 1;
  p.axes = std::move(axes);
  p.antialias = antialias;
  return p;
}

InterpAxis sized(int64_t in, int64_t out) { return InterpAxis{in, out, std::nullopt}; }

Tensor row(std::vector<double> v) {
  Tensor t(Shape{1, 1, 1, int64_t(v.size())});
  t.data = std::move(v);
  return t;
}

TEST(RefInterpolateAntialias, BilinearEightToTwoCutsTheTriangleAtTheEdges) {
  // s = 4, support 4. Output 0: centre 2, taps int(-1.5) -> 0 .. int(6.5) = 6 (exclusive), args
  // (i - 2 + 0.5) / 4 = -0.375 .. 0.875: weights 0.625, 0.875, 0.875, 0.625, 0.375, 0.125, sum
  // 3.5 (the two taps left of the edge are cut and the rest renormalised). Output 1: centre 6,
  // taps 2 .. 8: index 3 has arg -0.625, weight 0.375.
  const auto p = aa(InterpMode::Bilinear, {sized(1, 1), sized(8, 2)});
  const Tensor out = interpolate_forward(p, row({0, 0, 0, 1, 0, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(out.data[0], 0.625 / 3.5);
  EXPECT_DOUBLE_EQ(out.data[1], 0.375 / 3.5);
  // The backward scatters the same weights: grad_output [1, 0] gives output 0's weights.
  const Tensor g = interpolate_backward(p, row(std::vector<double>(8, 0)), row({1, 0}));
  const std::vector<double> w{0.625, 0.875, 0.875, 0.625, 0.375, 0.125, 0, 0};
  for (size_t i = 0; i < w.size(); ++i) EXPECT_DOUBLE_EQ(g.data[i], w[i] / 3.5) << i;
}

TEST(RefInterpolateAntialias, BicubicFourToOneUsesKeysMinusHalf) {
  // s = 4, support 8: every pixel. Args (i - 2 + 0.5) / 4 = -0.375, -0.125, 0.125, 0.375; with
  // a = -0.5, W(t) = (1.5 t - 2.5) t^2 + 1: W(0.375) = 0.7275390625, W(0.125) = 0.9638671875,
  // sum 3.3828125. An impulse at index 0 reads W(0.375) / 3.3828125.
  const auto p = aa(InterpMode::Bicubic, {sized(1, 1), sized(4, 1)});
  const Tensor out = interpolate_forward(p, row({1, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(out.data[0], 0.7275390625 / 3.3828125);
}

TEST(RefInterpolateAntialias, BicubicUpscaleDiffersFromPlainBicubic) {
  // 2 -> 4, s = 1/2, support 2, no scaling of the argument. Output 0: centre 0.25, taps
  // int(-1.25) -> 0 .. int(2.75) = 2: args 0.25 and 1.25, W(0.25) = 0.8671875,
  // W(1.25) = ((a t - 5a) t + 8a) t - 4a = -0.0703125 (a = -0.5), sum 0.796875: on [0, 1] the
  // output is -0.0703125 / 0.796875. Plain bicubic (a = -0.75, edge replicated): src -0.25,
  // t = 0.75, taps -2..1 clamped to [0, 0, 0, 1], the last weight W(1.25) = -0.10546875.
  const Tensor x = row({0, 1});
  EXPECT_DOUBLE_EQ(interpolate_forward(aa(InterpMode::Bicubic, {sized(1, 1), sized(2, 4)}), x).data[0], -0.0703125 / 0.796875);
  EXPECT_DOUBLE_EQ(interpolate_forward(aa(InterpMode::Bicubic, {sized(1, 1), sized(2, 4)}, false), x).data[0], -0.10546875);
}

TEST(RefInterpolateAntialias, BilinearUpscaleEqualsPlainBilinear) {
  // SPEC §16: for s < 1 the triangle keeps its support 1 and the edge cut reproduces the clamp.
  const Tensor x = row({3, -1, 4, 1, -5});
  const Tensor a = interpolate_forward(aa(InterpMode::Bilinear, {sized(1, 1), sized(5, 13)}), x);
  const Tensor b = interpolate_forward(aa(InterpMode::Bilinear, {sized(1, 1), sized(5, 13)}, false), x);
  for (size_t i = 0; i < a.data.size(); ++i) EXPECT_NEAR(a.data[i], b.data[i], 1e-15) << i;
}

Case interp_case(json params) {
  Case c;
  c.op = "interpolate";
  c.params = std::move(params);
  c.inputs["input"] = Tensor(Shape{1, 1, 4, 4});
  return c;
}

std::string parse_error(json params) {
  try {
    parse_interpolate(interp_case(std::move(params)));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(RefInterpolateAntialias, ParseNamesWhatIsWrong) {
  EXPECT_NE(parse_error({{"mode", "nearest"}, {"size", 2}, {"antialias", true}}).find("only defined for bilinear and bicubic"),
            std::string::npos);
  EXPECT_NE(parse_error({{"mode", "bilinear"}, {"size", 2}, {"antialias", true}, {"align_corners", true}}).find("align_corners"),
            std::string::npos);
  EXPECT_NE(parse_error({{"mode", "bicubic"}, {"size", 2}, {"antialias", "yes"}}).find("antialias=\"yes\" must be true"),
            std::string::npos);
  EXPECT_EQ(parse_error({{"mode", "bicubic"}, {"size", 2}, {"antialias", true}}), "");
  EXPECT_EQ(parse_error({{"mode", "nearest"}, {"size", 2}, {"antialias", false}}), "");
}

}  // namespace
}  // namespace oplab
