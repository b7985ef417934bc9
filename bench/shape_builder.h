#pragma once
// How an op states its standard benchmark shapes (bench/shapes_<op>.cpp): a registered
// function that adds them to a ShapeBuilder, which draws float32-representable random inputs
// from a generator seeded per op (so an op's inputs, its boxes above all, do not depend on
// which ops come before it) and builds the peer's request beside the case.
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "bench/bench.h"
#include "core/op_traits.h"

namespace oplab::bench {

struct Uniform {
  double low, high;
};

class ShapeBuilder {
 public:
  explicit ShapeBuilder(bool reduced) : reduced_(reduced) {}
  bool reduced() const { return reduced_; }
  // Reseeds the generator from the op's name: called before each op adds its shapes.
  void start_op(const std::string& op);
  int64_t divisor() const { return reduced_ ? 4 : 1; }  // of batch, channels and rois in the reduced set

  // `random`: inputs drawn on both sides; `sent`: inputs sent to the peer as data.
  void add(const std::string& name, const std::string& op, json params,
           const std::vector<std::tuple<std::string, oplab::Shape, Uniform>>& random,
           const std::map<std::string, Tensor>& sent = {});
  // Boxes of 8-200 px on an 800 x 1216 image, in batches 0..N-1 (float32-representable).
  Tensor random_rois(int64_t K, int64_t N);
  // The last shape added (to set its flops).
  BenchShape& last() { return shapes_.back(); }
  std::vector<BenchShape> take() { return std::move(shapes_); }

 private:
  bool reduced_;
  std::mt19937_64 rng_{2026};
  std::vector<BenchShape> shapes_;
};

struct OpBenchShapes {
  static constexpr const char* kLayer = "bench shapes";
  void (*add)(ShapeBuilder&) = nullptr;
};
using OpBenchShapesRegistrar = OpTraits<OpBenchShapes>::Registrar;

}  // namespace oplab::bench
