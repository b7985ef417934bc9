#pragma once
// A plain grouped 2-D convolution (cross-correlation, as torch.nn.functional.conv2d) with
// zero padding, stride and dilation, forward and backward, written from its definition:
//   out[n,o,oy,ox] = bias[o] + sum_{c in group(o), i, j} W[o, c - c0, i, j] * X[n, c, oy*sh - ph + i*dh, ox*sw - pw + j*dw]
// with X = 0 outside the image. It shares no code with the deform_conv2d reference, so that
// deform_conv2d with zero offsets and mask 1 can be checked against it (dcn-zero-offset-conv).
#include "core/tensor.h"

namespace oplab::fuzz {

struct Conv2dGeometry {
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t groups = 1;
  int64_t Ho = 0, Wo = 0;  // taken from the case (deform_conv2d's offset), not recomputed
};

Tensor conv2d_forward(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dGeometry& g);

struct Conv2dGrads {
  Tensor input, weight, bias;
};
Conv2dGrads conv2d_backward(const Tensor& x, const Tensor& w, const Tensor& grad_output, const Conv2dGeometry& g);

}  // namespace oplab::fuzz
