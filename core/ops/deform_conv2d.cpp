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
  if (p.Co % p.G != 0)
    fail(op, "weight groups G=" + std::to_string(p.G) + " do not divide output channels " + std::to_string(p.Co));
  const int64_t K = p.kh * p.kw;
  if (off.dim(1) == 0 || off.dim(1) % (2 * K) != 0)
    fail(op, "offset.shape[1]=" + std::to_string(off.dim(1)) + " is not a positive multiple of 2*kh*kw=" + std::to_string(2 * K));
  p.D = off.dim(1) / (2 * K);
  if (p.C % p.D != 0)
    fail(op, "offset groups D=" + std::to_string(p.D) + " do not divide input channels C=" + std::to_string(p.C));

  // C++ integer division truncates toward zero: H + 2p a little short of the dilated
  // kernel still gives Ho = 1 when the stride exceeds the deficit (SPEC §8).
  p.Ho = (p.H + 2 * p.ph - (p.dh * (p.kh - 1) + 1)) / p.sh + 1;
  p.Wo = (p.W + 2 * p.pw - (p.dw * (p.kw - 1) + 1)) / p.sw + 1;
  if (p.Ho <= 0 || p.Wo <= 0)
    fail(op, "output size Ho=" + std::to_string(p.Ho) + ", Wo=" + std::to_string(p.Wo) + " must be positive (input " +
                 shape_str(x.shape) + ", kernel " + std::to_string(p.kh) + "x" + std::to_string(p.kw) + ")");

  const Shape off_want{p.N, 2 * p.D * K, p.Ho, p.Wo};
  if (off.shape != off_want) fail(op, "offset shape " + shape_str(off.shape) + " must be " + shape_str(off_want));
  if (const Tensor* m = c.opt("mask")) {
    const Shape want{p.N, p.D * K, p.Ho, p.Wo};
    if (m->shape != want) fail(op, "mask shape " + shape_str(m->shape) + " must be " + shape_str(want));
    p.has_mask = true;
  }
  if (const Tensor* b = c.opt("bias")) {
    if (b->shape != Shape{p.Co}) fail(op, "bias shape " + shape_str(b->shape) + " must be [" + std::to_string(p.Co) + "]");
    p.has_bias = true;
  }
  // The unfolded columns [C*kh*kw, Ho*Wo] are what a kernel indexes at most.
  check_elements(op, "column buffer", {p.C * K, p.Ho * p.Wo});
  check_grad_output(c, p.output_shape());
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
