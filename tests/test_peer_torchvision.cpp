// The torchvision peer backend against values worked out by hand, its error paths, and a
// soak loop. Needs Debian's torch/torchvision (SPEC: the live oracle on every machine here).
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "core/backend.h"
#include "core/case.h"
#include "peer/torchvision_backend.h"

using namespace oplab;

namespace {

// One bridge for the whole file: importing torch costs seconds per process.
Backend& peer() {
  static std::unique_ptr<Backend> b = make_torchvision_backend();
  return *b;
}

#define REQUIRE_PEER()                                               \
  do {                                                               \
    auto why = peer().unavailable_reason();                          \
    ASSERT_FALSE(why.has_value()) << "torchvision peer: " << *why;   \
  } while (0)

Tensor T(Shape s, std::vector<double> d) {
  Tensor t;
  t.shape = std::move(s);
  t.data = std::move(d);
  return t;
}

Tensor filled(Shape s, double v) { return Tensor(std::move(s), v); }

Tensor ramp(Shape s, double start = 0, double step = 1) {
  Tensor t(std::move(s));
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = start + step * double(i);
  return t;
}

Case make_case(const std::string& op, json params, std::map<std::string, Tensor> inputs,
               std::optional<Tensor> grad_output = std::nullopt) {
  Case c;
  c.op = op;
  c.params = std::move(params);
  c.inputs = std::move(inputs);
  c.grad_output = std::move(grad_output);
  return c;
}

int count_open_fds() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (readdir(d)) ++n;
    closedir(d);
  }
  return n;
}

// Bilinear 2x2 -> 1x1 case of SPEC §8, reused by several tests.
Case interp_2x2_to_1x1(std::vector<double> data) {
  return make_case("interpolate", {{"mode", "bilinear"}, {"size", {1, 1}}, {"align_corners", false}},
                   {{"input", T({1, 1, 2, 2}, std::move(data))}}, T({1, 1, 1, 1}, {1.0}));
}

}  // namespace

TEST(PeerTorchvision, HelloReportsTorch113) {
  REQUIRE_PEER();
  EXPECT_EQ(peer().name(), "torchvision");
  EXPECT_NE(peer().description().find("float64"), std::string::npos);
  auto v = torchvision_versions();
  ASSERT_TRUE(v.has_value());
  const std::string torch = v->at("torch").get<std::string>();
  const std::string tv = v->at("torchvision").get<std::string>();
  std::printf("[ peer     ] torch %s, torchvision %s, python %s\n", torch.c_str(), tv.c_str(),
              v->value("python", "?").c_str());
  EXPECT_EQ(torch.rfind("1.13", 0), 0u) << torch;
  EXPECT_EQ(tv.rfind("0.14", 0), 0u) << tv;
}

