#include "compare/dtype_case.h"

#include <cmath>

#include "core/op_desc.h"
#include "external/dtype_convert.h"

namespace oplab::compare {

bool judged_by_bound(const Backend& b, const std::string& op) { return b.dtype(op) != DType::Float64; }

Tensor quantised_pixels(const Tensor& t) {
  bool pixels = true;
  for (double v : t.data) pixels &= v >= 0 && v <= 255 && v == std::floor(v);
  Tensor q = t;
  if (!pixels)
    for (double& v : q.data) v = round_to_dtype(127.5 + 63.75 * v, DType::UInt8);
  return q;
}

Case dtype_rounded_case(const Case& c, DType t) {
  if (t == DType::Float64) return c;
  Case r = c;
  const OpDesc* desc = nullptr;
  try {
    desc = &op_desc(c.op);
  } catch (const std::exception&) {  // an unknown op: nothing is marked, everything rounds
  }
  if (t == DType::UInt8) {
    // Images of 8-bit pixels: the feature inputs quantised, coordinates and indices kept; a
    // uint8 kernel has no backward.
    for (auto& [name, x] : r.inputs) {
      bool feature = true;
      if (desc)
        for (const InputSpec& s : desc->inputs)
          if (s.name == name) feature = !s.coordinate && s.index_column == -1;
      if (feature) x = quantised_pixels(x);
    }
    r.grad_output.reset();
    return r;
  }
  for (auto& [name, x] : r.inputs) {
    int index_column = -1;
    if (desc)
      for (const InputSpec& s : desc->inputs)
        if (s.name == name) index_column = s.index_column;
    if (index_column == InputSpec::kIndexTensor) continue;
    const int64_t cols = x.shape.empty() ? 1 : x.shape.back();
    for (size_t i = 0; i < x.data.size(); ++i)
      if (index_column < 0 || cols <= 0 || int64_t(i % size_t(cols)) != index_column) x.data[i] = round_to_dtype(x.data[i], t);
  }
  if (r.grad_output)
    for (double& v : r.grad_output->data) v = round_to_dtype(v, t);
  return r;
}

Case case_for(const Backend& b, const Case& c) {
  Case s = b.geometry_as_reference() ? c : dtype_rounded_case(c, b.dtype(c.op));
  if (s.grad_output && !b.computes_grads(c.op)) s.grad_output.reset();
  return s;
}

}  // namespace oplab::compare
