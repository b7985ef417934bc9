#include "fuzz/case_edit.h"

#include <cmath>

namespace oplab::fuzz {

bool all_finite(const Case& c) {
  for (const auto& [name, t] : c.inputs)
    for (double v : t.data)
      if (!std::isfinite(v)) return false;
  if (c.grad_output)
    for (double v : c.grad_output->data)
      if (!std::isfinite(v)) return false;
  return true;
}

Tensor other_tensor(const Shape& shape, uint64_t salt) {
  Tensor t(shape);
  uint64_t x = salt * 0x9e3779b97f4a7c15ULL + 1;
  for (double& v : t.data) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
    v = double(int64_t(x % 17) - 8) / 4.0;
  }
  return t;
}

Tensor axpby(double a, const Tensor& x, double b, const Tensor& y) {
  Tensor out(x.shape);
  for (size_t i = 0; i < out.data.size(); ++i) out.data[i] = a * x.data[i] + b * y.data[i];
  return out;
}

Tensor abs_of(const Tensor& t) {
  Tensor out = t;
  for (double& v : out.data) v = std::fabs(v);
  return out;
}

double dot(const Tensor& a, const Tensor& b) {
  long double s = 0;
  for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i) s += (long double)a.data[i] * b.data[i];
  return double(s);
}

Tensor permute_dim(const Tensor& t, int dim, const std::vector<int64_t>& perm) {
  Tensor out(t.shape);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= t.shape[size_t(d)];
  for (size_t d = size_t(dim) + 1; d < t.shape.size(); ++d) inner *= t.shape[d];
  const int64_t n = t.shape[size_t(dim)];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k)
        out.data[size_t((o * n + perm[size_t(i)]) * inner + k)] = t.data[size_t((o * n + i) * inner + k)];
  return out;
}

std::vector<int64_t> rotate_within(const std::vector<int64_t>& block_of) {
  const int64_t n = int64_t(block_of.size());
  std::vector<int64_t> perm(static_cast<size_t>(n));
  int64_t start = 0;
  while (start < n) {
    int64_t end = start;
    while (end < n && block_of[size_t(end)] == block_of[size_t(start)]) ++end;
    for (int64_t i = start; i < end; ++i) perm[size_t(i)] = i + 1 < end ? i + 1 : start;
    start = end;
  }
  return perm;
}

std::vector<int64_t> rotate_all(int64_t n) { return rotate_within(std::vector<int64_t>(size_t(n), 0)); }

}  // namespace oplab::fuzz
