#pragma once
// Small helpers shared by the per-op parsers: each throws InvalidCase with a one-line
// message that starts with the op name and names the argument and its value.
#include <string>
#include <utility>
#include <vector>

#include "core/case.h"

namespace oplab::checks {

// The kernels index with int32 (Halide buffers): refuse rather than wrap.
constexpr int64_t kMaxElements = 2147483647;

[[noreturn]] void fail(const std::string& op, const std::string& msg);

// Params: only the listed keys may appear.
void only_params(const Case& c, const std::vector<std::string>& allowed);
// Inputs: every required one present, nothing unknown.
void only_inputs(const Case& c, const std::vector<std::string>& required, const std::vector<std::string>& optional);

const Tensor& input_of_rank(const Case& c, const std::string& name, int rank);
void check_elements(const std::string& op, const std::string& what, const Shape& shape);
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

std::string num_str(double v);  // shortest form that reads back the same ("2.5", "nan")

}  // namespace oplab::checks
