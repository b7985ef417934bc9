// The standard shapes: each op states its own (bench/shapes_<op>.cpp, after DESIGN.md's
// standard shapes); they are listed in the ops' display order. The reduced set keeps every
// shape's kind but divides batch, channels and rois.
#include "bench/shape_builder.h"
#include "core/case_io.h"
#include "core/op_desc.h"

namespace oplab::bench {

namespace {

Tensor random_tensor(const oplab::Shape& shape, Uniform u, std::mt19937_64& rng) {
  Tensor t(shape);
  std::uniform_real_distribution<double> d(u.low, u.high);
  for (double& v : t.data) v = double(float(d(rng)));  // representable in float32: both sides see the same values
  return t;
}

}  // namespace

Tensor ShapeBuilder::random_rois(int64_t K, int64_t N) {
  Tensor rois({K, 5});
  std::uniform_real_distribution<double> side(8, 200), unit(0, 1);
  for (int64_t k = 0; k < K; ++k) {
    const double w = side(rng_), h = side(rng_);
    const double x1 = unit(rng_) * (1216 - w), y1 = unit(rng_) * (800 - h);
    rois.at(k, 0) = double(int64_t(unit(rng_) * double(N)) % N);
    rois.at(k, 1) = double(float(x1));
    rois.at(k, 2) = double(float(y1));
    rois.at(k, 3) = double(float(x1 + w));
    rois.at(k, 4) = double(float(y1 + h));
  }
  return rois;
}

void ShapeBuilder::add(const std::string& name, const std::string& op, json params,
                       const std::vector<std::tuple<std::string, oplab::Shape, Uniform>>& random,
                       const std::map<std::string, Tensor>& sent) {
  BenchShape s;
  s.name = name;
  s.c.op = op;
  s.c.params = params;
  json random_inputs = json::object(), peer_inputs = json::object();
  for (const auto& [in, shape, u] : random) {
    s.c.inputs[in] = random_tensor(shape, u, rng_);
    random_inputs[in] = {{"shape", shape}, {"low", u.low}, {"high", u.high}};
  }
  for (const auto& [in, t] : sent) {
    s.c.inputs[in] = t;
    peer_inputs[in] = tensor_to_json(t);
  }
  const oplab::Shape out = op_desc(op).validate(s.c);
  s.bytes = 4.0 * double(shape_numel(out));
  for (const auto& [in, t] : s.c.inputs) s.bytes += 4.0 * double(t.numel());
  json grads = json::array();  // the inputs whose gradients the backward computes
  for (const auto& in : op_desc(op).inputs)
    if (in.differentiable && s.c.has(in.name)) grads.push_back(in.name);
  s.peer_request = {{"case", {{"op", op}, {"params", params}, {"inputs", peer_inputs}}},
                    {"random_inputs", random_inputs},
                    {"grads", grads}};
  shapes_.push_back(std::move(s));
}

void ShapeBuilder::start_op(const std::string& op) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the name
  for (unsigned char ch : op) h = (h ^ ch) * 1099511628211ull;
  rng_.seed(2026 ^ h);
}

std::vector<BenchShape> standard_shapes(bool reduced) {
  ShapeBuilder b(reduced);
  for (const auto& d : all_ops()) {
    b.start_op(d.name);
    OpTraits<OpBenchShapes>::of(d.name).add(b);
  }
  return b.take();
}

}  // namespace oplab::bench
