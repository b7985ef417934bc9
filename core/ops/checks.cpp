#include "core/ops/checks.h"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/echo.h"

namespace oplab::checks {

// One line, capped: a message may quote a shape of 100 000 dims or a long value.
void fail(const std::string& op, const std::string& msg) { throw InvalidCase(one_line(echo(op) + ": " + msg)); }

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
      fail(c.op, "unknown parameter \"" + echo(key) + "\"");
}

void only_inputs(const Case& c, const std::vector<std::string>& required, const std::vector<std::string>& optional) {
  for (const auto& name : required)
    if (!c.has(name)) fail(c.op, "missing input \"" + name + "\"");
  for (const auto& [name, t] : c.inputs)
    if (std::find(required.begin(), required.end(), name) == required.end() &&
        std::find(optional.begin(), optional.end(), name) == optional.end())
      fail(c.op, "unknown input \"" + echo(name) + "\"");
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
  // A tensor with a zero dim holds nothing, but its strides (and the per-axis tables of the
  // kernels) still span the product of the other dims: [0, 1, 2^32, 2^32] would wrap an int32
  // stride and make Halide buffers of negative extent.
  if (shape_span(shape) > kMaxElements)
    fail(op, what + " shape " + shape_str(shape) +
                 " spans more than 2147483647 index positions (its non-zero dims multiplied), beyond the int32 index "
                 "of the kernels");
}

int64_t checked_mul(const std::string& op, const std::string& what, int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    fail(op, what + " = " + std::to_string(a) + "*" + std::to_string(b) + " overflows int64");
  return r;
}

int64_t checked_add(const std::string& op, const std::string& what, int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    fail(op, what + " = " + std::to_string(a) + "+" + std::to_string(b) + " overflows int64");
  return r;
}

int64_t checked_sub(const std::string& op, const std::string& what, int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r))
    fail(op, what + " = " + std::to_string(a) + "-" + std::to_string(b) + " overflows int64");
  return r;
}

void check_int32_param(const std::string& op, const std::string& key, int64_t a, int64_t b) {
  const int64_t lim = std::numeric_limits<int32_t>::max();
  if (a > lim || b > lim || a < -lim || b < -lim)
    fail(op, key + "=[" + std::to_string(a) + ", " + std::to_string(b) +
                 "] is beyond the int32 range of the kernels' parameters (2147483647)");
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

// An integer that int64 holds: nlohmann reads 18446744073709551615 as an unsigned, which
// get<int64_t>() would wrap to -1 (an adaptive sampling_ratio, say).
static bool is_int64(const json& v) {
  return v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX));
}

static bool has_huge_integer(const json& v) {
  if (v.is_number_integer()) return !is_int64(v);
  if (v.is_array())
    for (const json& e : v)
      if (e.is_number_integer() && !is_int64(e)) return true;
  return false;
}

std::pair<int64_t, int64_t> int_pair(const Case& c, const std::string& key, std::pair<int64_t, int64_t> dflt) {
  const json* v = param(c, key);
  if (!v) return dflt;
  if (is_int64(*v)) return {v->get<int64_t>(), v->get<int64_t>()};
  if (v->is_array() && v->size() == 2 && is_int64((*v)[0]) && is_int64((*v)[1]))
    return {(*v)[0].get<int64_t>(), (*v)[1].get<int64_t>()};
  fail(c.op, key + "=" + echo_json(*v) + (has_huge_integer(*v) ? " is beyond the int64 range" : " must be an integer or a pair of integers"));
}

int64_t integer(const Case& c, const std::string& key, int64_t dflt) {
  const json* v = param(c, key);
  if (!v) return dflt;
  if (!is_int64(*v)) fail(c.op, key + "=" + echo_json(*v) + (has_huge_integer(*v) ? " is beyond the int64 range" : " must be an integer"));
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
  fail(c.op, key + "=" + echo_json(*v) + " must be a number");
}

bool boolean(const Case& c, const std::string& key, bool dflt) {
  const json* v = param(c, key);
  if (!v) return dflt;
  if (!v->is_boolean()) fail(c.op, key + "=" + echo_json(*v) + " must be true or false");
  return v->get<bool>();
}