TEST(PeerTorchvision, RoiAlignOfConstantImageIsTheConstant) {
  REQUIRE_PEER();
  // aligned=false, every sample of both rois lies inside [0, H-1] x [0, W-1], so each
  // bilinear sample of a constant plane is that constant and so is their mean: channel 0
  // gives 3.5 everywhere, channel 1 gives -2. The input gradient of one sample sums to its
  // bilinear weights (1) / count, so the gradient mass of a channel is the sum of its gout.
  Tensor x(Shape{1, 2, 6, 6});
  for (int i = 0; i < 36; ++i) x.data[size_t(i)] = 3.5, x.data[size_t(36 + i)] = -2.0;
  Tensor rois = T({2, 5}, {0, 1, 1, 4, 4, 0, 0.3, 2.2, 5, 3.9});
  Tensor gout = ramp({2, 2, 2, 2}, 1);  // 1..16
  Case c = make_case("roi_align",
                     {{"output_size", {2, 2}}, {"spatial_scale", 1.0}, {"sampling_ratio", 2}, {"aligned", false}},
                     {{"input", x}, {"rois", rois}}, gout);
  Result r = peer().run(c);
  const Tensor& out = r.outputs.at("output");
  ASSERT_EQ(out.shape, (Shape{2, 2, 2, 2}));
  for (int64_t k = 0; k < 2; ++k)
    for (int64_t p = 0; p < 4; ++p) {
      EXPECT_NEAR(out.data[size_t(k * 8 + p)], 3.5, 1e-12);
      EXPECT_NEAR(out.data[size_t(k * 8 + 4 + p)], -2.0, 1e-12);
    }
  ASSERT_TRUE(r.grads.count("input"));
  EXPECT_FALSE(r.grads.count("rois"));  // rois never get a gradient
  const Tensor& gx = r.grads.at("input");
  ASSERT_EQ(gx.shape, x.shape);
  double mass0 = 0, mass1 = 0;
  for (int i = 0; i < 36; ++i) mass0 += gx.data[size_t(i)], mass1 += gx.data[size_t(36 + i)];
  // channel 0: gout[k][0] = 1..4 and 9..12 -> 10 + 42 = 52; channel 1: 5..8, 13..16 -> 26 + 58 = 84
  EXPECT_NEAR(mass0, 52.0, 1e-12);
  EXPECT_NEAR(mass1, 84.0, 1e-12);
}

TEST(PeerTorchvision, RoiPoolMaxOfRamp) {
  REQUIRE_PEER();
  // X[y][x] = 4y + x. roi (0,0)-(3,3) at scale 1: 4x4 region, 2x2 bins of 2x2 pixels; the max
  // of each bin is its bottom-right pixel: 5, 7, 13, 15. The gradient goes to those pixels.
  Tensor x = ramp({1, 1, 4, 4});
  Case c = make_case("roi_pool", {{"output_size", {2, 2}}, {"spatial_scale", 1.0}},
                     {{"input", x}, {"rois", T({1, 5}, {0, 0, 0, 3, 3})}}, T({1, 1, 2, 2}, {1, 2, 3, 4}));
  Result r = peer().run(c);
  EXPECT_EQ(r.outputs.at("output").data, (std::vector<double>{5, 7, 13, 15}));
  std::vector<double> g(16, 0.0);
  g[5] = 1, g[7] = 2, g[13] = 3, g[15] = 4;
  EXPECT_EQ(r.grads.at("input").data, g);
  EXPECT_FALSE(r.grads.count("rois"));

  // SPEC §8: x1 = 0.5, x2 = 2.5 round half away from zero (C round) to 1 and 3, so the single
  // bin covers rows/cols [1, 4) and its max is X[3][3] = 15 (Python's round would give 10).
  Case half = make_case("roi_pool", {{"output_size", 1}}, {{"input", x}, {"rois", T({1, 5}, {0, 0.5, 0.5, 2.5, 2.5})}});
  EXPECT_EQ(peer().run(half).outputs.at("output").data, (std::vector<double>{15}));
}

TEST(PeerTorchvision, Bilinear2x2To1x1IsTheMean) {
  REQUIRE_PEER();
  // One output pixel, scale 2: src = 2 * 0.5 - 0.5 = 0.5 on both axes, the centre of the four
  // pixels, so the value is (1+2+3+4)/4 = 2.5 and each input gets 1/4 of the gradient.
  Result r = peer().run(interp_2x2_to_1x1({1, 2, 3, 4}));
  EXPECT_EQ(r.outputs.at("output").shape, (Shape{1, 1, 1, 1}));
  EXPECT_DOUBLE_EQ(r.outputs.at("output").data[0], 2.5);
  EXPECT_EQ(r.grads.at("input").data, (std::vector<double>{0.25, 0.25, 0.25, 0.25}));
}

