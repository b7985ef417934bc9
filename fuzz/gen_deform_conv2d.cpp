// deform_conv2d cases: groups and offset groups, stride/padding/dilation, optional mask and
// bias, and offsets that put samples exactly on the bilinear cut-offs (-1, 0, H-1, H).
#include "fuzz/generators.h"
#include "fuzz/gen_values.h"

namespace oplab::fuzz {

namespace {

// Offset so that the sample lands on an edge-aimed coordinate, or a plain offset.
double pick_offset(double base, int64_t len) {
  switch (*rc::gen::weightedElement<int>({{2, 0}, {4, 1}, {4, 2}})) {
    case 0: return 0.0;
    case 1: return pick_real(3.0);
    default: return pick_coord(len) - base;
  }
}

}  // namespace

rc::Gen<Case> gen_deform_conv2d() {
  return rc::gen::exec([] {
    Case c;
    c.op = "deform_conv2d";
    const int64_t N = *rc::gen::weightedElement<int64_t>({{1, 0}, {8, 1}, {3, 2}});
    const int64_t G = pick_dim(1, 2), D = pick_dim(1, 2);
    const int64_t C = (G == D ? G : G * D) * pick_dim(1, 2);
    const int64_t Co = G * pick_dim(1, 2);
    const int64_t kh = pick_dim(1, 3), kw = pick_dim(1, 3);
    const int64_t sh = pick_dim(1, 2), sw = pick_dim(1, 2);
    const int64_t dh = pick_dim(1, 2), dw = pick_dim(1, 2);
    const int64_t H = pick_dim(1, 6), W = pick_dim(1, 6);
    int64_t ph = pick_dim(0, 2), pw = pick_dim(0, 2);
    // Grow the padding until the output is non-empty (Ho uses truncating division).
    auto out_len = [](int64_t in, int64_t p, int64_t d, int64_t k, int64_t s) { return (in + 2 * p - (d * (k - 1) + 1)) / s + 1; };
    while (out_len(H, ph, dh, kh, sh) <= 0) ++ph;
    while (out_len(W, pw, dw, kw, sw) <= 0) ++pw;
    const int64_t Ho = out_len(H, ph, dh, kh, sh), Wo = out_len(W, pw, dw, kw, sw);
    const int64_t K = kh * kw;

    c.params = json{{"stride", {sh, sw}}, {"padding", {ph, pw}}, {"dilation", {dh, dw}}};
    c.inputs["input"] = pick_tensor({N, C, H, W});
    c.inputs["weight"] = pick_tensor({Co, C / G, kh, kw});
    Tensor off({N, 2 * D * K, Ho, Wo});
    for (int64_t n = 0; n < N; ++n)
      for (int64_t d = 0; d < D; ++d)
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j)
            for (int64_t oy = 0; oy < Ho; ++oy)
              for (int64_t ox = 0; ox < Wo; ++ox) {
                const int64_t k = i * kw + j;
                off.at(n, 2 * (d * K + k), oy, ox) = pick_offset(double(oy * sh - ph + i * dh), H);
                off.at(n, 2 * (d * K + k) + 1, oy, ox) = pick_offset(double(ox * sw - pw + j * dw), W);
              }
    c.inputs["offset"] = std::move(off);
    if (*rc::gen::arbitrary<bool>()) c.inputs["mask"] = pick_tensor({N, D * K, Ho, Wo});
    if (*rc::gen::arbitrary<bool>()) c.inputs["bias"] = pick_tensor({Co});
    c.grad_output = pick_tensor({N, Co, Ho, Wo});
    return c;
  });
}

}  // namespace oplab::fuzz
