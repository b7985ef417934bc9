// ms_deform_attn (SPEC §13): shapes, the level table and the SPEC §7 checks. spatial_shapes
// and level_start_index are carried as tensors of doubles (the case format has no integer
// tensors), so every entry must be an exact integer; the level table must describe value
// exactly (start[l] the exclusive prefix sum of H*W, S the total), since a kernel indexes
// value[n, start[l] + h*W[l] + w] without checking.
#include <cmath>
#include <string>

#include "core/op_desc.h"
#include "core/ops/checks.h"
#include "core/params.h"

namespace oplab {

using namespace checks;

namespace {

// An entry of an index tensor: an exact integer in [lo, 2^31 - 1] (the kernels take them as
// int32), named as `what[i]` or `what[i][j]` in the message.
int64_t index_entry(const std::string& op, const std::string& where, double v, int64_t lo) {
  if (!(v == std::floor(v)) || !std::isfinite(v))
    fail(op, where + "=" + num_str(v) + " must be an integer");
  if (v < double(lo) || v > double(kMaxElements))
    fail(op, where + "=" + num_str(v) + " must be in [" + std::to_string(lo) + ", 2147483647]");
  return int64_t(v);
}

void expect_shape(const std::string& op, const std::string& name, const Tensor& t, const Shape& want) {
  if (t.shape != want)
    fail(op, name + " shape " + shape_str(t.shape) + " must be " + shape_str(want));
}

}  // namespace

MsDeformAttnParams parse_ms_deform_attn(const Case& c) {
  const std::string& op = c.op;
  only_params(c, {});
  only_inputs(c, {"value", "spatial_shapes", "level_start_index", "sampling_locations", "attention_weights"}, {});
  const Tensor& value = input_of_rank(c, "value", 4);
  const Tensor& shapes = input_of_rank(c, "spatial_shapes", 2);
  const Tensor& starts = input_of_rank(c, "level_start_index", 1);
  const Tensor& loc = input_of_rank(c, "sampling_locations", 6);
  const Tensor& aw = input_of_rank(c, "attention_weights", 5);

  MsDeformAttnParams p;
  p.N = value.dim(0), p.S = value.dim(1), p.M = value.dim(2), p.Dh = value.dim(3);
  if (shapes.dim(1) != 2) fail(op, "spatial_shapes shape " + shape_str(shapes.shape) + " must be [L, 2] (H, W per level)");
  p.L = shapes.dim(0);
  if (p.L < 1) fail(op, "spatial_shapes has no level (L=0); at least one is needed");
  expect_shape(op, "level_start_index", starts, {p.L});
  p.Lq = loc.dim(1), p.P = loc.dim(4);
  expect_shape(op, "sampling_locations", loc, {p.N, p.Lq, p.M, p.L, p.P, 2});
  expect_shape(op, "attention_weights", aw, {p.N, p.Lq, p.M, p.L, p.P});

  // The level table: H, W >= 1, each start the sum of the sizes before it, their total S.
  int64_t total = 0;
  for (int64_t l = 0; l < p.L; ++l) {
    const std::string at = "spatial_shapes[" + std::to_string(l) + "]";
    p.H.push_back(index_entry(op, at + "[0]", shapes.at(l, 0), 1));
    p.W.push_back(index_entry(op, at + "[1]", shapes.at(l, 1), 1));
    const int64_t start = index_entry(op, "level_start_index[" + std::to_string(l) + "]", starts.data[size_t(l)], 0);
    if (start != total)
      fail(op, "level_start_index[" + std::to_string(l) + "]=" + std::to_string(start) +
                   " must be the sum of H*W of the levels before it, " + std::to_string(total));
    p.start.push_back(start);
    total = checked_add(op, "sum of H*W over levels", total, checked_mul(op, at + " H*W", p.H.back(), p.W.back()));
  }
  if (total != p.S)
    fail(op, "value.shape[1]=" + std::to_string(p.S) + " must equal the sum of H*W over the levels, " + std::to_string(total));
  const Shape out = p.output_shape();
  checked_mul(op, "M*Dh", p.M, p.Dh);
  check_grad_output(c, out);

  // Resource policy (core/limits.h): every (n, q, m, l, p) reads four corners of Dh channels.
  ResourceUse use = case_tensors(c, out);
  use.work = double(p.N) * double(p.Lq) * double(p.M) * double(p.L) * double(p.P) * double(p.Dh) * 4.0;
  use.work_what = "N*Lq*M*L*P*Dh*4 (four corners per sampling point and channel)";
  enforce_resource_limits(op, use);
  return p;
}

namespace {
// value, sampling_locations and attention_weights get gradients; the two index tensors do not.
// sampling_locations and spatial_shapes are coordinates: magnitude cases keep their sign, and
// spatial_shapes (the levels' sizes in pixels) sets the float32 bound's coordinate scale, since
// the locations themselves are normalised to [0, 1].
const OpRegistrar kMsDeformAttn{"ms_deform_attn",
                                {"ms_deform_attn", 80,
                                 {{"value", true, true},
                                  {"spatial_shapes", true, false, true},
                                  {"level_start_index", true, false},
                                  {"sampling_locations", true, true, true},
                                  {"attention_weights", true, true}},
                                 typed_parser(parse_ms_deform_attn)}};
}  // namespace

}  // namespace oplab
