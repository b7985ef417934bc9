// deform_conv2d cases: groups and offset groups, stride/padding/dilation, kernels 1-5,
// optional mask and bias, odd and prime image sizes, and offsets that put samples exactly on
// the bilinear cut-offs (-1, 0, H-1, H), on lattice points, a hair either side, far outside.
#include "fuzz/generators.h"
#include "fuzz/gen_values.h"

namespace oplab::fuzz {

namespace {

// Offset so that the sample lands on an edge-aimed coordinate, or a plain offset.
double pick_offset(double base, int64_t len) {
  switch (pick_one<int>({{2, 0}, {4, 1}, {4, 2}})) {
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
    const int64_t N = pick_one<int64_t>({{8, 1}, {3, 2}, {1, 0}});
    const int64_t G = pick_dim(1, 2), D = pick_dim(1, 2);
    const int64_t C = (G == D ? G : G * D) * pick_dim(1, 2);
    const int64_t Co = G * pick_dim(1, 2);
    // Kernels 1-3, sometimes 4 or 5 (the sizes where the study variants shift, SPEC §2).
    auto kernel = [] { return pick_one<int>({{8, 0}, {1, 1}}) ? pick_of<int64_t>({4, 5}) : pick_dim(1, 3); };
    const int64_t kh = kernel(), kw = kernel();
    const int64_t sh = pick_dim(1, 2), sw = pick_dim(1, 2);
    const int64_t dh = pick_dim(1, 2), dw = pick_dim(1, 2);
    const int64_t H = pick_extent(1, 6), W = pick_extent(1, 6);
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
    // One pick of its own (see pick_tensor): a smaller shape then leaves later picks alone.
    c.inputs["offset"] = *rc::gen::exec([=] {
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
      return off;
    });
    if (*rc::gen::arbitrary<bool>()) c.inputs["mask"] = pick_tensor({N, D * K, Ho, Wo});
    if (*rc::gen::arbitrary<bool>()) c.inputs["bias"] = pick_tensor({Co});
    c.grad_output = pick_tensor({N, Co, Ho, Wo});
    return c;
  });
}

}  // namespace oplab::fuzz
