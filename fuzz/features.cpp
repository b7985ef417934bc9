#include "fuzz/features.h"

#include <algorithm>
#include <cmath>

#include "fuzz/op_fuzz.h"

namespace oplab::fuzz {

// Edges every op has: the feature map one value everywhere (every max a tie), one of its
// values NaN or +-Inf (gen_case, sample.cpp), and spatial sizes of 1 or an odd prime >= 5.
static void common_features(const Case& c, std::set<std::string>& f) {
  for (const char* map : {"input", "value"})  // ms_deform_attn's feature map is its value
    if (const Tensor* t = c.opt(map))
      if (std::any_of(t->data.begin(), t->data.end(), [](double v) { return !std::isfinite(v); }))
        f.insert("non-finite feature value");
  const Tensor* x = c.opt("input");
  if (!x) return;
  if (x->numel() > 1 && std::all_of(x->data.begin(), x->data.end(), [&](double v) { return v == x->data[0]; }))
    f.insert("constant input (ties for max)");
  for (int d = 2; d < x->rank(); ++d) {
    const int64_t n = x->dim(d);
    if (n == 1) f.insert("spatial size 1");
    if (n == 5 || n == 7 || n == 11 || n == 13) f.insert("odd prime spatial size");
  }
}

std::set<std::string> case_features(const Case& c) {
  std::set<std::string> f;
  common_features(c, f);
  op_fuzz(c.op).features(c, f);
  return f;
}

}  // namespace oplab::fuzz
