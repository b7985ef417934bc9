#pragma once
// Small helpers shared by the per-op parsers: each throws InvalidCase with a one-line
// message that starts with the op name and names the argument and its value.
#include <string>
#include <utility>
#include <vector>

#include "core/case.h"
#include "core/limits.h"

namespace oplab::checks {

// The kernels index with int32 (Halide buffers): refuse rather than wrap.
constexpr int64_t kMaxElements = 2147483647;

[[noreturn]] void fail(const std::string& op, const std::string& msg);

// Params: only the listed keys may appear.
void only_params(const Case& c, const std::vector<std::string>& allowed);
// Inputs: every required one present, nothing unknown.
void only_inputs(const Case& c, const std::vector<std::string>& required, const std::vector<std::string>& optional);

const Tensor& input_of_rank(const Case& c, const std::string& name, int rank);
// Element count within int64 and within the int32 index of the kernels, and so is the span of
// a tensor with a zero dim (its non-zero dims multiplied: the strides still need them).
void check_elements(const std::string& op, const std::string& what, const Shape& shape);

// a*b, a+b, a-b, or fail "<what> = a*b overflows int64" (every size the parsers derive).
int64_t checked_mul(const std::string& op, const std::string& what, int64_t a, int64_t b);
int64_t checked_add(const std::string& op, const std::string& what, int64_t a, int64_t b);
int64_t checked_sub(const std::string& op, const std::string& what, int64_t a, int64_t b);
// A pair of integer parameters the kernels take as int32 (stride, padding, dilation).
void check_int32_param(const std::string& op, const std::string& key, int64_t a, int64_t b);
void check_grad_output(const Case& c, const Shape& out_shape);

// An int or a pair [a, b] of ints; `dflt` when absent.
std::pair<int64_t, int64_t> int_pair(const Case& c, const std::string& key, std::pair<int64_t, int64_t> dflt);
int64_t integer(const Case& c, const std::string& key, int64_t dflt);
double number(const Case& c, const std::string& key, double dflt);
bool boolean(const Case& c, const std::string& key, bool dflt);
std::string text(const Case& c, const std::string& key, const std::string& dflt);

// rois [K,5]: integer batch index in [0,N), finite coordinates.
void check_rois(const std::string& op, const Tensor& rois, int64_t N);
// output_size > 0 (int or pair), spatial_scale finite > 0.
std::pair<int64_t, int64_t> output_size(const Case& c);
double spatial_scale(const Case& c);

std::string num_str(double v);

// ---- finite but extreme rois, and what the RoI ops ask for (core/limits.h) ----

// How far from the origin a roi coordinate may lie, before and after scaling: 2^28 pixels.
// Beyond it the kernels' box arithmetic breaks down (roi_pool rounds corners into int32 and
// subtracts them; the adaptive grid is an int; the float32 kernels read the rois as float),
// and far beyond it x * spatial_scale overflows to inf.
constexpr double kMaxRoiCoordinate = 268435456.0;
void check_roi_extent(const std::string& op, const Tensor& rois, double scale);

// Per-axis sizes over all rois, in double (nothing overflows): the largest sampling grid, or
// the largest pooled bin in pixels.
struct RoiAxes {
  double h = 0, w = 0;
};
// RoIAlign-style grid: sampling_ratio when > 0, else ceil(extent / bins) with extent
// |x2 - x1| * scale (at least 1 when `min_one_pixel`, legacy roi_align). An upper bound of the
// grid the reference and the kernels take (reference/roi_geometry.h).
RoiAxes max_roi_grid(const Tensor& rois, double scale, int64_t PH, int64_t PW, int64_t sampling_ratio, bool min_one_pixel);
// Pooling ops: the most pixels one bin spans along each axis, ceil(extent / bins) + 1 with
// extent |x2 - x1| * scale + 1, at most the image size (reference/pool_geometry.h).
RoiAxes max_pool_bin(const Tensor& rois, double scale, int64_t PH, int64_t PW, int64_t H, int64_t W);

// The tensors every case asks for: its inputs, grad_output, the output and (with
// grad_output) the gradients, which have the inputs' shapes.
ResourceUse case_tensors(const Case& c, const Shape& out);
// The RoIAlign-style ops (roi_align, deform_roi_pool, ps_roi_align): K rois of `channels`
// output channels each, PH x PW bins, grid g. Checks the samples per bin, the per-sample tables
// the kernels build, the tensors and the work (K x channels x PH x PW x gh x gw).
void enforce_roi_sampling(const Case& c, const Shape& out, int64_t K, int64_t channels, int64_t PH, int64_t PW,
                          RoiAxes grid, int64_t sampling_ratio);
// The pooling ops (roi_pool, ps_roi_pool): work K x channels x PH x PW x bin pixels.
void enforce_roi_pooling(const Case& c, const Shape& out, int64_t K, int64_t channels, int64_t PH, int64_t PW, RoiAxes bin);  // shortest form that reads back the same ("2.5", "nan")

}  // namespace oplab::checks