TEST(PeerTorchvision, InterpolateLinearScaleFactorIsPassedThrough) {
  REQUIRE_PEER();
  // 1-D linear, W = 5, sf = 1.5, recompute off: out = floor(7.5) = 7, scale 1/1.5 (SPEC §8).
  // On the ramp 0..4 the value is the clamped source index: max(0, (d + 0.5)/1.5 - 0.5).
  Case c = make_case("interpolate", {{"mode", "linear"}, {"scale_factor", 1.5}}, {{"input", ramp({1, 1, 5})}});
  Result r = peer().run(c);
  const Tensor& out = r.outputs.at("output");
  ASSERT_EQ(out.shape, (Shape{1, 1, 7}));
  for (int d = 0; d < 7; ++d) EXPECT_NEAR(out.data[size_t(d)], std::max(0.0, (d + 0.5) / 1.5 - 0.5), 1e-15) << d;
  EXPECT_TRUE(r.grads.empty());  // no grad_output, no backward
}

TEST(PeerTorchvision, DeformConvZeroOffset1x1IsWeightTimesInputPlusBias) {
  REQUIRE_PEER();
  // 1x1 kernel, zero offset, mask 1: every tap samples X at its own pixel, so
  // out[o,y,x] = b[o] + sum_c W[o,c] X[c,y,x]. Backward by hand: grad_bias[o] = sum gout[o],
  // grad_weight[o,c] = sum_yx gout[o] X[c], grad_input[c] = sum_o W[o,c] gout[o],
  // grad_mask = sum_o gout[o] sum_c W[o,c] X[c].
  const int C = 2, Co = 3, H = 3, W = 3;
  Tensor x = ramp({1, C, H, W}, -4, 0.5);
  Tensor w = T({Co, C, 1, 1}, {1, 2, -1, 0.5, 0.25, 3});
  Tensor b = T({Co}, {10, 20, 30});
  Tensor off = filled({1, 2, H, W}, 0.0);
  Tensor mask = filled({1, 1, H, W}, 1.0);
  Tensor gout = ramp({1, Co, H, W}, 1, 0.25);
  Case c = make_case("deform_conv2d", {{"stride", {1, 1}}, {"padding", 0}, {"dilation", {1, 1}}},
                     {{"input", x}, {"offset", off}, {"weight", w}, {"bias", b}, {"mask", mask}}, gout);
  Result r = peer().run(c);
  const Tensor& out = r.outputs.at("output");
  ASSERT_EQ(out.shape, (Shape{1, Co, H, W}));
  for (int o = 0; o < Co; ++o)
    for (int p = 0; p < H * W; ++p) {
      double v = b.data[size_t(o)];
      for (int ci = 0; ci < C; ++ci) v += w.data[size_t(o * C + ci)] * x.data[size_t(ci * H * W + p)];
      EXPECT_NEAR(out.data[size_t(o * H * W + p)], v, 1e-12);
    }

  // A gradient for every differentiable input supplied, of its shape.
  for (const char* n : {"input", "offset", "weight", "bias", "mask"}) {
    ASSERT_TRUE(r.grads.count(n)) << n;
    EXPECT_EQ(r.grads.at(n).shape, c.in(n).shape) << n;
  }
  EXPECT_EQ(r.grads.size(), 5u);
  for (int o = 0; o < Co; ++o) {
    double gb = 0;
    for (int p = 0; p < H * W; ++p) gb += gout.data[size_t(o * H * W + p)];
    EXPECT_NEAR(r.grads.at("bias").data[size_t(o)], gb, 1e-12);
    for (int ci = 0; ci < C; ++ci) {
      double gw = 0;
      for (int p = 0; p < H * W; ++p) gw += gout.data[size_t(o * H * W + p)] * x.data[size_t(ci * H * W + p)];
      EXPECT_NEAR(r.grads.at("weight").data[size_t(o * C + ci)], gw, 1e-12);
    }
  }
  for (int p = 0; p < H * W; ++p) {
    double gm = 0;
    for (int ci = 0; ci < C; ++ci) {
      double gx = 0;
      for (int o = 0; o < Co; ++o) {
        gx += w.data[size_t(o * C + ci)] * gout.data[size_t(o * H * W + p)];
        gm += gout.data[size_t(o * H * W + p)] * w.data[size_t(o * C + ci)] * x.data[size_t(ci * H * W + p)];
      }
      EXPECT_NEAR(r.grads.at("input").data[size_t(ci * H * W + p)], gx, 1e-12);
    }
    EXPECT_NEAR(r.grads.at("mask").data[size_t(p)], gm, 1e-12);
  }

  // Without mask and bias, only input, offset and weight get gradients.
  Case c3 = make_case("deform_conv2d", json::object(), {{"input", x}, {"offset", off}, {"weight", w}}, gout);
  Result r3 = peer().run(c3);
  EXPECT_EQ(r3.grads.size(), 3u);
  EXPECT_TRUE(r3.grads.count("input") && r3.grads.count("offset") && r3.grads.count("weight"));
}

