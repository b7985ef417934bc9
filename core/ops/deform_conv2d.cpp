// deform_conv2d: parameters, derived sizes and the SPEC §7 checks.
#include <cmath>
#include <tuple>

#include "core/op_desc.h"
#include "core/ops/checks.h"
#include "core/params.h"

namespace oplab {

using namespace checks;

DeformConvParams parse_deform_conv2d(const Case& c) {
  const std::string& op = c.op;
  only_params(c, {"stride", "padding", "dilation"});
  only_inputs(c, {"input", "offset", "weight"}, {"mask", "bias"});
  const Tensor& x = input_of_rank(c, "input", 4);
  const Tensor& off = input_of_rank(c, "offset", 4);
  const Tensor& w = input_of_rank(c, "weight", 4);

  DeformConvParams p;
  std::tie(p.sh, p.sw) = int_pair(c, "stride", {1, 1});
  std::tie(p.ph, p.pw) = int_pair(c, "padding", {0, 0});
  std::tie(p.dh, p.dw) = int_pair(c, "dilation", {1, 1});
  if (p.sh <= 0 || p.sw <= 0) fail(op, "stride=[" + std::to_string(p.sh) + ", " + std::to_string(p.sw) + "] must be positive");
  if (p.ph < 0 || p.pw < 0) fail(op, "padding=[" + std::to_string(p.ph) + ", " + std::to_string(p.pw) + "] must be >= 0");
  if (p.dh <= 0 || p.dw <= 0) fail(op, "dilation=[" + std::to_string(p.dh) + ", " + std::to_string(p.dw) + "] must be positive");

  p.N = x.dim(0), p.C = x.dim(1), p.H = x.dim(2), p.W = x.dim(3);
  p.Co = w.dim(0), p.kh = w.dim(2), p.kw = w.dim(3);
  const int64_t cg = w.dim(1);
  if (p.kh <= 0 || p.kw <= 0) fail(op, "weight shape " + shape_str(w.shape) + " has an empty kernel");
  if (cg <= 0 || p.C % cg != 0)
    fail(op, "weight.shape[1]=" + std::to_string(cg) + " does not divide input channels C=" + std::to_string(p.C));
  p.G = p.C / cg;
  if (p.G == 0)  // C = 0: no group to divide by (torchvision divides by it too)
    fail(op, "input channels C=0 give weight groups G=0 (C / weight.shape[1]); at least one channel is needed");
  if (p.Co % p.G != 0)
    fail(op, "weight groups G=" + std::to_string(p.G) + " do not divide output channels " + std::to_string(p.Co));
  // Every size derived below is computed with checked arithmetic: a hostile case (a kernel of
  // 2^32 x 2^32 with Co = 0, a dilation of 2^62) would otherwise wrap K to 0 (a division by
  // zero) or the output size to 1 (accepted).
  const int64_t K = checked_mul(op, "kh*kw", p.kh, p.kw);
  const int64_t K2 = checked_mul(op, "2*kh*kw", 2, K);
  if (off.dim(1) == 0 || off.dim(1) % K2 != 0)
    fail(op, "offset.shape[1]=" + std::to_string(off.dim(1)) + " is not a positive multiple of 2*kh*kw=" + std::to_string(K2));
  p.D = off.dim(1) / K2;
  if (p.C % p.D != 0)
    fail(op, "offset groups D=" + std::to_string(p.D) + " do not divide input channels C=" + std::to_string(p.C));

  // C++ integer division truncates toward zero: H + 2p a little short of the dilated
  // kernel still gives Ho = 1 when the stride exceeds the deficit (SPEC §8).
  auto out_size = [&](int64_t in, int64_t pad, int64_t dil, int64_t k, int64_t stride, const char* axis) {
    const std::string a = axis;
    const int64_t padded = checked_add(op, a + "+2*padding", in, checked_mul(op, "2*padding", 2, pad));
    const int64_t span = checked_add(op, "dilation*(kernel-1)+1", checked_mul(op, "dilation*(kernel-1)", dil, k - 1), 1);
    return checked_sub(op, a + "+2*padding-(dilation*(kernel-1)+1)", padded, span) / stride + 1;
  };
  p.Ho = out_size(p.H, p.ph, p.dh, p.kh, p.sh, "H");
  p.Wo = out_size(p.W, p.pw, p.dw, p.kw, p.sw, "W");
  if (p.Ho <= 0 || p.Wo <= 0)
    fail(op, "output size Ho=" + std::to_string(p.Ho) + ", Wo=" + std::to_string(p.Wo) + " must be positive (input " +
                 shape_str(x.shape) + ", kernel " + std::to_string(p.kh) + "x" + std::to_string(p.kw) + ")");
  // The kernels take stride, padding and dilation as int32 (Halide parameters).
  check_int32_param(op, "stride", p.sh, p.sw);
  check_int32_param(op, "padding", p.ph, p.pw);
  check_int32_param(op, "dilation", p.dh, p.dw);

  const int64_t DK = checked_mul(op, "D*kh*kw", p.D, K);
  const Shape off_want{p.N, checked_mul(op, "2*D*kh*kw", 2, DK), p.Ho, p.Wo};
  if (off.shape != off_want) fail(op, "offset shape " + shape_str(off.shape) + " must be " + shape_str(off_want));
  if (const Tensor* m = c.opt("mask")) {
    const Shape want{p.N, DK, p.Ho, p.Wo};
    if (m->shape != want) fail(op, "mask shape " + shape_str(m->shape) + " must be " + shape_str(want));
    p.has_mask = true;
  }
  if (const Tensor* b = c.opt("bias")) {
    if (b->shape != Shape{p.Co}) fail(op, "bias shape " + shape_str(b->shape) + " must be [" + std::to_string(p.Co) + "]");
    p.has_bias = true;
  }
  // The unfolded columns [C*kh*kw, Ho*Wo] are what a kernel indexes at most.
  check_elements(op, "column buffer", {checked_mul(op, "C*kh*kw", p.C, K), checked_mul(op, "Ho*Wo", p.Ho, p.Wo)});
  check_grad_output(c, p.output_shape());

  // Resource policy (core/limits.h): every output element sums kh*kw taps of C/G channels, and
  // every (n, ho, wo) samples kh*kw points of C channels (4 reads each).
  ResourceUse use = case_tensors(c, p.output_shape());
  const double positions = double(p.N) * double(p.Ho) * double(p.Wo) * double(K);
  use.work = positions * double(p.Co) * double(cg) + positions * double(p.C) * 4.0;
  use.work_what = "N*Ho*Wo*kh*kw*(Co*C/G + 4*C)";
  enforce_resource_limits(op, use);
  return p;
}

namespace {
const OpRegistrar kDeformConv2d{
    "deform_conv2d",
    {"deform_conv2d", 0,
     {{"input", true, true}, {"offset", true, true, true}, {"weight", true, true}, {"mask", false, true}, {"bias", false, true}},
     typed_parser(parse_deform_conv2d)}};
}  // namespace

}  // namespace oplab
