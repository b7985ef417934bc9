#pragma once
// Dense row-major tensors (NC[D]HW). The reference and the peer work in double;
// the Halide kernels in float. One template keeps the two alike.
#include <cstdint>
#include <string>
#include <vector>

namespace oplab {

using Shape = std::vector<int64_t>;

// Product of the dims; throws std::overflow_error instead of wrapping.
int64_t shape_numel(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[2, 3, 8, 8]"

template <class T>
struct TensorT {
  Shape shape;
  std::vector<T> data;

  TensorT() = default;
  explicit TensorT(Shape s, T fill = T(0)) : shape(std::move(s)), data(size_t(shape_numel(shape)), fill) {}

  int64_t numel() const { return int64_t(data.size()); }
  int rank() const { return int(shape.size()); }
  int64_t dim(int i) const { return shape.at(size_t(i)); }

  // Row-major element access for the ranks the ops use.
  T& at(int64_t a, int64_t b) { return data[size_t(a * shape[1] + b)]; }
  T at(int64_t a, int64_t b) const { return data[size_t(a * shape[1] + b)]; }
  T& at(int64_t a, int64_t b, int64_t c) { return data[size_t((a * shape[1] + b) * shape[2] + c)]; }
  T at(int64_t a, int64_t b, int64_t c) const { return data[size_t((a * shape[1] + b) * shape[2] + c)]; }
  T& at(int64_t a, int64_t b, int64_t c, int64_t d) {
    return data[size_t(((a * shape[1] + b) * shape[2] + c) * shape[3] + d)];
  }
  T at(int64_t a, int64_t b, int64_t c, int64_t d) const {
    return data[size_t(((a * shape[1] + b) * shape[2] + c) * shape[3] + d)];
  }
  T& at(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) {
    return data[size_t((((a * shape[1] + b) * shape[2] + c) * shape[3] + d) * shape[4] + e)];
  }
  T at(int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) const {
    return data[size_t((((a * shape[1] + b) * shape[2] + c) * shape[3] + d) * shape[4] + e)];
  }
};

using Tensor = TensorT<double>;
using TensorF = TensorT<float>;

TensorF to_float(const Tensor& t);
Tensor to_double(const TensorF& t);

}  // namespace oplab
