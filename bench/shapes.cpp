// DESIGN.md's standard shapes (float32):
//   roi ops: input [2,256,200,304], 1000 rois (boxes 8-200 px on an 800x1216 image), 7x7,
//            spatial_scale 0.25, sampling_ratio 2 and adaptive, gamma 0.1;
//   deform_conv2d (mask, 3x3, pad 1): N1 C64 56x56, N8 C64 56x56, N4 C128 64x64, offsets ±2;
//   interpolate: bilinear x2 [8,256,64,64] (both align_corners), nearest x2 (same),
//                bicubic x2 [8,128,64,64], trilinear x2 [1,32,32,32,32], area 128->32 [8,64,128,128].
// The reduced set keeps every shape's kind but divides batch, channels and rois.
#include <random>

#include "bench/bench.h"
#include "core/case_io.h"
#include "core/op_desc.h"

namespace oplab::bench {

namespace {

struct Uniform {
  double low, high;
};

Tensor random_tensor(const oplab::Shape& shape, Uniform u, std::mt19937_64& rng) {
  Tensor t(shape);
  std::uniform_real_distribution<double> d(u.low, u.high);
  for (double& v : t.data) v = double(float(d(rng)));  // representable in float32: both sides see the same values
  return t;
}

// Boxes of 8-200 px on an 800 x 1216 image, in batches 0..N-1.
Tensor random_rois(int64_t K, int64_t N, std::mt19937_64& rng) {
  Tensor rois({K, 5});
  std::uniform_real_distribution<double> side(8, 200), unit(0, 1);
  for (int64_t k = 0; k < K; ++k) {
    const double w = side(rng), h = side(rng);
    const double x1 = unit(rng) * (1216 - w), y1 = unit(rng) * (800 - h);
    rois.at(k, 0) = double(int64_t(unit(rng) * double(N)) % N);
    rois.at(k, 1) = double(float(x1));
    rois.at(k, 2) = double(float(y1));
    rois.at(k, 3) = double(float(x1 + w));
    rois.at(k, 4) = double(float(y1 + h));
  }
  return rois;
}

struct Builder {
  std::mt19937_64 rng{2026};
  std::vector<BenchShape> shapes;

  // `random`: inputs drawn on both sides; `sent`: inputs sent to the peer as data.
  void add(const std::string& name, const std::string& op, json params,
           const std::vector<std::tuple<std::string, oplab::Shape, Uniform>>& random,
           const std::map<std::string, Tensor>& sent = {}) {
    BenchShape s;
    s.name = name;
    s.c.op = op;
    s.c.params = params;
    json random_inputs = json::object(), peer_inputs = json::object();
    for (const auto& [in, shape, u] : random) {
      s.c.inputs[in] = random_tensor(shape, u, rng);
      random_inputs[in] = {{"shape", shape}, {"low", u.low}, {"high", u.high}};
    }
    for (const auto& [in, t] : sent) {
      s.c.inputs[in] = t;
      peer_inputs[in] = tensor_to_json(t);
    }
    const oplab::Shape out = op_desc(op).validate(s.c);
    s.bytes = 4.0 * double(shape_numel(out));
    for (const auto& [in, t] : s.c.inputs) s.bytes += 4.0 * double(t.numel());
    s.peer_request = {{"case", {{"op", op}, {"params", params}, {"inputs", peer_inputs}}},
                      {"random_inputs", random_inputs}};
    shapes.push_back(std::move(s));
  }
};

}  // namespace

std::vector<BenchShape> standard_shapes(bool reduced) {
  Builder b;
  const int64_t r = reduced ? 4 : 1;  // divisor of batch, channels and rois
  const Uniform unit{-1, 1}, offsets{-2, 2}, mask{0, 1};

  // RoI ops.
  const oplab::Shape feat{2, 256 / r, 200, 304};
  const Tensor rois = random_rois(1000 / r, 2, b.rng);
  const json roi_common{{"output_size", {7, 7}}, {"spatial_scale", 0.25}};
  json ra = roi_common;
  ra["sampling_ratio"] = 2;
  ra["aligned"] = true;
  b.add("roi_align sr2", "roi_align", ra, {{"input", feat, unit}}, {{"rois", rois}});
  ra["sampling_ratio"] = 0;
  b.add("roi_align adaptive", "roi_align", ra, {{"input", feat, unit}}, {{"rois", rois}});
  b.add("roi_pool", "roi_pool", roi_common, {{"input", feat, unit}}, {{"rois", rois}});
  json drp = roi_common;
  drp["sampling_ratio"] = 2;
  drp["gamma"] = 0.1;
  b.add("deform_roi_pool sr2", "deform_roi_pool", drp,
        {{"input", feat, unit}, {"offset", {1000 / r, 2, 7, 7}, Uniform{-0.5, 0.5}}}, {{"rois", rois}});

  // deform_conv2d with mask, 3x3, padding 1, offsets ±2.
  const json dcn{{"stride", {1, 1}}, {"padding", {1, 1}}, {"dilation", {1, 1}}};
  for (auto [n, c, hw] : {std::tuple<int64_t, int64_t, int64_t>{1, 64, 56}, {8, 64, 56}, {4, 128, 64}}) {
    if (reduced) n = std::max<int64_t>(1, n / r), c = c / 2;
    b.add("deform_conv2d N" + std::to_string(n) + " C" + std::to_string(c) + " " + std::to_string(hw) + "x" +
              std::to_string(hw),
          "deform_conv2d", dcn,
          {{"input", {n, c, hw, hw}, unit},
           {"offset", {n, 18, hw, hw}, offsets},
           {"mask", {n, 9, hw, hw}, mask},
           {"weight", {c, c, 3, 3}, unit},
           {"bias", {c}, unit}});
    b.shapes.back().flops = 2.0 * double(n * c * c * 9 * hw * hw) + 8.0 * double(n * c * 9 * hw * hw);
  }

  // interpolate.
  const int64_t n8 = 8 / r;
  for (bool ac : {false, true})
    b.add(std::string("bilinear x2 align_corners=") + (ac ? "true" : "false"), "interpolate",
          json{{"mode", "bilinear"}, {"scale_factor", 2.0}, {"align_corners", ac}}, {{"input", {n8, 256 / r, 64, 64}, unit}});
  b.add("nearest x2", "interpolate", json{{"mode", "nearest"}, {"scale_factor", 2.0}}, {{"input", {n8, 256 / r, 64, 64}, unit}});
  b.add("bicubic x2", "interpolate", json{{"mode", "bicubic"}, {"scale_factor", 2.0}, {"align_corners", false}},
        {{"input", {n8, 128 / r, 64, 64}, unit}});
  b.add("trilinear x2", "interpolate", json{{"mode", "trilinear"}, {"scale_factor", 2.0}, {"align_corners", false}},
        {{"input", {1, 32 / r, 32, 32, 32}, unit}});
  b.add("area 128->32", "interpolate", json{{"mode", "area"}, {"size", {32, 32}}}, {{"input", {n8, 64, 128, 128}, unit}});
  return std::move(b.shapes);
}

}  // namespace oplab::bench