std::string text(const Case& c, const std::string& key, const std::string& dflt) {
  const json* v = param(c, key);
  if (!v) return dflt;
  if (!v->is_string()) fail(c.op, key + "=" + echo_json(*v) + " must be a string");
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

namespace oplab::checks {

void check_roi_extent(const std::string& op, const Tensor& rois, double scale) {
  for (int64_t k = 0; k < rois.dim(0); ++k)
    for (int j = 1; j < 5; ++j) {
      const double v = rois.at(k, j);
      const std::string where = "rois[" + std::to_string(k) + "][" + std::to_string(j) + "]";
      if (std::fabs(v) > kMaxRoiCoordinate)
        fail(op, where + "=" + num_str(v) + " lies beyond +-268435456 (2^28) pixels, where the kernels' int32 and "
                                            "float32 box arithmetic breaks down");
      if (std::fabs(v * scale) > kMaxRoiCoordinate)
        fail(op, where + "*spatial_scale=" + num_str(v * scale) +
                     " lies beyond +-268435456 (2^28) pixels, where the kernels' int32 and float32 box arithmetic "
                     "breaks down");
    }
}

RoiAxes max_roi_grid(const Tensor& rois, double scale, int64_t PH, int64_t PW, int64_t sampling_ratio,
                     bool min_one_pixel) {
  if (sampling_ratio > 0) return {double(sampling_ratio), double(sampling_ratio)};
  RoiAxes g;
  for (int64_t k = 0; k < rois.dim(0); ++k) {
    double eh = std::fabs(rois.at(k, 4) - rois.at(k, 2)) * scale, ew = std::fabs(rois.at(k, 3) - rois.at(k, 1)) * scale;
    if (min_one_pixel) eh = std::max(eh, 1.0), ew = std::max(ew, 1.0);
    g.h = std::max(g.h, std::ceil(eh / double(PH)));
    g.w = std::max(g.w, std::ceil(ew / double(PW)));
  }
  return g;
}

RoiAxes max_pool_bin(const Tensor& rois, double scale, int64_t PH, int64_t PW, int64_t H, int64_t W) {
  RoiAxes b;
  for (int64_t k = 0; k < rois.dim(0); ++k) {
    const double eh = std::fabs(rois.at(k, 4) - rois.at(k, 2)) * scale + 2.0;  // rounding both corners: +1, inclusive end: +1
    const double ew = std::fabs(rois.at(k, 3) - rois.at(k, 1)) * scale + 2.0;
    b.h = std::max(b.h, std::min(std::ceil(eh / double(PH)) + 1.0, double(H)));
    b.w = std::max(b.w, std::min(std::ceil(ew / double(PW)) + 1.0, double(W)));
  }
  return b;
}

ResourceUse case_tensors(const Case& c, const Shape& out) {
  ResourceUse u;
  for (const auto& [name, t] : c.inputs) u.tensors.push_back({"input " + echo(name), t.shape});
  if (c.grad_output) u.tensors.push_back({"grad_output", c.grad_output->shape});
  u.tensors.push_back({"output", out});
  return u;
}

namespace {

// A double count as a dimension (saturated; the limit check reports it).
int64_t as_dim(double v) { return v >= 4e18 ? int64_t(4e18) : v < 1 ? 1 : int64_t(v); }

std::string grid_str(const RoiAxes& g, int64_t sampling_ratio) {
  return "sampling grid " + num_str(g.h) + "x" + num_str(g.w) +
         (sampling_ratio > 0 ? " from sampling_ratio=" + std::to_string(sampling_ratio) : " adaptive, from the largest roi");
}

}  // namespace

void enforce_roi_sampling(const Case& c, const Shape& out, int64_t K, int64_t channels, int64_t PH, int64_t PW,
                          RoiAxes grid, int64_t sampling_ratio) {
  // Limits are checked in this order so that the message names the cause: the bin, then the
  // tensors (a per-sample table of rois x bins x grid per axis), then the total.
  ResourceUse bins;
  const double gh = std::max(grid.h, 1.0), gw = std::max(grid.w, 1.0);
  bins.bin_samples = gh * gw;
  bins.bin_what = grid_str(grid, sampling_ratio);
  enforce_resource_limits(c.op, bins);
  ResourceUse u = case_tensors(c, out);
  if (K > 0) {
    u.tensors.push_back({"per-sample table (rois, bins, grid rows)", {K, PH, as_dim(gh)}});
    u.tensors.push_back({"per-sample table (rois, bins, grid columns)", {K, PW, as_dim(gw)}});
  }
  u.work = double(K) * double(channels) * double(PH) * double(PW) * gh * gw;
  u.work_what = "rois x channels x bins x samples per bin, " + grid_str(grid, sampling_ratio);
  enforce_resource_limits(c.op, u);
}

void enforce_roi_pooling(const Case& c, const Shape& out, int64_t K, int64_t channels, int64_t PH, int64_t PW, RoiAxes bin) {
  ResourceUse u = case_tensors(c, out);
  u.work = double(K) * double(channels) * double(PH) * double(PW) * std::max(bin.h, 1.0) * std::max(bin.w, 1.0);
  u.work_what = "rois x channels x bins x pixels per bin, bins of up to " + num_str(bin.h) + "x" + num_str(bin.w) + " pixels";
  enforce_resource_limits(c.op, u);
}

}  // namespace oplab::checks
