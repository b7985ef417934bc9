#pragma once
// Shared by the peer tests: tensors by hand, a backend's divergence by name, and the proof that
// a named divergence holds (the reference on its equivalent case reproduces the peer).
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/backend.h"
#include "core/case.h"

namespace oplab::testing {

inline Tensor T(Shape s, std::vector<double> d) {
  Tensor t;
  t.shape = std::move(s);
  t.data = std::move(d);
  return t;
}

inline Case interp(Shape s, std::vector<double> d, json params) {
  Case c;
  c.op = "interpolate";
  c.params = std::move(params);
  c.inputs["input"] = T(std::move(s), std::move(d));
  return c;
}

inline const Divergence& divergence(const Backend& b, const std::string& name) {
  for (const Divergence& d : b.divergences())
    if (d.name == name) return d;
  throw std::logic_error(b.name() + " has no divergence " + name);
}

inline double max_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape, b.shape);
  double m = 0;
  for (size_t i = 0; i < a.data.size() && i < b.data.size(); ++i) m = std::max(m, std::fabs(a.data[i] - b.data[i]));
  return m;
}

}  // namespace oplab::testing
