#include "fuzz/conv2d_direct.h"

namespace oplab::fuzz {

namespace {

// Calls visit(n, o, oy, ox, c, i, j, yy, xx) for every term whose input pixel is in the image.
template <class Visit>
void for_each_term(const Tensor& x, const Tensor& w, const Conv2dGeometry& g, Visit visit) {
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t Co = w.dim(0), Cg = w.dim(1), kh = w.dim(2), kw = w.dim(3);
  const int64_t Cog = g.groups > 0 ? Co / g.groups : 0;
  (void)C;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < Co; ++o) {
      const int64_t c0 = (o / Cog) * Cg;
      for (int64_t oy = 0; oy < g.Ho; ++oy)
        for (int64_t ox = 0; ox < g.Wo; ++ox)
          for (int64_t l = 0; l < Cg; ++l)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t yy = oy * g.sh - g.ph + i * g.dh, xx = ox * g.sw - g.pw + j * g.dw;
                if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;  // zero padding
                visit(n, o, oy, ox, c0 + l, l, i, j, yy, xx);
              }
    }
}

}  // namespace

Tensor conv2d_forward(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv2dGeometry& g) {
  Tensor out({x.dim(0), w.dim(0), g.Ho, g.Wo});
  if (bias)
    for (int64_t n = 0; n < out.dim(0); ++n)
      for (int64_t o = 0; o < out.dim(1); ++o)
        for (int64_t oy = 0; oy < g.Ho; ++oy)
          for (int64_t ox = 0; ox < g.Wo; ++ox) out.at(n, o, oy, ox) = bias->data[size_t(o)];
  for_each_term(x, w, g, [&](int64_t n, int64_t o, int64_t oy, int64_t ox, int64_t c, int64_t l, int64_t i, int64_t j,
                             int64_t yy, int64_t xx) { out.at(n, o, oy, ox) += w.at(o, l, i, j) * x.at(n, c, yy, xx); });
  return out;
}

Conv2dGrads conv2d_backward(const Tensor& x, const Tensor& w, const Tensor& grad_output, const Conv2dGeometry& g) {
  Conv2dGrads r{Tensor(x.shape), Tensor(w.shape), Tensor({w.dim(0)})};
  for_each_term(x, w, g, [&](int64_t n, int64_t o, int64_t oy, int64_t ox, int64_t c, int64_t l, int64_t i, int64_t j,
                             int64_t yy, int64_t xx) {
    const double go = grad_output.at(n, o, oy, ox);
    r.input.at(n, c, yy, xx) += w.at(o, l, i, j) * go;
    r.weight.at(o, l, i, j) += x.at(n, c, yy, xx) * go;
  });
  for (int64_t n = 0; n < grad_output.dim(0); ++n)
    for (int64_t o = 0; o < grad_output.dim(1); ++o)
      for (int64_t oy = 0; oy < g.Ho; ++oy)
        for (int64_t ox = 0; ox < g.Wo; ++ox) r.bias.data[size_t(o)] += grad_output.at(n, o, oy, ox);
  return r;
}

}  // namespace oplab::fuzz
