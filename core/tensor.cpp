#include "core/tensor.h"

#include <limits>
#include <sstream>
#include <stdexcept>

namespace oplab {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw std::overflow_error("negative dimension in shape " + shape_str(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      throw std::overflow_error("element count of shape " + shape_str(shape) + " overflows int64");
    n *= d;
  }
  return n;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << ']';
  return os.str();
}

TensorF to_float(const Tensor& t) {
  TensorF f;
  f.shape = t.shape;
  f.data.assign(t.data.begin(), t.data.end());
  return f;
}

Tensor to_double(const TensorF& t) {
  Tensor d;
  d.shape = t.shape;
  d.data.assign(t.data.begin(), t.data.end());
  return d;
}

}  // namespace oplab