// The bench verb times on the device asked for: the CPU here; CUDA where torch has it, else a
// one-line refusal (never a CPU timing passed off as a GPU one); any other device is refused.
TEST(PeerTorchvision, BenchTimesOnTheDeviceAskedForOrDeclines) {
  nlohmann::json req = {{"case", {{"op", "roi_pool"}, {"params", {{"output_size", {2, 2}}}}, {"inputs", nlohmann::json::object()}}},
                        {"random_inputs", {{"input", {{"shape", {1, 2, 8, 8}}}}, {"rois", {{"shape", {3, 5}}, {"low", 0}, {"high", 0.5}}}}},
                        {"repeats", 3}, {"warmup", 1}};
  req["device"] = "cpu";
  const nlohmann::json cpu = torchvision_bench(req);
  EXPECT_EQ(cpu.value("device", ""), "cpu");
  EXPECT_EQ(cpu["ms"].size(), 3u);
  EXPECT_GT(cpu.value("median_ms", -1.0), 0.0);
  req["device"] = "cuda";
  try {
    EXPECT_EQ(torchvision_bench(req).value("device", ""), "cuda");
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("has no CUDA device here"), std::string::npos) << e.what();
  }
  req["device"] = "tpu";
  try {
    torchvision_bench(req);
    FAIL() << "a bench on device tpu was not refused";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no bench device 'tpu'"), std::string::npos) << e.what();
  }
}

// The bench tells an op torchvision lacks (Unsupported: the bench lists it as a peer without
// the case) from a bench that failed (any other error: listed as failed).
TEST(PeerTorchvision, BenchDeclinesAnOpItLacksAsUnsupported) {
  REQUIRE_PEER();
  const nlohmann::json req = {
      {"case", {{"op", "deform_roi_pool"}, {"params", {{"output_size", {2, 2}}}}, {"inputs", nlohmann::json::object()}}},
      {"random_inputs", {{"input", {{"shape", {1, 2, 8, 8}}}}, {"rois", {{"shape", {3, 5}}, {"low", 0}, {"high", 0.5}}}}},
      {"device", "cpu"}, {"repeats", 1}, {"warmup", 0}};
  EXPECT_THROW(torchvision_bench(req), Unsupported);
}

TEST(PeerTorchvision, UnsupportedOpsAreDeclinedNeverFaked) {
  REQUIRE_PEER();
  Tensor x = ramp({1, 1, 4, 4});
  Tensor rois = T({1, 5}, {0, 0, 0, 3, 3});
  Case drp = make_case("deform_roi_pool", {{"output_size", {2, 2}}}, {{"input", x}, {"rois", rois}});
  Case ramax = make_case("roi_align", {{"output_size", {2, 2}}, {"pool_mode", "max"}}, {{"input", x}, {"rois", rois}});
  for (const Case* c : {&drp, &ramax}) {
    EXPECT_TRUE(peer().unsupported_reason(*c).has_value()) << c->op;
    EXPECT_THROW(peer().run(*c), Unsupported) << c->op;  // the bridge declines too
    EXPECT_THROW(evaluate(peer(), *c), Unsupported) << c->op;
  }
  Case avg = make_case("roi_align", {{"output_size", {2, 2}}, {"pool_mode", "avg"}}, {{"input", x}, {"rois", rois}});
  EXPECT_FALSE(peer().unsupported_reason(avg).has_value());
}

