#include "core/ops/checks.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <sstream>

namespace oplab::checks {

void fail(const std::string& op, const std::string& msg) { throw InvalidCase(op + ": " + msg); }

std::string num_str(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Whole numbers read best without a fraction ("rois[3][0]=2"), as in SPEC §1.
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(int64_t(v));
  return json(v).dump();
}

void only_params(const Case& c, const std::vector<std::string>& allowed) {
  for (const auto& [key, v] : c.params.items())
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      fail(c.op, "unknown parameter \"" + key + "\"");
}

void only_inputs(const Case& c, const std::vector<std::string>& required, const std::vector<std::string>& optional) {
  for (const auto& name : required)
    if (!c.has(name)) fail(c.op, "missing input \"" + name + "\"");
  for (const auto& [name, t] : c.inputs)
    if (std::find(required.begin(), required.end(), name) == required.end() &&
        std::find(optional.begin(), optional.end(), name) == optional.end())
      fail(c.op, "unknown input \"" + name + "\"");
}

void check_elements(const std::string& op, const std::string& what, const Shape& shape) {
  int64_t n = 0;
  try {
    n = shape_numel(shape);
  } catch (const std::overflow_error&) {
    fail(op, what + " shape " + shape_str(shape) + " has more elements than int64 can count");
  }
  if (n > kMaxElements)
    fail(op, what + " shape " + shape_str(shape) + " has " + std::to_string(n) +
                 " elements, more than the int32 index of the kernels allows (2147483647)");
}

const Tensor& input_of_rank(const Case& c, const std::string& name, int rank) {
  const Tensor& t = c.in(name);
  if (t.rank() != rank)
    fail(c.op, name + " must have rank " + std::to_string(rank) + ", got shape " + shape_str(t.shape));
  check_elements(c.op, name, t.shape);
  return t;
}

void check_grad_output(const Case& c, const Shape& out_shape) {
  check_elements(c.op, "output", out_shape);
  if (c.grad_output && c.grad_output->shape != out_shape)
    fail(c.op, "grad_output shape " + shape_str(c.grad_output->shape) + " must equal the output shape " +
                   shape_str(out_shape));
}

static const json* param(const Case& c, const std::string& key) {
  auto it = c.params.find(key);
  if (it == c.params.end() || it->is_null()) return nullptr;
  return &*it;
}

std::pair<int64_t, int64_t> int_pair(const Case& c, const std::string& key, std::pair<int64_t, int64_t> dflt) {
  const json* v = param(c, key);
  if (!v) return dflt;
  if (v->is_number_integer()) return {v->get<int64_t>(), v->get<int64_t>()};
  if (v->is_array() && v->size() == 2 && (*v)[0].is_number_integer() && (*v)[1].is_number_integer())
    return {(*v)[0].get<int64_t>(), (*v)[1].get<int64_t>()};
  fail(c.op, key + "=" + v->dump() + " must be an integer or a pair of integers");
}

int64_t integer(const Case& c, const std::string& key, int64_t dflt) {
  const json* v = param(c, key);
  if (!v) return dflt;
  if (!v->is_number_integer()) fail(c.op, key + "=" + v->dump() + " must be an integer");
  return v->get<int64_t>();
}

double number(const Case& c, const std::string& key, double dflt) {
  const json* v = param(c, key);
  if (!v) return dflt;
  if (v->is_number()) return v->get<double>();
  if (v->is_string()) {
    const auto& s = v->get_ref<const std::string&>();
    if (s == "nan") return std::nan("");
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
  }
  fail(c.op, key + "=" + v->dump() + " must be a number");
}

bool boolean(const Case& c, const std::string& key, bool dflt) {
  const json* v = param(c, key);
  if (!v) return dflt;
  if (!v->is_boolean()) fail(c.op, key + "=" + v->dump() + " must be true or false");
  return v->get<bool>();
}

std::string text(const Case& c, const std::string& key, const std::string& dflt) {
  const json* v = param(c, key);
  if (!v) return dflt;
  if (!v->is_string()) fail(c.op, key + "=" + v->dump() + " must be a string");
  return v->get<std::string>();
}

void check_rois(const std::string& op, const Tensor& rois, int64_t N) {
  if (rois.rank() != 2 || rois.dim(1) != 5)
    fail(op, "rois must have shape [K, 5], got " + shape_str(rois.shape));
  for (int64_t k = 0; k < rois.dim(0); ++k) {
    const double b = rois.at(k, 0);
    const std::string where = "rois[" + std::to_string(k) + "]";
    if (!std::isfinite(b) || b != std::floor(b))
      fail(op, where + "[0]=" + num_str(b) + " is not an integer batch index");
    if (b < 0 || b >= double(N))
      fail(op, where + "[0]=" + num_str(b) + " is not a batch index of input with N=" + std::to_string(N));
    for (int j = 1; j < 5; ++j)
      if (!std::isfinite(rois.at(k, j)))
        fail(op, where + "[" + std::to_string(j) + "]=" + num_str(rois.at(k, j)) + " is not a finite coordinate");
  }
}

std::pair<int64_t, int64_t> output_size(const Case& c) {
  if (!param(c, "output_size")) fail(c.op, "missing parameter output_size");
  auto [ph, pw] = int_pair(c, "output_size", {0, 0});
  if (ph <= 0 || pw <= 0)
    fail(c.op, "output_size=[" + std::to_string(ph) + ", " + std::to_string(pw) + "] must be positive");
  return {ph, pw};
}

double spatial_scale(const Case& c) {
  const double s = number(c, "spatial_scale", 1.0);
  if (!std::isfinite(s) || s <= 0) fail(c.op, "spatial_scale=" + num_str(s) + " must be finite and > 0");
  return s;
}

}  // namespace oplab::checks
