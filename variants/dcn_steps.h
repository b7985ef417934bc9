#pragma once
// Two steps both DCN study variants take literally, as their PyTorch/ONNX graphs do: zero
// padding of the input, and the final Conv with kernel = stride = (kh, kw) over the
// materialised [N, C, Ho*kh, Wo*kw] tensor of sampled values (grouped, then the bias). Written
// once here so that the variants differ only where their seeds differ (coordinates, clamping).
#include "core/params.h"

namespace oplab::dcn_steps {

// X [N, C, H, W] with ph zero rows above and below and pw zero columns either side.
inline Tensor zero_pad(const Tensor& X, int64_t ph, int64_t pw) {
  const int64_t N = X.dim(0), C = X.dim(1), H = X.dim(2), W = X.dim(3);
  Tensor Xp({N, C, H + 2 * ph, W + 2 * pw});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x) Xp.at(n, ch, y + ph, x + pw) = X.at(n, ch, y, x);
  return Xp;
}

// out[n, o, oy, ox] = bias[o] + Σ_{cg, i, j} W[o, cg, i, j] * T[n, c0 + cg, oy*kh + i, ox*kw + j],
// with c0 the first input channel of o's weight group; summed in that order.
inline Tensor strided_conv(const DeformConvParams& p, const Tensor& T, const Tensor& Wt, const Tensor* bias) {
  const int64_t Cg = p.C / p.G, Cog = p.Co / p.G;
  Tensor out(p.output_shape());
  for (int64_t n = 0; n < p.N; ++n)
    for (int64_t o = 0; o < p.Co; ++o) {
      const int64_t c0 = (o / Cog) * Cg;
      for (int64_t oy = 0; oy < p.Ho; ++oy)
        for (int64_t ox = 0; ox < p.Wo; ++ox) {
          double acc = 0.0;
          for (int64_t cg = 0; cg < Cg; ++cg)
            for (int64_t i = 0; i < p.kh; ++i)
              for (int64_t j = 0; j < p.kw; ++j) acc += Wt.at(o, cg, i, j) * T.at(n, c0 + cg, oy * p.kh + i, ox * p.kw + j);
          out.at(n, o, oy, ox) = bias ? acc + bias->data[size_t(o)] : acc;
        }
    }
  return out;
}

}  // namespace oplab::dcn_steps