TEST(PeerTorchvision, NonFiniteValuesRoundTrip) {
  REQUIRE_PEER();
  // nearest with out == in copies the input, so nan, inf and -inf must come back as such.
  Case c = make_case("interpolate", {{"mode", "nearest"}, {"size", 4}},
                     {{"input", T({1, 1, 4}, {1.0, std::nan(""), INFINITY, -INFINITY})}});
  const Tensor out = peer().run(c).outputs.at("output");
  ASSERT_EQ(out.shape, (Shape{1, 1, 4}));
  EXPECT_EQ(out.data[0], 1.0);
  EXPECT_TRUE(std::isnan(out.data[1]));
  EXPECT_EQ(out.data[2], INFINITY);
  EXPECT_EQ(out.data[3], -INFINITY);
  // NaN in a blend gives NaN; its gradient is still the plain 1/4 weights.
  Result r = peer().run(interp_2x2_to_1x1({1, 2, 3, std::nan("")}));
  EXPECT_TRUE(std::isnan(r.outputs.at("output").data[0]));
  EXPECT_EQ(r.grads.at("input").data, (std::vector<double>{0.25, 0.25, 0.25, 0.25}));
}

TEST(PeerTorchvision, TorchRejectionIsOneLineRuntimeError) {
  REQUIRE_PEER();
  // sf = 0.1 on a 2x2 image asks for a 0x0 output, which torch refuses.
  Case c = make_case("interpolate", {{"mode", "bilinear"}, {"scale_factor", 0.1}}, {{"input", ramp({1, 1, 2, 2})}});
  try {
    peer().run(c, ValidParams{});  // straight to the bridge: the harness's validation would refuse it first
    FAIL() << "torch accepted a 0x0 output";
  } catch (const Unsupported& e) {
    FAIL() << "a torch error is a failure, not unsupported: " << e.what();
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    std::printf("[ peer     ] %s\n", m.c_str());
    EXPECT_EQ(m.rfind("torchvision: interpolate: failed: RuntimeError: ", 0), 0u) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  // The bridge survives its exceptions.
  EXPECT_DOUBLE_EQ(peer().run(interp_2x2_to_1x1({1, 2, 3, 4})).outputs.at("output").data[0], 2.5);
}

TEST(PeerTorchvision, EmptyBatchesAndEmptyRois) {
  REQUIRE_PEER();
  // K = 0 rois: empty output, zero input gradient (SPEC §7); torch agrees.
  Tensor x = ramp({1, 2, 4, 4});
  for (const char* op : {"roi_align", "roi_pool"}) {
    Case c = make_case(op, {{"output_size", {2, 2}}}, {{"input", x}, {"rois", T({0, 5}, {})}}, T({0, 2, 2, 2}, {}));
    Result r = peer().run(c);
    EXPECT_EQ(r.outputs.at("output").shape, (Shape{0, 2, 2, 2})) << op;
    EXPECT_EQ(r.grads.at("input").data, std::vector<double>(32, 0.0)) << op;
  }
  // N = 0 batches.
  Case dc = make_case("deform_conv2d", json::object(),
                      {{"input", T({0, 1, 3, 3}, {})}, {"offset", T({0, 2, 3, 3}, {})}, {"weight", T({1, 1, 1, 1}, {2})}},
                      T({0, 1, 3, 3}, {}));
  Result r = peer().run(dc);
  EXPECT_EQ(r.outputs.at("output").shape, (Shape{0, 1, 3, 3}));
  EXPECT_EQ(r.grads.at("weight").data, (std::vector<double>{0.0}));
  Case ip = make_case("interpolate", {{"mode", "bilinear"}, {"size", {3, 3}}}, {{"input", T({0, 1, 2, 2}, {})}},
                      T({0, 1, 3, 3}, {}));
  EXPECT_EQ(peer().run(ip).outputs.at("output").shape, (Shape{0, 1, 3, 3}));
}

TEST(PeerTorchvision, CrashedBridgeIsReportedAndRestarted) {
  REQUIRE_PEER();
  // torchvision 0.14 roi_align segfaults on an H = 0 input with a roi. The backend declines
  // such cases; run() called anyway must report the dead child in one line and recover.
  Case crash = make_case("roi_align", {{"output_size", {1, 1}}},
                         {{"input", T({1, 1, 0, 0}, {})}, {"rois", T({1, 5}, {0, 0, 0, 1, 1})}});
  EXPECT_TRUE(peer().unsupported_reason(crash).has_value());
  try {
    peer().run(crash);
    FAIL() << "roi_align on an empty image no longer crashes torchvision; drop the guard";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    std::printf("[ peer     ] %s\n", m.c_str());
    EXPECT_NE(m.find("signal"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_DOUBLE_EQ(peer().run(interp_2x2_to_1x1({1, 2, 3, 4})).outputs.at("output").data[0], 2.5);
}

TEST(PeerTorchvision, MultiMegabyteLinesRoundTripExactly) {
  REQUIRE_PEER();
  // 1x4x256x256 doubles with 17-digit values: a request and a reply of several MB each.
  // bilinear with size == input size is the identity (out == in shortcut), so the values must
  // come back bit for bit, which also checks the shortest round-trip printing on both sides.
  Tensor x({1, 4, 256, 256});
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = std::sin(double(i) * 0.7317) * 1e3 / 3.0;
  Case c = make_case("interpolate", {{"mode", "bilinear"}, {"size", {256, 256}}, {"align_corners", false}},
                     {{"input", x}}, x);
  Result r = peer().run(c);
  EXPECT_TRUE(r.outputs.at("output").data == x.data);
  EXPECT_TRUE(r.grads.at("input").data == x.data);
}

TEST(PeerTorchvision, BadEnvironmentMakesItUnavailable) {
  setenv("OPLAB_PYTHON", "/nonexistent/python3", 1);
  auto b = make_torchvision_backend();
  unsetenv("OPLAB_PYTHON");
  auto why = b->unavailable_reason();
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("/nonexistent/python3"), std::string::npos) << *why;
  EXPECT_THROW(b->run(interp_2x2_to_1x1({1, 2, 3, 4})), BackendUnavailable);
}

// A stand-in bridge script in the test's temporary directory, run by the real interpreter.
std::string write_script(const std::string& name, const std::string& body) {
  const std::string path = testing::TempDir() + name;
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return path;
  std::fputs(body.c_str(), f);
  std::fclose(f);
  return path;
}

// A stand-in process for the peer is an external backend under its own name now: processes
// that exit at once or stop reading are tested in tests/test_exec_backend.cpp.

TEST(PeerTorchvision, MissingTorchvisionSaysWhatToInstall) {
  // A torchvision module that fails to import shadows the real one for the real bridge.
  const std::string dir = testing::TempDir() + "oplab_no_tv";
  mkdir(dir.c_str(), 0700);
  write_script("oplab_no_tv/torchvision.py", "raise ImportError('stand-in for a missing torchvision')\n");
  const char* old = std::getenv("PYTHONPATH");
  const std::string saved = old ? old : "";
  setenv("PYTHONPATH", dir.c_str(), 1);
  auto b = make_torchvision_backend();
  auto why = b->unavailable_reason();  // the child is started here, with the shadowing path
  if (old) setenv("PYTHONPATH", saved.c_str(), 1); else unsetenv("PYTHONPATH");
  ASSERT_TRUE(why.has_value());
  std::printf("[ peer     ] %s\n", why->c_str());
  EXPECT_NE(why->find("stand-in for a missing torchvision"), std::string::npos) << *why;
  EXPECT_NE(why->find("install python3-torchvision"), std::string::npos) << *why;
  EXPECT_THROW(b->run(interp_2x2_to_1x1({1, 2, 3, 4})), BackendUnavailable);
}

TEST(PeerTorchvision, DestructorReapsItsChild) {
  REQUIRE_PEER();
  {
    auto b = make_torchvision_backend();
    ASSERT_FALSE(b->unavailable_reason().has_value());
    b->run(interp_2x2_to_1x1({1, 2, 3, 4}));
  }
  // The shared peer's child is still alive (0); a zombie left behind would be reaped here.
  int status = 0;
  EXPECT_LE(waitpid(-1, &status, WNOHANG), 0);
}

TEST(PeerTorchvision, TwoThousandTinyCallsNeitherLeakNorHang) {
  REQUIRE_PEER();
  Case c = interp_2x2_to_1x1({1, 2, 3, 4});
  peer().run(c);  // warm
  const int fds_before = count_open_fds();
  const int n = 2000;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    c.inputs["input"].data[0] = double(i);
    Result r = peer().run(c);
    ASSERT_DOUBLE_EQ(r.outputs.at("output").data[0], (double(i) + 9) / 4) << i;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[ peer     ] %d calls in %.2f s: %.0f calls/s\n", n, s, n / s);
  EXPECT_EQ(count_open_fds(), fds_before);
}

// torch's CUDA kernels as backends: on a machine whose torch sees a GPU they evaluate a case
// there and agree with torch's float32 CPU kernel (a hand-sized roi_align: the two kernels
// share their formula, so only rounding may differ); elsewhere they say why in one line and
// run nothing.
TEST(PeerTorchvision, CudaKernelsRunOnTheGpuOrSayWhyNot) {
  REQUIRE_PEER();
  for (DType t : {DType::Float32, DType::Float16}) {
    std::unique_ptr<Backend> cuda = make_torchvision_backend(t, TorchDevice::Cuda);
    EXPECT_EQ(cuda->name(), t == DType::Float32 ? "torchvision-cuda-f32" : "torchvision-cuda-f16");
    EXPECT_TRUE(cuda->opt_in());
    EXPECT_EQ(cuda->dtype("roi_align"), t);
    const Case c = make_case("roi_align", {{"output_size", {2, 2}}, {"sampling_ratio", 2}, {"aligned", true}},
                             {{"input", ramp({1, 1, 4, 4})}, {"rois", T({1, 5}, {0, 0.5, 0.5, 3, 2.5})}},
                             filled({1, 1, 2, 2}, 1.0));
    if (auto why = cuda->unavailable_reason()) {
      EXPECT_NE(why->find("CUDA"), std::string::npos) << *why;
      EXPECT_EQ(why->find('\n'), std::string::npos) << *why;
      EXPECT_THROW(evaluate(*cuda, c), BackendUnavailable);
      continue;
    }
    std::unique_ptr<Backend> cpu = make_torchvision_backend(DType::Float32);
    const Result on_gpu = evaluate(*cuda, c), on_cpu = evaluate(*cpu, c);
    ASSERT_EQ(on_gpu.outputs.at("output").data.size(), 4u);
    // Half keeps 11 bits: values up to 16 round by at most 2^-7.
    const double tol = t == DType::Float32 ? 1e-5 : 1e-2;
    for (size_t i = 0; i < 4; ++i)
      EXPECT_NEAR(on_gpu.outputs.at("output").data[i], on_cpu.outputs.at("output").data[i], tol) << i;
    EXPECT_EQ(on_gpu.grads.count("input"), 1u);
  }
}
